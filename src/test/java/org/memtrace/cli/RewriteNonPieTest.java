package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSegment;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * {@code memtrace run --mode rewrite} on position-dependent executables whose trampolines do not fit below
 * their code, so they go above it, out of the brk heap's way (docs/rewriting.md, "Placement within ±2 GB"):
 * a small program linked at 0x10000 records exactly its loads and stores, and the system's python3
 * (non-PIE at 0x400000, about 24 MB of trampolines) runs rewritten with its native output.
 */
class RewriteNonPieTest {
    @TempDir Path dir;

    @Test
    void anExecutableLinkedTooLowForItsTrampolinesRecordsEveryAccess() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_nonpie.c", "low", "-O1", "-no-pie", "-Wl,-Ttext-segment=0x10000");
        ElfFile elf = ElfFile.read(prog);
        Map<String, ElfSymbol> sym = new HashMap<>();
        for (ElfSymbol s : elf.symtab()) sym.put(s.name(), s);
        Path trace = dir.resolve("low.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo("499500\n");
        assertThat(r.stderr()).containsPattern("rewrite: \\d+ memory instructions of .*low rewritten").doesNotContain("cannot rewrite");

        TraceFile t = TraceFile.read(trace);
        List<String> fill = new ArrayList<>(), total = new ArrayList<>();
        for (var l : t.lines())
            if (l.access()) {
                if (inside(sym.get("fill"), l.number(2))) fill.add(l.type() + l.field(0));
                if (inside(sym.get("total"), l.number(2))) total.add(l.type() + l.field(0));
            }
        long cells = sym.get("cells").value();
        List<String> stores = new ArrayList<>(), loads = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            stores.add("S0x" + Long.toHexString(cells + 8L * i));
            loads.add("L0x" + Long.toHexString(cells + 8L * i));
        }
        // then each function's short `ret`, which the int3 fallback traces: one load of the return address, on the stack
        assertThat(fill).as("fill's stores, in order, then its ret").hasSize(stores.size() + 1);
        assertThat(fill.subList(0, stores.size())).as("fill's stores, in order").isEqualTo(stores);
        assertThat(fill.getLast()).as("fill's ret").startsWith("L0x7ff");
        assertThat(total).as("total's loads, in order, then its ret").hasSize(loads.size() + 1);
        assertThat(total.subList(0, loads.size())).as("total's loads, in order").isEqualTo(loads);
        assertThat(total.getLast()).as("total's ret").startsWith("L0x7ff");

        // the trampolines lie above the program's last segment (its bss, where brk starts), within 2 GB of its first byte
        long end = elf.loadSegments().stream().mapToLong(s -> s.vaddr() + s.memSize()).max().orElseThrow();
        Path trampolines = t.comments().stream().filter(c -> c.startsWith("module ") && c.contains("/rewrite/") && c.contains(".elf "))
                .map(c -> Path.of(c.split(" ")[1])).findFirst().orElseThrow();
        long text = ElfFile.read(trampolines).loadSegments().stream().mapToLong(ElfSegment::vaddr).min().orElseThrow();
        assertThat(text).isGreaterThan(end + (1L << 30)).isLessThan(0x10000 + 0x80000000L);
    }

    @Test
    void theSystemsPython3RunsRewrittenWithItsNativeOutput() throws Exception {
        Path python = Path.of("/usr/bin/python3");
        List<String> args = List.of(python.toString(), "-c", "print(sum(range(1000)))");
        String nativeOut = Gcc.run(args);
        List<String> command = new ArrayList<>(List.of("run", "--mode", "rewrite", "-o", "/dev/null", "--"));
        command.addAll(args);
        var r = Cli.run(dir, command.toArray(String[]::new));
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(nativeOut).isEqualTo("499500\n");
        assertThat(r.stderr()).containsPattern("rewrite: [1-9]\\d* memory instructions of " + python + " rewritten")
                .doesNotContain("cannot rewrite").doesNotContain("no room");
    }

    @Test
    void anExecutableWhoseSegmentsSpanNearly2GbIsRefusedInOneLine() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_huge_bss.c", "huge", "-O1", "-no-pie", "-mcmodel=medium", "-Wl,-Ttext-segment=0x10000");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "-o", dir.resolve("h.trace").toString(), "--", prog.toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).isEqualTo("memtrace: cannot rewrite " + prog + ": " + prog
                + ": its trampolines (up to 1 MB) fit neither below its code nor above it within 2 GB\n");
    }

    private static boolean inside(ElfSymbol f, long ip) {
        return Long.compareUnsigned(ip, f.value()) >= 0 && Long.compareUnsigned(ip, f.value() + f.size()) < 0;
    }
}
