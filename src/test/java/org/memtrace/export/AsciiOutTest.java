package org.memtrace.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The hand-written number formatting against the JDK's, on every digit count and bit length. */
class AsciiOutTest {
    @Test
    void decimalAndHexadecimalAgreeWithTheJdk() throws Exception {
        List<Long> values = new ArrayList<>(List.of(0L, 1L, 9L, 10L, 99L, 100L, (long) Integer.MAX_VALUE,
                Integer.MAX_VALUE + 1L, Long.MAX_VALUE, Long.MIN_VALUE, -1L, -10L));
        for (long p = 1; p > 0 && p <= Long.MAX_VALUE / 10; p *= 10) values.addAll(List.of(p - 1, p, p + 1));
        SplittableRandom random = new SplittableRandom(9);
        for (int i = 0; i < 10_000; i++) values.add(random.nextLong() >>> random.nextInt(64));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        StringBuilder expected = new StringBuilder();
        try (AsciiOut out = new AsciiOut(bytes)) {
            for (long v : values) {
                out.dec(v).put(' ').unsignedDec(v).put(' ').hex(v, 8).put('\n');
                expected.append(v).append(' ').append(Long.toUnsignedString(v)).append(' ')
                        .append(String.format("%08x", v)).append('\n');
            }
        }
        assertThat(bytes.toString(StandardCharsets.US_ASCII)).isEqualTo(expected.toString());
    }

    /**
     * Buffers are written on another thread: every byte arrives, in order, across many buffer hand-overs, and a
     * write that fails there reaches the writing thread as the same IOException, at the next hand-over or at
     * close, with nothing written after it.
     */
    @Test
    void buffersWrittenElsewhereArriveInOrderAndAFailureComesBack() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        StringBuilder expected = new StringBuilder();
        try (AsciiOut out = new AsciiOut(bytes)) {
            for (long i = 0; i < 400_000; i++) {
                out.dec(i).put('\n');
                expected.append(i).append('\n');
            }
        }
        assertThat(bytes.toString(StandardCharsets.US_ASCII)).isEqualTo(expected.toString());

        List<Integer> written = new ArrayList<>();
        OutputStream full = new OutputStream() {
            @Override public void write(int b) { throw new AssertionError("not used"); }
            @Override public void write(byte[] b, int off, int len) throws IOException {
                if (written.size() == 2) throw new IOException("No space left on device");
                written.add(len);
            }
        };
        AsciiOut out = new AsciiOut(full);
        assertThatThrownBy(() -> {
            for (long i = 0; i < 10_000_000; i++) out.dec(i).put('\n');
            out.close();
        }).isInstanceOf(IOException.class).hasMessage("No space left on device");
        // a buffer goes when the next number would not fit: a few bytes short of 1 MiB
        assertThat(written).hasSize(2).allSatisfy(n -> assertThat(n).isBetween((1 << 20) - 8, 1 << 20));
    }
}
