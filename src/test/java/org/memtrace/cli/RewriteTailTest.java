package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.rewrite.Decision;
import org.memtrace.rewrite.PatchPlanner;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;
import org.memtrace.x86.Decoder;

/**
 * Trampoline tails (docs/rewriting.md, "Trampoline tails") on rewrite_tail.s: a patched long instruction
 * followed by a {@code pop; ret} that the int3 fallback took (the pop is also a branch target). Falling through
 * from the patched one takes no trap, jumping in at the pop takes one (its own trampoline's tail runs the
 * {@code ret}), and both record exactly the accesses they make, also while a 20 µs timer's handler, which
 * records a store of its own, interrupts the tails. And on rewrite_tail_branch.s, a run ending in a conditional
 * jump whose tail copies the trapped load where the jump falls through.
 */
class RewriteTailTest {
    @TempDir Path dir;
    private Path prog;
    private final Map<String, Long> at = new HashMap<>();

    @BeforeEach
    void build() throws Exception {
        prog = Gcc.compile(dir, "rewrite_tail.s", "tail", "-pie");
        for (ElfSymbol s : ElfFile.read(prog).symtab()) at.put(s.name(), s.value());
    }

    @Test
    void aPatchedInstructionsTrampolineRunsTheTrappedOnesAfterIt() throws Exception {
        Map<Long, Decision> decided = new HashMap<>();
        for (Decision d : new PatchPlanner(new Decoder()).plan(ElfFile.read(prog))) decided.put(d.instruction().address(), d);
        Decision.Patch add = (Decision.Patch) decided.get(at.get("at_add"));
        assertThat(add.parts()).hasSize(1);
        assertThat(add.tail()).extracting(p -> p.instruction().address()).containsExactly(at.get("at_pop"), at.get("at_ret"));
        assertThat(add.end()).as("the jump still covers the add alone").isEqualTo(at.get("at_pop"));
        Decision.Trapped pop = (Decision.Trapped) decided.get(at.get("at_pop"));
        assertThat(pop.patch().tail()).extracting(p -> p.instruction().address()).containsExactly(at.get("at_ret"));
        assertThat(((Decision.Trapped) decided.get(at.get("at_ret"))).patch().tail()).as("nothing falls through a ret").isEmpty();
        assertThat(((Decision.Patch) decided.get(at.get("at_add2"))).tail()).as("a direct jump follows: no trap to save").isEmpty();
        assertThat(((Decision.Patch) decided.get(at.get("tick"))).tail()).extracting(p -> p.instruction().mnemonic()).containsExactly("ret");
    }

    @Test
    void fallingThroughTakesNoTrapAndJumpingInOne() throws Exception {
        long none = traps(run("none", "x", "x", "x").stderr());
        var fall = run("fall");
        var jump = run("jump", "x");
        // within a few: a punned jump whose stub page falls in the brk reserve or on another mapping keeps its
        // int3 (docs/rewriting.md, "Punned jumps"), and where those lie changes with each run's address layout
        assertThat(traps(fall.stderr())).as("1,000 calls falling through from the patched add").isBetween(none - 5, none + 5);
        // jumping in at the pop took one trap each before punned jumps; the pop is punned now (pop, then ret and
        // padding as its rel32: a window above the PIE's code), so none
        assertThat(traps(jump.stderr())).as("1,000 calls jumping in at the punned pop").isBetween(none - 5, none + 5);

        long bias = bias(dir.resolve("fall.trace"));
        Map<Long, List<String>> byIp = byIp(dir.resolve("fall.trace"), bias);
        String counter = "0x" + Long.toHexString(at.get("counter") + bias);
        String slot = byIp.get(at.get("bump")).getFirst().substring(1); // push %r12's slot: the pop's
        assertThat(slot).startsWith("0x7ff");
        assertThat(byIp.get(at.get("bump"))).containsExactlyElementsOf(Collections.nCopies(1000, "S" + slot));
        assertThat(byIp.get(at.get("at_add"))).containsExactlyElementsOf(repeat(1000, "L" + counter, "S" + counter));
        assertThat(byIp.get(at.get("at_pop"))).containsExactlyElementsOf(Collections.nCopies(1000, "L" + slot));
        String ret = byIp.get(at.get("at_ret")).getFirst().substring(1); // the return address, 8 above
        assertThat(Long.decode(ret) - Long.decode(slot)).isEqualTo(8);
        assertThat(byIp.get(at.get("at_ret"))).containsExactlyElementsOf(Collections.nCopies(1000, "L" + ret));

        byIp = byIp(dir.resolve("jump.trace"), bias = bias(dir.resolve("jump.trace")));
        counter = "0x" + Long.toHexString(at.get("counter") + bias);
        slot = byIp.get(at.get("jump_in")).getFirst().substring(1);
        assertThat(byIp.get(at.get("at_add2"))).containsExactlyElementsOf(repeat(1000, "L" + counter, "S" + counter));
        assertThat(byIp).doesNotContainKey(at.get("at_add"));
        assertThat(byIp.get(at.get("at_pop"))).containsExactlyElementsOf(Collections.nCopies(1000, "L" + slot));
        assertThat(byIp.get(at.get("at_ret"))).hasSize(1000);
    }

    @Test
    void aSignalInsideATailRecordsEveryAccessOnce() throws Exception {
        var r = run("signal", "x", "x");
        Map<Long, List<String>> byIp = byIp(dir.resolve("signal.trace"), bias(dir.resolve("signal.trace")));
        // 300,000 calls falling through and 1,000 jumping in; a pop or add run twice would have made
        // the program's count (or its %r12) wrong, and its exit status 1
        assertThat(byIp.get(at.get("at_add"))).hasSize(2 * 300_000);
        assertThat(byIp.get(at.get("at_pop"))).hasSize(301_000);
        assertThat(byIp.get(at.get("at_ret"))).hasSize(301_000);
        assertThat(byIp.get(at.get("tick"))).as("the handler ran, its store recorded: " + r.stderr()).isNotEmpty();
    }

    @Test
    void aTailGoesOnWhereAConditionalJumpFallsThrough() throws Exception {
        Path branch = Gcc.compile(dir, "rewrite_tail_branch.s", "tail_branch", "-no-pie");
        Map<String, Long> sym = new HashMap<>();
        for (ElfSymbol s : ElfFile.read(branch).symtab()) sym.put(s.name(), s.value());
        long pick = sym.get("pick");
        sym.putAll(Map.of("at_cmp", pick, "at_ja", pick + 3, "at_load", pick + 5, "at_switch", pick + 7));
        Map<Long, Decision> decided = new HashMap<>();
        for (Decision d : new PatchPlanner(new Decoder()).plan(ElfFile.read(branch))) decided.put(d.instruction().address(), d);
        Decision.Patch cmp = (Decision.Patch) decided.get(sym.get("at_cmp"));
        assertThat(cmp.parts()).extracting(p -> p.instruction().address()).containsExactly(sym.get("at_cmp"), sym.get("at_ja"));
        assertThat(cmp.parts().getLast().move()).isEqualTo(Decision.Move.BRANCH);
        assertThat(cmp.tail()).as("the load after the ja, then back to the indirect jump's own jump")
                .extracting(p -> p.instruction().address()).containsExactly(sym.get("at_load"));
        assertThat(cmp.resume()).isEqualTo(sym.get("at_switch"));
        assertThat(decided.get(sym.get("at_load"))).isInstanceOf(Decision.Trapped.class);

        long few = traps(run(branch, "few", "10").stderr());
        var many = run(branch, "many", "1000");
        // within a few: a punned jump's stub page may land on another mapping in one run and not the other
        assertThat(traps(many.stderr())).as("990 more calls falling through the ja take no trap").isBetween(few - 5, few + 5);
        Map<Long, List<String>> byIp = byIp(dir.resolve("many.trace"), 0);
        String selector = "0x" + Long.toHexString(sym.get("selector")), counter = "0x" + Long.toHexString(sym.get("counter"));
        assertThat(byIp.get(sym.get("at_cmp"))).containsExactlyElementsOf(Collections.nCopies(1000, "L" + selector));
        assertThat(byIp.get(sym.get("at_load"))).as("the selectors 0 to 2, the ja not taken").containsExactlyElementsOf(Collections.nCopies(750, "L" + selector));
        List<String> entries = new ArrayList<>();
        for (int i = 0; i < 1000; i++) if (i % 4 != 3) entries.add("L0x" + Long.toHexString(sym.get("table") + 8L * (i % 4)));
        assertThat(byIp.get(sym.get("at_switch"))).containsExactlyElementsOf(entries);
        assertThat(byIp.get(sym.get("at_big"))).as("the ja taken: its own target").containsExactlyElementsOf(repeat(250, "L" + counter, "S" + counter));
    }

    private Cli.Result run(String name, String... args) throws Exception { return run(prog, name, args); }

    private Cli.Result run(Path prog, String name, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("run", "--mode", "rewrite", "--addresses", "raw", "-o",
                dir.resolve(name + ".trace").toString(), "--", prog.toString()));
        cmd.addAll(List.of(args));
        var r = Cli.run(dir, cmd.toArray(String[]::new));
        assertThat(r.status()).as("the calls counted, the timer ticked: " + r.stderr()).isZero();
        return r;
    }

    private static long traps(String stderr) {
        Matcher m = Pattern.compile("int3 fallback: [\\d,]+ accesses recorded in ([\\d,]+) traps").matcher(stderr);
        assertThat(m.find()).as(stderr).isTrue();
        return Long.parseLong(m.group(1).replace(",", ""));
    }

    private long bias(Path trace) throws Exception {
        return TraceFile.read(trace).comments().stream().filter(c -> c.startsWith("module " + prog + " "))
                .map(c -> Long.parseUnsignedLong(c.replaceAll(".* bias=0x([0-9a-f]+) .*", "$1"), 16)).findFirst().orElseThrow();
    }

    /** The program's accesses by link-time instruction address, each "L0x…"/"S0x…", in trace order. */
    private static Map<Long, List<String>> byIp(Path trace, long bias) throws Exception {
        Map<Long, List<String>> byIp = new TreeMap<>();
        for (var l : TraceFile.read(trace).lines())
            if (l.access()) byIp.computeIfAbsent(l.number(2) - bias, k -> new ArrayList<>()).add(l.type() + l.field(0));
        return byIp;
    }

    private static List<String> repeat(int times, String... s) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < times; i++) out.addAll(List.of(s));
        return out;
    }
}
