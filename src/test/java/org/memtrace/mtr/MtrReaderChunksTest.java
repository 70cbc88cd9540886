package org.memtrace.mtr;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.event.Event;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * A cc-built program's trace of many small chunks (the runtime's codec 5), read by the reader: a JVM's
 * first chunks are decompressed without a zstd context and the rest with one (Zstd.contextsPay), by the
 * reader's decoder threads ahead of the reading one, and every store arrives, in order, across all of them;
 * the reader's progress counts the chunks' stored bytes up to the file's total.
 */
class MtrReaderChunksTest {
    @TempDir Path dir;

    @Test
    void everyStoreArrivesAcrossChunksDecompressedWithAndWithoutAContext() throws Exception {
        int n = 20_000;
        Path source = Files.writeString(dir.resolve("fill.c"), """
                long a[%d];
                int main(void) {
                    for (long i = 0; i < %d; i++) a[i] = 3 * i;
                    return a[7] == 21 ? 0 : 1;
                }
                """.formatted(n, n));
        Path program = dir.resolve("fill"), trace = dir.resolve("fill.mtr");
        // -O1: one 8-byte store an iteration (no vectors); no skeleton, so every store is a record
        List<String> cc = new ArrayList<>(Cli.command("cc"));
        cc.addAll(List.of("-O1", "-no-pie", "-o", program.toString(), source.toString()));
        Gcc.run(cc);
        Gcc.run(List.of(program.toString()), Map.of("MEMTRACE_OUT", trace.toString(), "MEMTRACE_BUFFER_KB", "8"));
        long a = ElfFile.read(program).symtab().stream().filter(s -> s.name().equals("a")).mapToLong(ElfSymbol::value)
                .findFirst().orElseThrow();

        List<Long> stores = new ArrayList<>();
        // the progress a reader shows: stored bytes of the chunks begun, rising to the file's total, once per chunk
        List<Long> begun = new ArrayList<>();
        long total, chunkCount;
        MtrReader.Result r;
        try (MtrFile file = MtrFile.open(trace)) {
            assertThat(file.threads().values()).singleElement().satisfies(chunks -> {
                assertThat(chunks).hasSizeGreaterThan(2 * Zstd.FRAMES_WITHOUT_CONTEXT);
                assertThat(chunks).allSatisfy(c -> assertThat(c.codec()).isEqualTo(MtrFile.CODEC_ZSTD_FUSED_OTHER));
            });
            total = file.storedBytes();
            chunkCount = file.chunks();
            r = MtrReader.read(file, e -> { }, (tid, address, site) -> {
                if (site.kind() == Event.ProbeKind.STORE && address >= a && address < a + 8L * n) stores.add(address - a);
            }, begun::add);
        }
        assertThat(begun).hasSize((int) chunkCount).isSorted();
        assertThat(begun.getLast()).isEqualTo(total);
        assertThat(total).isLessThan(Files.size(trace));
        assertThat(r.complete()).as("%s", r.problems()).isTrue();
        List<Long> expected = new ArrayList<>();
        for (long i = 0; i < n; i++) expected.add(8 * i);
        assertThat(stores).isEqualTo(expected);
    }
}
