package org.memtrace.instrument;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Instructions share a probe exactly when their addresses are computable at its start, and keep their records. */
class ProbeGroupsTest {
    @TempDir
    Path dir;

    @Test
    void independentAccessesShareOneProbeAndDependentOnesDoNot() throws Exception {
        List<String> flags = List.of("-O1", "-no-pie");
        Path exe = Instrumented.program(dir, "rw_groups.c", "groups", CcOptions.parse(List.of("--no-stack")), flags);
        String text = Files.readString(dir.resolve("groups.mt.s"));
        assertThat(probes(text, "copy4")).as("copy4: one group").isEqualTo(1);
        assertThat(probes(text, "chase")).as("chase: the second load reads what the first wrote").isEqualTo(2);
        assertThat(text).as("an executable's group probe reads the cursor at its link-time offset")
                .contains("movq %fs:__memtrace_cursor@tpoff, ").contains(".weak __memtrace_cursor");

        Instrumented.Run run = Instrumented.run(exe, Map.of());
        assertThat(run.status()).isEqualTo(42);
        long a = Instrumented.symbol(exe, "a");
        long b = Instrumented.symbol(exe, "b");
        List<Instrumented.Record> copy = Instrumented.in(run.records(), Instrumented.functions(exe).get("copy4"));
        assertThat(copy.stream().map(r -> r.kind() + "@" + Long.toHexString(r.w0())).toList()).containsExactly(
                "1@" + Long.toHexString(b), "2@" + Long.toHexString(a),
                "1@" + Long.toHexString(b + 8), "2@" + Long.toHexString(a + 8),
                "1@" + Long.toHexString(b + 16), "2@" + Long.toHexString(a + 16),
                "1@" + Long.toHexString(b + 24), "2@" + Long.toHexString(a + 24));
        List<Instrumented.Record> chase = Instrumented.in(run.records(), Instrumented.functions(exe).get("chase"));
        assertThat(chase).extracting(Instrumented.Record::kind).containsExactly(Site.LOAD, Site.LOAD);
        assertThat(chase.get(1).w0()).as("the second load reads where the first one's value points")
                .isNotEqualTo(chase.get(0).w0());
    }

    /** Probes (their red-zone steps: 128, or 136 for an executable's group probe) between the function's label and its .size directive. */
    private static int probes(String text, String function) {
        int start = text.indexOf("\n" + function + ":\n");
        int end = text.indexOf(".size\t" + function, start);
        assertThat(start).as(function).isNotNegative();
        String body = text.substring(start, end);
        return body.split("leaq -1(28|36)\\(%rsp\\), %rsp", -1).length - 1;
    }
}
