package org.memtrace.cc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The request's fields as the shell client writes them with printf '%s\0'. */
class CcRequestTest {
    private static byte[] bytes(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    @Test
    void theClientsFieldsParse() {
        CcRequest r = CcRequest.parse(bytes("memtrace-cc-1\0as\0/w d\0002\0A=1\0B=x=y\0003\0/usr/bin/as\0-o\0a b.o\0"));
        assertThat(r).isEqualTo(new CcRequest(CcRequest.Kind.AS, "/w d", Map.of("A", "1", "B", "x=y"), List.of("/usr/bin/as", "-o", "a b.o")));
        assertThat(CcRequest.parse(r.encode())).isEqualTo(r);
        assertThat(CcRequest.parse(bytes("memtrace-cc-1\0ping\0/\0000\0000\0")).kind()).isEqualTo(CcRequest.Kind.PING);
    }

    @Test
    void malformedRequestsAreRefusedWithTheReason() {
        assertThatThrownBy(() -> CcRequest.parse(bytes("memtrace-cc-2\0ping\0/\0000\0000\0"))).hasMessageContaining("not a memtrace-cc-1");
        assertThatThrownBy(() -> CcRequest.parse(bytes("memtrace-cc-1\0ping\0rel\0000\0000\0"))).hasMessageContaining("not absolute");
        assertThatThrownBy(() -> CcRequest.parse(bytes("memtrace-cc-1\0ping\0/\0000\0002\0a\0"))).hasMessageContaining("count does not match");
        assertThatThrownBy(() -> CcRequest.parse(bytes("memtrace-cc-1\0ping\0/\0001\0=x\0000\0"))).hasMessageContaining("without a name");
        assertThatThrownBy(() -> CcRequest.parse(bytes("memtrace-cc-1\0ping\0/\0000\0000"))).hasMessageContaining("NUL-terminated");
        assertThatThrownBy(() -> CcRequest.parse(bytes("memtrace-cc-1\0exec\0/\0000\0000\0"))).hasMessageContaining("unknown request kind");
    }
}
