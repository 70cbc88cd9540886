package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * Rewrite mode runs no writer thread (rt_queue.c): the thread that fills a buffer encodes and writes it at once.
 * Its summary said "program waited for the writer: 0 ms (0 times no buffer was free, of N buffers written)",
 * true of nothing it did; it now says how long the program's threads spent writing their own trace and how many
 * buffers, the numbers of the trace's MT_WRITER record, which the JSON summary carries too.
 */
class RewriteWriterTest {
    @TempDir Path dir;

    /** One million 8-byte stores: 16-byte slots fill 15 MiB buffers and a quarter of the 16th, which exit writes. */
    @Test
    void aRewrittenProgramsSummarySaysItWroteItsOwnTrace() throws Exception {
        Files.writeString(dir.resolve("stores.c"), """
                #include <stdio.h>
                static volatile long sink[1 << 16];
                int main(void)
                {
                    for (long i = 0; i < 1000000; i++) sink[i & 0xffff] = i;
                    puts("done");
                    return 0;
                }
                """);
        Path prog = Gcc.compile(dir, "stores.c", "stores", "-O2");
        Path json = dir.resolve("s.json");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "-o", dir.resolve("t.trace").toString(), "--json-summary", json.toString(),
                "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo("done\n");
        var writer = new ObjectMapper().readTree(json.toFile()).get("writer");
        assertThat(writer.get("buffers").asLong()).as("full buffers handed over before exit").isEqualTo(15);
        assertThat(writer.get("ownBuffers").asLong()).as("each written by the thread that filled it").isEqualTo(15);
        assertThat(writer.get("waits").asLong()).as("no writer to wait for").isZero();
        assertThat(writer.get("waitMs").asLong()).isZero();
        long ms = writer.get("ownMs").asLong();
        assertThat(r.stderr()).contains("\n  program wrote its trace itself: " + ms + " ms encoding and writing 15 buffers in its own threads"
                + " (no writer thread in rewrite mode; the last buffers, written at exit, not counted)\n")
                .doesNotContain("waited for the writer");
    }
}
