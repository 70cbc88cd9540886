package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.format.SiteFormat;
import org.memtrace.rewrite.Decision;
import org.memtrace.rewrite.ModuleRewrite;
import org.memtrace.rewrite.PatchPlanner;
import org.memtrace.rewrite.PlanChoice;
import org.memtrace.rewrite.Selective;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSection;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.FunctionRanges;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.Selections;
import org.memtrace.testutil.TraceFile;
import org.memtrace.x86.Decoder;

/**
 * {@code memtrace run --mode rewrite --omega W} on a plain {@code gcc -O2} program: the instructions the plan
 * records are exactly those {@code memtrace analyze --omega W} selects on the same file (less those
 * the planner leaves, which it counts), with {@code memtrace cc}'s weights and block fields; the trace holds
 * exactly the selected instructions' records (at ω = 1 one instruction per equivalence class, the paper's ω = 1), as many per instruction as a full rewrite records for it; and
 * per function of the program as many as the {@code memtrace cc --omega W --no-stack} build of the same source.
 */
class RewriteOmegaTest {
    private static final List<String> FUNCTIONS = List.of("mix", "chain", "smooth", "main");

    @TempDir Path dir;

    /** What analyze selects: per instruction address its weights {ma, aia} (at ω = 1 one per equivalence class). */
    private Map<Long, int[]> analyzed(Path prog, double omega) throws Exception {
        JsonNode run = Selections.json(dir, "analyze", "--json", "--omega", Double.toString(omega), prog.toString())
                .get("runs").get(0);
        Map<Long, int[]> chosen = new TreeMap<>();
        for (JsonNode s : run.get("selected")) chosen.put(s.get("address").asLong(), new int[] {s.get("ma").asInt(), s.get("aia").asInt()});
        assertThat(chosen).hasSize(run.get("summary").get("selected").asInt());
        return chosen;
    }

    /** The site table entries of a trampoline file. */
    private static List<SiteFormat.Entry> sites(Path trampolines) throws Exception {
        ElfFile elf = ElfFile.read(trampolines);
        ElfSection s = elf.section(SiteFormat.SECTION).orElseThrow();
        ByteBuffer b = ByteBuffer.wrap(elf.contents(s)).order(ByteOrder.LITTLE_ENDIAN);
        List<SiteFormat.Entry> out = new ArrayList<>();
        for (int at = 0; at + SiteFormat.ENTRY_SIZE <= b.limit(); at += SiteFormat.ENTRY_SIZE) out.add(SiteFormat.decode(b, at, s.address()));
        return out;
    }

    /** Records per instruction (link-time address) of {@code module}'s code in a raw trace. */
    private static Map<Long, Integer> perInstruction(Path trace, Path module) throws Exception {
        TraceFile t = TraceFile.read(trace);
        long bias = t.comments().stream().filter(c -> c.startsWith("module " + module + " "))
                .map(c -> Long.parseUnsignedLong(c.replaceAll(".* bias=0x([0-9a-f]+) .*", "$1"), 16)).findFirst().orElseThrow();
        long end = 0;
        for (var seg : ElfFile.read(module).loadSegments()) end = Math.max(end, seg.vaddr() + seg.memSize());
        Map<Long, Integer> counts = new TreeMap<>();
        for (var l : t.lines()) {
            if (!l.access()) continue;
            long ip = l.number(2) - bias;
            if (ip >= 0 && ip < end) counts.merge(ip, 1, Integer::sum);
        }
        return counts;
    }

    @ParameterizedTest
    @ValueSource(doubles = {0.25, 1.0})
    void theSelectionIsAnalyzesAndTheTraceHoldsExactlyItsRecords(double omega) throws Exception {
        Path prog = Gcc.compile(dir, "rw_omega.c", "omega", "-O2");
        Map<Long, int[]> chosen = analyzed(prog, omega);

        // the plan: every selected instruction the planner patched has sites, nothing else has
        Path cache = Files.createDirectory(dir.resolve("cache"));
        ModuleRewrite.Prepared plan = ModuleRewrite.prepare(prog, cache, PlanChoice.selecting(Selective.of(omega)));
        Set<Long> left = new TreeSet<>();
        for (Decision d : new PatchPlanner(new Decoder(), chosen::containsKey, false).plan(ElfFile.read(prog)))
            if (d instanceof Decision.Left l) left.add(l.instruction().address());
        Map<Long, List<SiteFormat.Entry>> byInstruction = new TreeMap<>();
        for (SiteFormat.Entry e : sites(plan.trampolines())) byInstruction.computeIfAbsent(e.insn(), k -> new ArrayList<>()).add(e);
        Set<Long> expected = new TreeSet<>(chosen.keySet());
        expected.removeAll(left);
        assertThat(byInstruction.keySet()).isEqualTo(expected);
        // jumped to or, where no jump fits, trapped (the int3 fallback): every selected instruction the planner did not leave
        assertThat(plan.rewritten() + plan.trapped()).isEqualTo(expected.size());
        assertThat(plan.left()).isEqualTo(left.size());
        Map<String, long[]> functions = FunctionRanges.named(prog, FUNCTIONS);
        for (long a : left)
            assertThat(functions.values()).as("left at 0x%x: outside the program's own functions", a).noneMatch(r -> a >= r[0] && a < r[1]);

        // the weights on each instruction's first site, the block's counts on its first traced instruction's
        int blocks = 0;
        for (var e : byInstruction.entrySet()) {
            SiteFormat.Entry first = e.getValue().getFirst();
            assertThat(new int[] {first.weightMa(), first.weightAia()}).as("0x%x", e.getKey()).isEqualTo(chosen.get(e.getKey()));
            for (SiteFormat.Entry other : e.getValue().subList(1, e.getValue().size()))
                assertThat(other.weightMa() + other.weightAia() + (other.flags() & SiteFormat.FLAG_BLOCK_START)).isZero();
            if ((first.flags() & SiteFormat.FLAG_BLOCK_START) != 0) {
                blocks++;
                assertThat(first.blockMa()).isBetween(1, first.blockRefs());
                assertThat(first.blockAia()).isBetween(first.blockMa(), first.blockRefs());
                if (omega == 1.0) assertThat(first.blockMa()).isEqualTo(first.blockRefs());
            }
        }
        assertThat(blocks).isPositive();

        // the runs: the same output; the selected instructions' records, each as often as in a full rewrite
        Path full = dir.resolve("full.trace"), selected = dir.resolve("selected.trace");
        var f = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-o", full.toString(), "--", prog.toString());
        assertThat(f.status()).as(f.stderr()).isZero();
        var s = Cli.run(dir, "run", "--mode", "rewrite", "--omega", Double.toString(omega), "--addresses", "raw", "-o",
                selected.toString(), "--", prog.toString());
        assertThat(s.status()).as(s.stderr()).isZero();
        assertThat(s.stdout()).isEqualTo(f.stdout()).isEqualTo(Gcc.run(List.of(prog.toString())));
        int references = Selections.json(dir, "analyze", "--json", prog.toString()).get("runs").get(0).get("summary")
                .get("memoryReferences").asInt();
        assertThat(s.stderr()).contains("rewrite: omega " + omega + ": " + chosen.size() + " of " + references
                + " memory references selected; " + plan.rewritten() + " memory instructions of " + prog + " rewritten, " + plan.punned()
                + " by a punned jump, " + (plan.trapped() - plan.punned()) + " through the int3 fallback, " + left.size() + " left untraced");
        assertThat(s.stderr()).containsPattern("accuracy ma +\\d+\\.\\d\\d %").containsPattern("static ma +\\d+\\.\\d\\d %");
        Map<Long, Integer> all = perInstruction(full, prog), some = perInstruction(selected, prog);
        Map<Long, Integer> wanted = new TreeMap<>(all);
        wanted.keySet().retainAll(expected);
        assertThat(some).isEqualTo(wanted);
        assertThat(some.keySet()).as("the program's own loops ran").hasSizeGreaterThan(omega < 1 ? 10 : 40);
        assertThat(some.values().stream().mapToInt(Integer::intValue).sum())
                .isLessThan(all.values().stream().mapToInt(Integer::intValue).sum());
    }

    @Test
    void perFunctionItRecordsWhatTheCcBuildOfTheSameSourceRecords() throws Exception {
        Path prog = Gcc.compile(dir, "rw_omega.c", "omega", "-O2");
        // Gcc.compile left the source in dir
        var build = Cli.run(dir, "cc", "--omega", "0.25", "--no-stack", "-O2", "-o", "built", "rw_omega.c");
        assertThat(build.status()).as(build.stderr()).isZero();
        Path built = dir.resolve("built");
        // the same instructions chosen on both files
        assertThat(Selections.describe(Selections.json(dir, "analyze", "--json", built.toString()).get("runs").get(0), built,
                FUNCTIONS::contains))
                .isEqualTo(Selections.describe(Selections.json(dir, "analyze", "--json", "--omega", "0.25", prog.toString())
                        .get("runs").get(0), prog, FUNCTIONS::contains));

        Path rewritten = dir.resolve("rewritten.trace"), compiled = dir.resolve("cc.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--omega", "0.25", "--addresses", "raw", "-o", rewritten.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        var c = Cli.run(dir, "run", "--addresses", "raw", "-o", compiled.toString(), "--", built.toString());
        assertThat(c.status()).as(c.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(c.stdout());
        Map<String, Integer> byRewrite = perFunction(perInstruction(rewritten, prog), FunctionRanges.named(prog, FUNCTIONS));
        Map<String, Integer> byCc = perFunction(perInstruction(compiled, built), FunctionRanges.named(built, FUNCTIONS));
        assertThat(byRewrite).isEqualTo(byCc);
        assertThat(byRewrite.values()).allMatch(n -> n > 0);
    }

    private static Map<String, Integer> perFunction(Map<Long, Integer> counts, Map<String, long[]> ranges) {
        Map<String, Integer> out = new TreeMap<>();
        for (var e : ranges.entrySet())
            for (var c : counts.entrySet())
                if (c.getKey() >= e.getValue()[0] && c.getKey() < e.getValue()[1]) out.merge(e.getKey(), c.getValue(), Integer::sum);
        return out;
    }

    /**
     * A library opened by dlopen is planned with the same selection: its line says what analyze selects in it,
     * and its loops' accesses are all there but the GOT loads of {@code data}'s address, which are no memory
     * references (RewriteDlopenTest's fixture: fill stores each element, sum loads each, -O1 -fPIC).
     */
    @Test
    void aLibraryOpenedByDlopenIsSelectedToo() throws Exception {
        Path lib = Gcc.compile(dir, "rewrite_dlopen_lib.c", "liba.so", "-O1", "-shared", "-fPIC", "-DTAG=a", "-DSCALE=3");
        Path prog = Gcc.compile(dir, "rewrite_dlopen.c", "opener", "-O1");
        JsonNode run = Selections.json(dir, "analyze", "--json", "--omega", "0.25", lib.toString()).get("runs").get(0).get("summary");
        Path trace = dir.resolve("dlopen.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--omega", "0.25", "-o", trace.toString(), "--", prog.toString(), "3", lib.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).contains("rewrite: omega 0.25: " + run.get("selected").asInt() + " of " + run.get("memoryReferences").asInt()
                + " memory references selected; " + run.get("selected").asInt() + " memory instructions of " + lib + " rewritten, 0 by a punned jump, 0 through the int3 fallback, 0 left untraced"
                + "; opened by dlopen, rewritten at each of its 3 loads");
        Map<String, Long> byFunction = new TreeMap<>();
        for (var l : TraceFile.read(trace).lines())
            if (l.access() && l.field(2).matches("(fill|sum)_a\\+\\d+")) byFunction.merge(l.type() + " " + l.field(2).replaceAll("\\+.*", ""), 1L, Long::sum);
        assertThat(byFunction).isEqualTo(Map.of("S fill_a", 3 * 1000L, "L sum_a", 3 * 2 * 1000L));
    }

    @Test
    void aBadOmegaIsOneLineAndStatus2() throws Exception {
        Path prog = Gcc.compile(dir, "rw_omega.c", "omega", "-O2");
        Map<String, String> cases = new HashMap<>();
        cases.put("-0.5", "memtrace: bad --omega -0.5: omega must be in [0,1]\n");
        cases.put("1.5", "memtrace: bad --omega 1.5: omega must be in [0,1]\n");
        cases.put("lots", "memtrace: bad --omega 'lots': expected a number in [0,1]\n");
        for (var e : cases.entrySet()) {
            var r = Cli.run(dir, "run", "--mode", "rewrite", "--omega", e.getKey(), "--", prog.toString());
            assertThat(r.status()).as(e.getKey()).isEqualTo(2);
            assertThat(r.stderr()).as(e.getKey()).isEqualTo(e.getValue());
        }
        var fault = Cli.run(dir, "run", "--mode", "fault", "--omega", "0.5", "--", prog.toString());
        assertThat(fault.status()).isEqualTo(2);
        assertThat(fault.stderr()).isEqualTo("memtrace: --omega works with --mode rewrite only (a program's own selection: memtrace cc --omega)\n");
        assertThat(new HashSet<>(List.of(Files.list(dir).map(p -> p.getFileName().toString()).toArray(String[]::new))))
                .as("no trace written").doesNotContain("memtrace.out");
    }
}
