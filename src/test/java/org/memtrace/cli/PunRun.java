package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.TraceFile;

/**
 * One {@code run --mode rewrite} of a punned-jump fixture (rewrite_pun*.s), as RewritePunTest,
 * RewritePunFallbackTest and RewritePunBrkTest read it: the summary on standard error, the int3 fallback's
 * traps, and the raw accesses by the link-time address of the executable's instruction that made them
 * ({@code "S0x7ffc…"}, {@code "L0x404040"}).
 */
record PunRun(String stderr, long traps, long bias, Map<Long, List<String>> byIp) {
    /** The executable's symbols by name, at their link-time addresses. */
    static Map<String, Long> symbols(Path prog) throws Exception {
        Map<String, Long> at = new HashMap<>();
        for (ElfSymbol s : ElfFile.read(prog).symtab()) at.put(s.name(), s.value());
        return at;
    }

    /** Runs {@code command} (the fixture and its arguments) rewritten into {@code trace}; its status must be {@code status}. */
    static PunRun of(Path dir, Path prog, Path trace, List<String> command, int status) throws Exception {
        return of(dir, prog, trace, command, status, false);
    }

    /** As {@link #of(Path, Path, Path, List, int)}, the address space not randomized when {@code fixedLayout}. */
    static PunRun of(Path dir, Path prog, Path trace, List<String> command, int status, boolean fixedLayout) throws Exception {
        List<String> args = new ArrayList<>(List.of("run", "--mode", "rewrite", "--addresses", "raw", "-o", trace.toString(), "--"));
        args.addAll(command);
        String[] argv = args.toArray(String[]::new);
        var r = fixedLayout ? Cli.runWithoutAslr(dir, argv) : Cli.run(dir, argv);
        assertThat(r.status()).as(r.stderr()).isEqualTo(status);
        Matcher m = Pattern.compile("int3 fallback: [\\d,]+ accesses recorded in ([\\d,]+) traps").matcher(r.stderr());
        assertThat(m.find()).as(r.stderr()).isTrue();
        long traps = Long.parseLong(m.group(1).replace(",", ""));
        TraceFile read = TraceFile.read(trace);
        long bias = read.comments().stream().filter(c -> c.startsWith("module " + prog + " "))
                .map(c -> Long.parseUnsignedLong(c.replaceAll(".* bias=0x([0-9a-f]+) .*", "$1"), 16)).findFirst().orElseThrow();
        Map<Long, List<String>> byIp = new HashMap<>();
        for (var l : read.lines())
            if (l.access()) byIp.computeIfAbsent(l.number(2) - bias, x -> new ArrayList<>()).add(l.type() + l.field(0));
        return new PunRun(r.stderr(), traps, bias, byIp);
    }

    /** The accesses of the instruction at link-time address {@code ip}, in order. */
    List<String> at(long ip) { return byIp.get(ip); }

    /** A link-time data address where this run put it, as the raw lines spell it. */
    String address(long linkTime) { return "0x" + Long.toHexString(linkTime + bias); }

    /** A read-modify-write of {@code address}, {@code n} times. */
    static List<String> modified(String address, int n) {
        List<String> modify = new ArrayList<>();
        for (int i = 0; i < n; i++) modify.addAll(List.of("L" + address, "S" + address));
        return modify;
    }

    /**
     * The chained fixtures' four puns (rewrite_pun_fallback.s, rewrite_pun_brk.s) and the instruction after
     * at_taken's nopw, exactly, for {@code n} iterations: each push and pop one access of one stack slot, the
     * {@code addq} after at_taken's next instruction a load and a store of cell+8.
     */
    void assertChainedExact(Map<String, Long> at, int n) {
        String slot = at(at.get("at_chained")).getFirst().substring(1);
        assertThat(slot).startsWith("0x7ff");
        for (String push : List.of("at_chained", "at_chained2"))
            assertThat(at(at.get(push))).as(push).containsExactlyElementsOf(Collections.nCopies(n, "S" + slot));
        for (String pop : List.of("at_taken", "at_taken2"))
            assertThat(at(at.get(pop))).as(pop).containsExactlyElementsOf(Collections.nCopies(n, "L" + slot));
        assertThat(at(at.get("at_taken") + 7)).as("the addq $3 after at_taken's next instruction")
                .containsExactlyElementsOf(modified(address(at.get("cell") + 8), n));
    }
}
