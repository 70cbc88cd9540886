package org.memtrace.rewrite;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;
import org.memtrace.x86.Decoder;

/**
 * Probes in dead registers (TrampolineWriter's form that saves nothing, docs/rewriting.md) under signals, in
 * {@code memtrace run}: the fixture's loop instructions are first shown to get that form (the trampoline the
 * writer makes of the planner's patch, in the registers DeadRegisters finds dead, as ModuleRewrite links it),
 * then a 50 us SIGALRM whose handler records accesses of its own interrupts them (rt_probe.c rewinds a probe
 * stopped between its first store and its commit), a second loop is left by siglongjmp from a handler, and a
 * load in that form faults, its SIGSEGV handler leaving by siglongjmp. Every access is recorded once and in
 * program order, the handler's each time it ran, with the output and exit status of a native run.
 */
class RewriteDeadSignalsTest {
    @TempDir Path dir;

    private static final Pattern UNSAVED = Pattern.compile("\tmov %fs:\\(%(\\w+)\\),%\\1\n");

    @Test
    void probesInDeadRegistersAreRewoundUnderSignalsAndLeftBySiglongjmp() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_dead_signals.c", "dead", "-O2", "-no-pie");
        ElfFile elf = ElfFile.read(prog);
        Map<String, Long> at = new HashMap<>();
        for (ElfSymbol s : elf.symtab()) at.put(s.name(), s.value());

        PatchPlanner planner = new PatchPlanner(new Decoder());
        List<Decision> plan = planner.plan(elf);
        DeadRegisters dead = new DeadRegisters(planner.swept());
        for (String label : List.of("pass_load", "pass_store", "spin_load", "spin_store", "poke_load")) {
            Decision.Patch p = plan.stream().filter(d -> d instanceof Decision.Patch).map(d -> (Decision.Patch) d)
                    .filter(d -> d.parts().stream().anyMatch(q -> q.instruction().address() == at.get(label))).findFirst().orElseThrow();
            String asm = TrampolineWriter.assembly(List.of(p), Probes.RECORD, SiteWeights.FULL, StackSlots.NONE, dead);
            assertThat(asm).as(label + "'s trampoline: its probe saves nothing").doesNotContain("lea -128(%rsp)", "push").containsPattern(UNSAVED);
        }

        Process native_ = new ProcessBuilder(prog.toString()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String nativeOut = new String(native_.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(native_.waitFor()).isEqualTo(3);
        assertThat(nativeOut).endsWith(" faults 5 jumps 40\n");

        Path trace = dir.resolve("d.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-q", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isEqualTo(3);
        assertThat(r.stdout()).isEqualTo(nativeOut);
        Matcher m = Pattern.compile("ticks (\\d+) hist (\\d+) spun (\\d+)\n").matcher(r.stderr());
        assertThat(m.find()).as(r.stderr()).isTrue();
        long ticks = Long.parseLong(m.group(1)), spun = Long.parseLong(m.group(3));
        assertThat(Long.parseLong(m.group(2))).isEqualTo(ticks);
        assertThat(ticks).as("the timer interrupted the loop").isGreaterThan(10);

        long data = at.get("data"), bump = at.get("bump"), ticksAt = at.get("ticks"), hist = at.get("hist");
        List<String> pass = new ArrayList<>(), spin = new ArrayList<>(), poke = new ArrayList<>();
        long tickStores = 0, histStores = 0;
        for (var l : TraceFile.read(trace).lines()) {
            if (!l.access()) continue;
            long ip = l.number(2), a = l.number(0);
            if (ip == at.get("pass_load") || ip == at.get("pass_store")) pass.add(l.type() + Long.toString(a - data));
            else if (ip == at.get("spin_load") || ip == at.get("spin_store")) spin.add(l.type() + Long.toString(a - bump));
            else if (ip == at.get("poke_load")) poke.add(l.type() + Long.toString(a));
            if (l.type() == 'S' && a == ticksAt) tickStores++;
            if (l.type() == 'S' && a >= hist && a < hist + 64 * 8) histStores++;
        }
        // the handler's records, once each time it ran
        assertThat(tickStores).isEqualTo(ticks);
        assertThat(histStores).isEqualTo(ticks);
        // pass: 300 passes over data[], a load and a store of each element in turn, nothing lost or repeated
        assertThat(pass).hasSize(2 * 300 * 4096);
        for (int i = 0; i < pass.size(); i++) {
            long element = i / 2 % 4096;
            assertThat(pass.get(i)).as("record %d", i).isEqualTo((i % 2 == 0 ? "L" : "S") + 8 * element);
        }
        // spin: the same round bump[] until the siglongjmp; each store ran adds one to what bump[] sums to,
        // but a store whose probe committed may not have run (the jump came between), then the last record
        for (int i = 0; i < spin.size(); i++) {
            long element = i / 2 % 1024;
            assertThat(spin.get(i)).as("record %d", i).isEqualTo((i % 2 == 0 ? "L" : "S") + 8 * element);
        }
        long stores = spin.stream().filter(s -> s.startsWith("S")).count();
        assertThat(stores).as("the stores that ran, and at most the last one besides").isBetween(spun, spun + 1);
        if (stores == spun + 1) assertThat(spin.getLast()).startsWith("S");
        // poke: each faulting load recorded once, before it faulted
        assertThat(poke).containsExactly("L16", "L24", "L32", "L40", "L48");
    }

    /**
     * The same form next to the int3 fallback (rewrite_dead_int3.c): a load no jump can patch, reached by its
     * int3 (rw_trap.c sends the thread to its trampoline), and a store a jump patches, both probed in dead
     * registers, 40 x 2048 times under a 50 us SIGALRM whose handler records accesses of its own; with
     * {@code --access-stacks} each trampoline's first {@code lea} is armed too, its first entries trapping into
     * rw_arm.c, which emulates it; then another such load faults, 5 times, its SIGSEGV handler leaving by
     * siglongjmp. Every load and store is recorded once and in program order, the handler's each time it ran,
     * with the output and exit status of a native run.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"--no-access-stacks", "--access-stacks"})
    void probesInDeadRegistersNextToTheInt3FallbackUnderSignals(String stacks) throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_dead_int3.c", "dint3", "-O2", "-no-pie");
        ElfFile elf = ElfFile.read(prog);
        Map<String, Long> at = new HashMap<>();
        for (ElfSymbol s : elf.symtab()) at.put(s.name(), s.value());
        PatchPlanner planner = new PatchPlanner(new Decoder());
        List<Decision> plan = planner.plan(elf);
        DeadRegisters dead = new DeadRegisters(planner.swept());
        Decision load = plan.stream().filter(d -> d.instruction().address() == at.get("trap_load")).findFirst().orElseThrow();
        assertThat(load).as("the load: no jump can patch it").isInstanceOf(Decision.Trapped.class);
        Decision poke = plan.stream().filter(d -> d.instruction().address() == at.get("poke_load")).findFirst().orElseThrow();
        assertThat(poke).as("the faulting load: no jump can patch it").isInstanceOf(Decision.Trapped.class);
        Decision.Patch store = plan.stream().filter(d -> d instanceof Decision.Patch).map(d -> (Decision.Patch) d)
                .filter(d -> d.parts().getFirst().instruction().address() == at.get("jump_store")).findFirst().orElseThrow();
        for (Decision.Patch p : List.of(((Decision.Trapped) load).patch(), store, ((Decision.Trapped) poke).patch())) {
            String asm = TrampolineWriter.assembly(List.of(p), Probes.RECORD, SiteWeights.FULL, StackSlots.NONE, dead);
            // up to the instruction's bytes (the store's tail goes on to the ret, whose probe saves what it uses)
            assertThat(asm.substring(0, asm.indexOf("\t.byte"))).as(p.parts().getFirst().instruction() + "'s trampoline: its probe saves nothing")
                    .doesNotContain("lea -128(%rsp)", "push").containsPattern(UNSAVED);
        }

        Process native_ = new ProcessBuilder(prog.toString()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String nativeOut = new String(native_.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(native_.waitFor()).isEqualTo(3);
        assertThat(nativeOut).endsWith(" faults 5\n");

        Path trace = dir.resolve("d.trace");
        List<String> command = new ArrayList<>(List.of("run", "--mode", "rewrite", "--addresses", "raw", "-o", trace.toString()));
        if (stacks.equals("--access-stacks")) command.add(stacks);
        command.addAll(List.of("--", prog.toString()));
        var r = Cli.run(dir, command.toArray(String[]::new));
        assertThat(r.status()).as(r.stderr()).isEqualTo(3);
        assertThat(r.stdout()).isEqualTo(nativeOut);
        // the load went through its int3 each time (no punned jump: its window is the brk heap's room)
        assertThat(r.stderr()).containsPattern("memory instructions of " + Pattern.quote(prog.toString()) + " rewritten, \\d+ by a punned jump, [1-9]\\d* through the int3 fallback");
        Matcher f = Pattern.compile("int3 fallback: ([\\d,]+) accesses recorded in ([\\d,]+) traps").matcher(r.stderr());
        assertThat(f.find()).as(r.stderr()).isTrue();
        assertThat(Long.parseLong(f.group(2).replace(",", ""))).as("traps").isGreaterThanOrEqualTo(40 * 2048);
        Matcher m = Pattern.compile("ticks (\\d+) hist (\\d+)\n").matcher(r.stderr());
        assertThat(m.find()).as(r.stderr()).isTrue();
        long ticks = Long.parseLong(m.group(1));
        assertThat(Long.parseLong(m.group(2))).isEqualTo(ticks);
        assertThat(ticks).as("the timer interrupted the walks").isPositive();

        long data = at.get("data"), ticksAt = at.get("ticks"), hist = at.get("hist");
        List<String> walk = new ArrayList<>(), pokes = new ArrayList<>();
        long tickStores = 0, histStores = 0;
        for (var l : TraceFile.read(trace).lines()) {
            if (!l.access()) continue;
            long ip = l.number(2), a = l.number(0);
            if (ip == at.get("trap_load") || ip == at.get("jump_store")) walk.add(l.type() + Long.toString(a - data));
            else if (ip == at.get("poke_load")) pokes.add(l.type() + Long.toString(a));
            if (l.type() == 'S' && a == ticksAt) tickStores++;
            if (l.type() == 'S' && a >= hist && a < hist + 64 * 8) histStores++;
        }
        assertThat(tickStores).isEqualTo(ticks);
        assertThat(histStores).isEqualTo(ticks);
        assertThat(walk).hasSize(2 * 40 * 2048);
        for (int i = 0; i < walk.size(); i++) {
            long element = i / 2 % 2048;
            assertThat(walk.get(i)).as("record %d", i).isEqualTo((i % 2 == 0 ? "L" : "S") + 8 * element);
        }
        // each faulting load recorded once, before it faulted
        assertThat(pokes).containsExactly("L16", "L24", "L32", "L40", "L48");
    }
}
