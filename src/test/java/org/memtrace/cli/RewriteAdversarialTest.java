package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * Issue 22's adversarial programs under {@code memtrace run --mode rewrite} (docs/rewriting.md, "Adversarial
 * programs"): each prints what it prints natively, and the accesses to its named objects are in the trace
 * exactly. A SIGSEGV handler that faults itself and leaves by siglongjmp, out of the program's and libc's
 * rewritten instructions; C++ exceptions thrown through libc's qsort, std::sort and rethrown; a table in
 * {@code .text} that the sweep must not patch; and a program that reads its own code, which sees the jumps.
 */
class RewriteAdversarialTest {
    @TempDir Path dir;

    /** Runs {@code prog} in rewrite mode: status 0 and the output of a native run; returns the raw trace. */
    private TraceFile rewrite(Path prog, String nativeOut) throws Exception {
        Path trace = dir.resolve(prog.getFileName() + ".trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-q", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).as("output as native").isEqualTo(nativeOut);
        return TraceFile.read(trace);
    }

    private static long symbol(Path prog, String name) throws Exception {
        return ElfFile.read(prog).symtab().stream().filter(s -> s.name().equals(name)).mapToLong(ElfSymbol::value).findFirst().orElseThrow();
    }

    /** The load bias of {@code prog} in {@code t}, from its module line. */
    private static long bias(TraceFile t, Path prog) {
        return t.comments().stream().filter(c -> c.startsWith("module " + prog + " "))
                .map(c -> Long.parseUnsignedLong(c.replaceAll(".* bias=0x([0-9a-f]+) .*", "$1"), 16)).findFirst().orElseThrow();
    }

    private static long count(TraceFile t, char type, long from, long to) {
        return t.lines().stream().filter(l -> l.access() && l.type() == type && l.number(0) >= from && l.number(0) < to).count();
    }

    @Test
    void aHandlerThatFaultsItselfLeavesBySiglongjmpFromTheProgramsAndLibcsRewrittenLoads() throws Exception {
        Path prog = Gcc.compile(dir, "rw_adv_signals.c", "signals", "-O0", "-no-pie");
        String nativeOut = Gcc.run(List.of(prog.toString()));
        assertThat(nativeOut).isEqualTo("hits 110 55 wrong 0\n");
        TraceFile t = rewrite(prog, nativeOut);
        long guard = 0x2a0000000000L, hits = symbol(prog, "hits");
        assertThat(count(t, 'L', guard, guard + 64)).as("each faulting load, recorded before it faulted").isEqualTo(110);
        assertThat(t.lines().stream().filter(l -> l.access() && l.number(0) >= guard && l.number(0) < guard + 64 && l.number(2) < 0x1000000))
                .as("100 of them main's, 10 in libc's memcpy").hasSize(100);
        assertThat(count(t, 'L', guard + 64, guard + 72)).as("the handler's own fault").isEqualTo(55);
        assertThat(count(t, 'S', hits, hits + 8)).isEqualTo(110);
        assertThat(count(t, 'S', hits + 8, hits + 16)).as("the nested handler's").isEqualTo(55);
    }

    @Test
    void exceptionsLeaveQsortsComparatorAndStdSortAndAreRethrown() throws Exception {
        Path source = dir.resolve("rw_adv_throw.cc");
        try (var in = getClass().getResourceAsStream("/c/rw_adv_throw.cc")) {
            Files.copy(in, source);
        }
        Path prog = dir.resolve("throw");
        Gcc.run(List.of("g++", "-O0", "-o", prog.toString(), source.toString()));
        String nativeOut = Gcc.run(List.of(prog.toString()));
        assertThat(nativeOut).isEqualTo("caught 80 destroyed 2578 compares 1958\n");
        TraceFile t = rewrite(prog, nativeOut);
        long destroyed = bias(t, prog) + symbol(prog, "destroyed"), compares = bias(t, prog) + symbol(prog, "compares");
        // every Guard's destructor, on the normal path and in the landing pads the unwinder enters, loads and
        // stores `destroyed` once; printf loads both counters
        assertThat(count(t, 'S', destroyed, destroyed + 8)).isEqualTo(2578);
        assertThat(count(t, 'L', destroyed, destroyed + 8)).isEqualTo(2579);
        assertThat(count(t, 'S', compares, compares + 8)).isEqualTo(1958);
        assertThat(count(t, 'L', compares, compares + 8)).as("++compares, then compares %% N").isEqualTo(2 * 1958 + 1);
    }

    /**
     * A table in {@code .text} (a sized {@code @object} symbol) is skipped by the sweep: the program sums its
     * bytes as natively, and probe_fn right after it is rewritten from its first byte. The same program reads
     * probe_fn's own bytes and sees, as docs/rewriting.md says, the jumps: its two 7-byte memory instructions
     * begin with {@code e9}, the {@code add} between them keeps its bytes, and its {@code ret} (a load of the
     * return address, 1 byte) holds the int3 fallback's {@code cc} or a punned jump's {@code e9}; how many of the
     * 19 bytes differ depends on where the trampolines lie (a rel32 byte may equal the one it replaced).
     */
    @Test
    void aTableInTextIsNotPatchedAndAProgramReadingItsOwnCodeSeesTheJumps() throws Exception {
        Path prog = Gcc.compile(dir, "rw_adv_text.c", "text", "-O0", "-no-pie");
        String nativeOut = Gcc.run(List.of(prog.toString()));
        assertThat(nativeOut).isEqualTo("table 1765\nprobe 42 42\ntext: 0 of 19 bytes differ, first bytes 48 48 48 c3\n");
        Path trace = dir.resolve("text.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-q", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).startsWith("table 1765\nprobe 42 42\n");
        String own = r.stdout().substring("table 1765\nprobe 42 42\n".length());
        assertThat(own).matches("text: (\\d+) of 19 bytes differ, first bytes e9 48 e9 (cc|e9)\n");
        assertThat(Integer.parseInt(own.split(" ")[1])).isBetween(3, 11);

        TraceFile t = TraceFile.read(trace);
        long table = symbol(prog, "table"), cells = symbol(prog, "cells"), probe = symbol(prog, "probe_fn");
        long sumTable = symbol(prog, "sum_table");
        assertThat(t.lines().stream().filter(l -> l.access() && l.number(0) >= table && l.number(0) < table + 24))
                .as("sum_table's loads of each byte").hasSize(24).allMatch(l -> l.type() == 'L' && l.number(2) >= sumTable && l.number(2) < table);
        assertThat(t.lines().stream().filter(l -> l.access() && l.number(2) == probe).map(l -> l.type() + l.field(0)))
                .as("probe_fn's first instruction, right after the table").containsExactly("L0x" + Long.toHexString(cells + 32 * 8));
        assertThat(t.lines().stream().filter(l -> l.access() && l.number(2) == probe + 11).map(l -> l.type() + l.field(0)))
                .containsExactly("S0x" + Long.toHexString(cells + 33 * 8));
        assertThat(count(t, 'L', probe, probe + 19)).as("main reading probe_fn's bytes").isEqualTo(19);
    }
}
