package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.rewrite.Decision;
import org.memtrace.rewrite.PatchPlanner;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.FunctionRanges;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.LackeyLog;
import org.memtrace.testutil.TraceFile;
import org.memtrace.x86.Decoder;

/**
 * {@code memtrace run --mode rewrite} on unmodified programs: the hand-written fixture's rewritten
 * instructions record exactly their accesses and the left ones nothing, as a position-dependent and as a
 * position-independent executable (trampolines linked below address 0, placed at the load bias); plain gcc builds (-O0, -O2) record,
 * per instruction of the program's own functions, the loads and stores Valgrind's Lackey sees, except the
 * instructions the planner left (and says so), with the output and exit status of a native run.
 */
class RewriteRunTest {
    @TempDir Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"-no-pie", "-pie"})
    void theFixtureRecordsExactlyWhatItsRewrittenInstructionsDo(String layout) throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_tactics.s", "tactics", layout);
        Path trace = dir.resolve("t.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).containsPattern("rewrite: \\d+ memory instructions of .*tactics rewritten, \\d+ left untraced \\(.*1 rep string");
        // the program's load bias (0 without PIE), from the trace's module line
        long bias = TraceFile.read(trace).comments().stream().filter(c -> c.startsWith("module " + prog + " "))
                .map(c -> Long.parseUnsignedLong(c.replaceAll(".* bias=0x([0-9a-f]+) .*", "$1"), 16)).findFirst().orElseThrow();
        Map<String, Long> at = new HashMap<>();
        for (ElfSymbol s : ElfFile.read(prog).symtab()) at.put(s.name(), s.value() + bias);

        Map<Long, List<String>> byIp = new TreeMap<>();
        for (var l : TraceFile.read(trace).lines())
            if (l.access()) byIp.computeIfAbsent(l.number(2), k -> new java.util.ArrayList<>()).add(l.type() + l.field(0));
        long counter = at.get("counter");
        assertThat(byIp.get(at.get("at_long"))).hasSize(10).containsOnly("S0x" + Long.toHexString(counter));
        assertThat(byIp.get(at.get("at_short"))).hasSize(10).containsOnly("L0x" + Long.toHexString(counter));
        assertThat(byIp.get(at.get("at_short") + 5)).hasSize(10).containsOnly("S0x" + Long.toHexString(counter + 4));
        assertThat(byIp.get(at.get("helper"))).as("10 direct calls, 1 indirect").hasSize(11).containsOnly("L0x" + Long.toHexString(counter + 8));
        assertThat(byIp.get(at.get("at_call"))).as("the emulated call's push").hasSize(10).allMatch(s -> s.startsWith("S0x7ff"));
        assertThat(byIp.get(at.get("main"))).as("push %%rbp, moved with its successors").hasSize(1);
        for (String left : List.of("at_blocked", "at_icall", "at_rep", "at_fs")) assertThat(byIp).doesNotContainKey(at.get(left));
        long tail = at.get("tail");
        assertThat(byIp.get(tail)).hasSize(1).containsOnly("L0x" + Long.toHexString(counter));
        assertThat(byIp.get(tail + 21)).as("the loop whose jl moved into the trampoline").hasSize(7).containsOnly("L0x" + Long.toHexString(counter));
        assertThat(byIp.get(tail + 30)).as("the ret moved with the instructions before it").hasSize(1);
    }

    @Test
    void signalsInTrampolinesLoseAndRepeatNothingAndAFaultingStoreLeavesBySiglongjmp() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_signals.c", "signals", "-O0", "-no-pie");
        long data = 0;
        for (ElfSymbol s : ElfFile.read(prog).symtab()) if (s.name().equals("data")) data = s.value();
        Path trace = dir.resolve("s.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-q", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).as("the handler left by siglongjmp, the timer ticked").endsWith(" 1 ticked\n");
        long loads = 0, stores = 0, faulted = 0;
        for (var l : TraceFile.read(trace).lines()) {
            if (!l.access()) continue;
            long a = l.number(0);
            if (a >= data && a < data + 4096 * 8) {
                if (l.type() == 'L') loads++;
                else stores++;
            }
            if (a == 16 && l.type() == 'S') faulted++;
        }
        // data[i] = data[i] * 3 + r: one load and one store a pass, 300 x 4096 passes, with the timer's
        // interruptions; and printf's argument data[5]
        assertThat(loads).isEqualTo(300 * 4096 + 1);
        assertThat(stores).isEqualTo(300 * 4096);
        assertThat(faulted).as("the store that faulted was recorded before it ran").isEqualTo(1);
    }

    @Test
    void cxxExceptionsUnwindThroughRewrittenFramesAndEmulatedCalls() throws Exception {
        Path source = dir.resolve("rewrite_exceptions.cc");
        try (var in = getClass().getResourceAsStream("/c/rewrite_exceptions.cc")) {
            java.nio.file.Files.copy(in, source);
        }
        Path prog = dir.resolve("exceptions");
        Gcc.run(List.of("g++", "-O0", "-g", "-no-pie", "-o", prog.toString(), source.toString()));
        long dive = 0, diveEnd = 0;
        for (ElfSymbol s : ElfFile.read(prog).symtab())
            if (s.name().equals("_Z4divei")) {
                dive = s.value();
                diveEnd = s.value() + s.size();
            }
        long recursion = -1;
        for (Decision d : new PatchPlanner(new Decoder()).plan(ElfFile.read(prog)))
            if (d instanceof Decision.Patch p && p.parts().getFirst().call() && p.instruction().branchTarget().orElse(0) == dive
                    && p.instruction().address() > dive && p.instruction().address() < diveEnd) recursion = p.instruction().address();
        assertThat(recursion).as("dive's call of itself is rewritten").isPositive();

        Path trace = dir.resolve("x.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-q", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(Gcc.run(List.of(prog.toString()))).isEqualTo("100 7000\n");
        long pushes = 0;
        for (var l : TraceFile.read(trace).lines()) if (l.access() && l.number(2) == recursion && l.type() == 'S') pushes++;
        assertThat(pushes).as("20 recursive calls a round, 100 rounds").isEqualTo(2000);
    }

    @Test
    void theProgramSeesTheEnvironmentItWouldHaveUntraced() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_env.c", "env", "-O0");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "-q", "-o", dir.resolve("e.trace").toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(Gcc.run(List.of(prog.toString())));
        assertThat(TraceFile.read(dir.resolve("e.trace")).lines()).as("and was rewritten").anyMatch(l -> l.access());
    }

    private static final List<String> FUNCTIONS = List.of("main", "fill", "bump", "total", "build", "walk");

    @ParameterizedTest
    @ValueSource(strings = {"-O0", "-O2"})
    void loadsAndStoresPerRewrittenInstructionAgreeWithLackey(String level) throws Exception {
        Path prog = Gcc.compile(dir, "lackey_cmp.c", "cmp", level, "-g", "-no-pie");
        FunctionRanges ranges = FunctionRanges.of(prog, FUNCTIONS);
        Set<Long> left = new HashSet<>();
        int rewritten = 0;
        for (Decision d : new PatchPlanner(new Decoder()).plan(ElfFile.read(prog))) {
            if (!ranges.contains(d.instruction().address())) continue;
            if (d instanceof Decision.Left l) left.add(l.instruction().address());
            else rewritten++;
        }

        String nativeOut = Gcc.run(List.of(prog.toString()));
        Path trace = dir.resolve("cmp.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-q", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).as("output as native").isEqualTo(nativeOut);
        Map<String, Long> memtrace = new TreeMap<>();
        for (var l : TraceFile.read(trace).lines())
            if (l.access() && ranges.contains(l.number(2))) memtrace.merge(l.type() + Long.toHexString(l.number(2)), 1L, Long::sum);

        Path log = dir.resolve("lackey.log");
        Gcc.run(List.of("valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file=" + log, prog.toString()));
        Map<String, Long> lackey = new TreeMap<>();
        LackeyLog.forEachAccess(log, (ip, kind, address) -> {
            if (ranges.contains(ip)) lackey.merge(kind + Long.toHexString(ip), 1L, Long::sum);
        });

        assertThat(lackey).as("Lackey saw nothing: parsing failed").isNotEmpty();
        long seen = 0, all = 0;
        for (var e : lackey.entrySet()) {
            long ip = Long.parseUnsignedLong(e.getKey().substring(1), 16);
            all += e.getValue();
            if (left.contains(ip)) {
                assertThat(memtrace).as("left instruction %x recorded", ip).doesNotContainKey(e.getKey());
            } else {
                assertThat(memtrace.get(e.getKey())).as("%s: rewritten, so as Lackey", e.getKey()).isEqualTo(e.getValue());
                seen += e.getValue();
            }
        }
        assertThat(memtrace.keySet()).as("nothing Lackey did not see").isSubsetOf(lackey.keySet());
        // what this build of the planner covers (measured: -O0 and -O2 both above 80 % of the accesses)
        assertThat(rewritten).isPositive();
        assertThat(seen).as("accesses traced of %d", all).isGreaterThan(all * 8 / 10);
    }
}
