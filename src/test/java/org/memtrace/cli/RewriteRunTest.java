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
        assertThat(r.stderr()).containsPattern("rewrite: \\d+ memory instructions of .*tactics rewritten, \\d+ by a punned jump, \\d+ through the int3 fallback, 0 left untraced\n");
        // the summary's last line is rewrite mode's, not a memtrace cc build's
        assertThat(r.stderr()).contains("\n  only rewritten code is traced: ld.so's start-up, memtrace's runtime and the modules the rewrite lines name untraced"
                + " are not in the trace\n").doesNotContain("memtrace cc");
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
        assertThat(byIp.get(at.get("at_blocked"))).as("through the int3 fallback").hasSize(10).containsOnly("L0x" + Long.toHexString(counter));
        assertThat(byIp.get(at.get("at_icall") + 7)).as("the emulated indirect call's push").hasSize(1).allMatch(s -> s.startsWith("S0x7ff"));
        // %fs operands: the thread pointer is what the plain load at_tp+15 reads through (%rax = %fs:0)
        long tp = byIp.get(at.get("at_tp") + 15).stream().map(s -> Long.parseUnsignedLong(s.substring(3), 16)).findFirst().orElseThrow();
        assertThat(byIp.get(at.get("at_tp"))).containsExactly("L0x" + Long.toHexString(tp));
        assertThat(byIp.get(at.get("at_tp") + 11)).as("the short %%fs load, moved").containsExactly("L0x" + Long.toHexString(tp));
        assertThat(byIp.get(at.get("at_fs"))).containsExactly("L0x" + Long.toHexString(tp + 0x28));
        // rep strings: one block each, as a memtrace cc build records them
        List<String> blocks = TraceFile.read(trace).lines().stream().filter(l -> l.fields().getLast().startsWith("rep_"))
                .map(l -> l.type() + String.join(",", l.fields())).toList();
        String buf = "0x" + Long.toHexString(at.get("buf")), tid = blocks.getFirst().split(",")[6];
        assertThat(blocks).containsExactly(
                String.join(",", "Y" + buf, "tactics", "0x" + Long.toHexString(at.get("buf") + 8), "tactics", "4",
                        "0x" + Long.toHexString(at.get("at_rep") + 5), tid, "rep_movs"),
                String.join(",", "W" + buf, "tactics", "16", "0x" + Long.toHexString(at.get("at_stos") + 5), tid, "rep_stos"));
        long tail = at.get("tail");
        assertThat(byIp.get(tail)).hasSize(1).containsOnly("L0x" + Long.toHexString(counter));
        assertThat(byIp.get(tail + 21)).as("the loop whose jl moved into the trampoline").hasSize(7).containsOnly("L0x" + Long.toHexString(counter));
        assertThat(byIp.get(tail + 30)).as("the ret moved with the instructions before it").hasSize(1);
    }

    @Test
    void aStrippedExecutablesShortInstructionsMoveWithinItsFdes() throws Exception {
        Map<String, Long> at = new HashMap<>();
        for (ElfSymbol s : ElfFile.read(Gcc.compile(dir, "rewrite_fde.s", "fde", "-no-pie")).symtab()) at.put(s.name(), s.value());
        Path prog = Gcc.compile(dir, "rewrite_fde.s", "fde-stripped", "-no-pie", "-s");
        Path trace = dir.resolve("f.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        Map<Long, List<String>> byIp = new TreeMap<>();
        for (var l : TraceFile.read(trace).lines())
            if (l.access()) byIp.computeIfAbsent(l.number(2), k -> new java.util.ArrayList<>()).add(l.type() + l.field(0));
        String cell = Long.toHexString(at.get("cell"));
        assertThat(byIp.get(at.get("short_run"))).containsExactly("L0x" + cell, "L0x" + cell, "L0x" + cell);
        assertThat(byIp.get(at.get("short_run") + 5)).as("covered by the run").containsOnly("S0x" + Long.toHexString(at.get("cell") + 4)).hasSize(3);
        assertThat(byIp.get(at.get("with_lsda"))).as("a landing pad after it: the int3 fallback").containsOnly("L0x" + cell).hasSize(3);
        assertThat(byIp.get(at.get("with_lsda") + 5)).as("moved with the pad").containsOnly("S0x" + Long.toHexString(at.get("cell") + 4)).hasSize(3);
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

    /** Also an {@code -fcf-protection} build: every function and landing pad begins with {@code endbr64}. */
    @ParameterizedTest
    @ValueSource(strings = {"-O0", "-O2", "-O2 -fcf-protection"})
    void loadsAndStoresPerRewrittenInstructionAgreeWithLackey(String flags) throws Exception {
        List<String> options = new java.util.ArrayList<>(List.of(flags.split(" ")));
        options.addAll(List.of("-g", "-no-pie"));
        Path prog = Gcc.compile(dir, "lackey_cmp.c", "cmp", options.toArray(String[]::new));
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

    /** libc's functions that main's calls run, whose work does not depend on the runtime being there. */
    private static final List<String> LIBC_FUNCTIONS = List.of("__memmove_avx_unaligned_erms", "__strlen_avx2", "__qsort_r",
            "msort_with_tmp.part.0", "printf", "__vfprintf_internal", "__printf_fp_l", "_int_malloc");
    /** The same string functions natively as under Valgrind, which has no AVX-512: glibc's AVX2 variants. */
    private static final String TUNABLES = "glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,-AVX512_VBMI,-AVX512_IFMA";

    /**
     * libc rewritten: per instruction (module + offset) of main and of the libc functions main's calls run
     * (memcpy, strlen, qsort, printf, malloc), the loads and stores equal Lackey's, and the instructions the
     * planner left record nothing. libc's functions are found through its debug file (by build-id); libc
     * code that runs before the runtime's constructor or after its end (start-up, exit handlers), or that
     * the runtime's presence changes (its dlsym calls, stdio's locks once its writer thread exists), is left
     * out by the choice of functions.
     */
    @Test
    void libcIsRewrittenAndItsLoadsAndStoresPerInstructionAgreeWithLackey() throws Exception {
        Path libc = Path.of("/lib/x86_64-linux-gnu/libc.so.6");
        String id = ElfFile.read(libc).buildIdHex().orElseThrow();
        Path debug = Path.of("/usr/lib/debug/.build-id", id.substring(0, 2), id.substring(2) + ".debug");
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isRegularFile(debug), "libc's debug file " + debug);
        Map<String, long[]> functions = FunctionRanges.named(debug, LIBC_FUNCTIONS);
        FunctionRanges libcRanges = new FunctionRanges(List.copyOf(functions.values()));
        long stdoutFile = ElfFile.read(libc).dynsym().stream().filter(x -> x.name().equals("_IO_2_1_stdout_"))
                .findFirst().orElseThrow().value();
        Set<Long> left = new HashSet<>(), exchanges = new HashSet<>();
        for (Decision d : new PatchPlanner(new Decoder()).plan(ElfFile.read(libc))) {
            if (d instanceof Decision.Left l && libcRanges.contains(l.instruction().address())) left.add(l.instruction().address());
            // Valgrind translates xchg with memory as a load and a compare-and-swap, which Lackey logs as a
            // load and a modify: two loads per execution (the stdio lock's release in vfprintf, traced since
            // the int3 fallback takes it)
            if (d.instruction().mnemonic().equals("xchg") && libcRanges.contains(d.instruction().address())) exchanges.add(d.instruction().address());
        }

        Path prog = Gcc.compile(dir, "lackey_libc.c", "libc", "-O2", "-g", "-no-pie");
        FunctionRanges main = FunctionRanges.of(prog, List.of("main"));
        String nativeOut = Gcc.run(List.of(prog.toString()), Map.of("GLIBC_TUNABLES", TUNABLES));
        Path trace = dir.resolve("libc.trace"), bias = dir.resolve("bias.mt"), out = dir.resolve("out"), err = dir.resolve("err");
        var run = new ProcessBuilder(Cli.command("run", "--mode", "rewrite", "--addresses", "raw", "-o", trace.toString(), "--",
                prog.toString())).directory(dir.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile());
        run.environment().putAll(Map.of("GLIBC_TUNABLES", TUNABLES, "LIBC_BIAS_FILE", bias.toString()));
        Process p = run.start();
        assertThat(p.waitFor(300, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        String stderr = java.nio.file.Files.readString(err);
        assertThat(p.exitValue()).as(stderr).isZero();
        assertThat(java.nio.file.Files.readString(out)).as("output as native").isEqualTo(nativeOut);
        assertThat(stderr).containsPattern("rewrite: \\d+ memory instructions of /lib/x86_64-linux-gnu/libc.so.6 rewritten")
                .containsPattern("rewrite: \\d+ memory instructions of /lib64/ld-linux-x86-64.so.2 rewritten")
                .contains("not rewritten: libmemtrace-rt.so (memtrace's runtime); 1 module untraced");
        long memtraceBias = Long.parseUnsignedLong(java.nio.file.Files.readString(bias).strip(), 16) - stdoutFile;
        Map<String, Long> memtrace = new TreeMap<>();
        for (var l : TraceFile.read(trace).lines())
            if (l.access()) {
                String k = key(l.number(2), memtraceBias, main, libcRanges);
                if (k != null) memtrace.merge(l.type() + k, 1L, Long::sum);
            }

        Path log = dir.resolve("lackey.log"), lackeyBias = dir.resolve("bias.lackey");
        Gcc.run(List.of("valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file=" + log, prog.toString()),
                Map.of("GLIBC_TUNABLES", TUNABLES, "LIBC_BIAS_FILE", lackeyBias.toString()));
        long valgrindBias = Long.parseUnsignedLong(java.nio.file.Files.readString(lackeyBias).strip(), 16) - stdoutFile;
        Map<String, Long> lackey = new TreeMap<>();
        LackeyLog.forEachAccess(log, (ip, kind, address) -> {
            String k = key(ip, valgrindBias, main, libcRanges);
            if (k != null) lackey.merge(kind + k, 1L, Long::sum);
        });

        Map<String, Long> seenIn = new TreeMap<>();
        for (var e : lackey.entrySet()) {
            String k = e.getKey();
            long offset = Long.parseUnsignedLong(k.substring(k.indexOf('+') + 1), 16);
            if (k.startsWith(k.charAt(0) + "libc+") && exchanges.contains(offset)) {
                assertThat(memtrace.get(k)).as("%s: xchg, once per execution", k).isEqualTo(e.getValue() / (k.charAt(0) == 'L' ? 2 : 1));
                continue;
            }
            if (k.startsWith(k.charAt(0) + "libc+") && left.contains(offset)) {
                assertThat(memtrace).as("left instruction %s recorded", k).doesNotContainKey(k);
                continue;
            }
            if (k.contains("exe+") && !memtrace.containsKey(k)) continue; // left by the executable's planner: RewriteRunTest above
            assertThat(memtrace.get(k)).as("%s: rewritten, so as Lackey", k).isEqualTo(e.getValue());
            if (k.contains("libc+"))
                for (var f : functions.entrySet())
                    if (offset >= f.getValue()[0] && offset < f.getValue()[1]) seenIn.merge(f.getKey(), e.getValue(), Long::sum);
        }
        assertThat(memtrace.keySet()).as("nothing Lackey did not see").isSubsetOf(lackey.keySet());
        assertThat(seenIn.keySet()).as("accesses traced in each of libc's functions").containsExactlyInAnyOrderElementsOf(LIBC_FUNCTIONS);
    }

    /** "exe+offset" or "libc+offset" (hex) for an instruction of main or of the chosen libc functions, else null. */
    private static String key(long ip, long libcBias, FunctionRanges main, FunctionRanges libc) {
        if (main.contains(ip)) return "exe+" + Long.toHexString(ip);
        if (libc.contains(ip - libcBias)) return "libc+" + Long.toHexString(ip - libcBias);
        return null;
    }
}
