package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
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
 * The int3 fallback of {@code memtrace run --mode rewrite} (docs/rewriting.md, "Fallback"): instructions no
 * jump can patch record exactly what they do (rewrite_int3.s: loads, stores, a push and a pop, a
 * read-modify-write, an emulated indirect call and the {@code ret} it reaches, a rep string instruction), the
 * program's own SIGTRAP handler gets every SIGTRAP that is not the fallback's, libc's short instructions
 * are traced while the program blocks every signal, and the summary counts what the fallback took.
 */
class RewriteInt3Test {
    @TempDir Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"-no-pie", "-pie"})
    void instructionsNoJumpCanPatchRecordExactlyTheirAccesses(String layout) throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_int3.s", "int3", layout);
        Map<String, Long> at = new HashMap<>();
        for (ElfSymbol s : ElfFile.read(prog).symtab()) at.put(s.name(), s.value());
        int trapped = 0;
        for (Decision d : new PatchPlanner(new Decoder()).plan(ElfFile.read(prog))) {
            if (d instanceof Decision.Trapped) trapped++;
            assertThat(d).isNotInstanceOf(Decision.Left.class);
        }
        Map<Long, Decision> decided = new HashMap<>();
        for (Decision d : new PatchPlanner(new Decoder()).plan(ElfFile.read(prog))) decided.put(d.instruction().address(), d);
        for (String label : List.of("at_load", "at_store", "at_push", "at_pop", "at_modify", "at_icall", "at_rep", "leaf"))
            assertThat(decided.get(at.get(label))).as(label).isInstanceOf(Decision.Trapped.class);

        Path trace = dir.resolve("t.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isEqualTo(55); // as natively: every trapped instruction did its work
        // the trapped instructions: punned where a jump's window allows (docs/rewriting.md, "Punned jumps"), else an int3
        Matcher line = Pattern.compile("memory instructions of " + Pattern.quote(prog.toString())
                + " rewritten, (\\d+) by a punned jump, (\\d+) through the int3 fallback, 0 left untraced\n").matcher(r.stderr());
        assertThat(line.find()).as(r.stderr()).isTrue();
        assertThat(Integer.parseInt(line.group(1)) + Integer.parseInt(line.group(2))).isEqualTo(trapped);
        assertThat(r.stderr()).containsPattern("of /lib/x86_64-linux-gnu/libc.so.6 rewritten, \\d+ by a punned jump, \\d+ through the int3 fallback, 0 left untraced\n")
                .containsPattern("int3 fallback: [\\d,]+ accesses recorded in [\\d,]+ traps");
        long bias = TraceFile.read(trace).comments().stream().filter(c -> c.startsWith("module " + prog + " "))
                .map(c -> Long.parseUnsignedLong(c.replaceAll(".* bias=0x([0-9a-f]+) .*", "$1"), 16)).findFirst().orElseThrow();
        at.replaceAll((k, v) -> v + bias);

        Map<Long, List<String>> byIp = new TreeMap<>();
        List<String> blocks = new ArrayList<>();
        for (var l : TraceFile.read(trace).lines()) {
            if (l.access()) byIp.computeIfAbsent(l.number(2), k -> new ArrayList<>()).add(l.type() + l.field(0));
            if (l.fields().getLast().equals("rep_movs")) blocks.add(l.type() + l.field(0) + "," + l.field(2) + "," + l.field(4) + "," + l.field(5));
        }
        String cell = Long.toHexString(at.get("cell")), cell8 = Long.toHexString(at.get("cell") + 8);
        assertThat(byIp.get(at.get("at_load"))).containsExactly(repeat("L0x" + cell));
        assertThat(byIp.get(at.get("at_store"))).containsExactly(repeat("S0x" + cell));
        assertThat(byIp.get(at.get("at_modify"))).as("read and written").containsExactly(repeat("L0x" + cell8, "S0x" + cell8));
        // the stack slots: the push's is the pop's, the emulated call's push is where the leaf's ret loads from
        String slot = byIp.get(at.get("at_push")).getFirst().substring(1);
        assertThat(slot).startsWith("0x7ff");
        assertThat(byIp.get(at.get("at_push"))).containsExactly(repeat("S" + slot));
        assertThat(byIp.get(at.get("at_pop"))).containsExactly(repeat("L" + slot));
        assertThat(byIp.get(at.get("at_icall"))).containsExactly(repeat("S" + slot));
        assertThat(byIp.get(at.get("leaf"))).containsExactly(repeat("L" + slot));
        assertThat(blocks).as("rep movsb: one block copy each time").containsExactlyElementsOf(java.util.Collections.nCopies(10,
                "Y0x" + Long.toHexString(at.get("cell") + 16) + ",0x" + cell8 + ",4,0x" + Long.toHexString(at.get("at_rep"))));
    }

    /** Ten times the sequence {@code s}: main's loop runs ten times. */
    private static String[] repeat(String... s) {
        String[] out = new String[10 * s.length];
        for (int i = 0; i < out.length; i++) out[i] = s[i % s.length];
        return out;
    }

    @Test
    void theProgramKeepsItsSigtrapHandlerAndLibcIsTracedWhileEverySignalIsBlocked() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_sigtrap.c", "sigtrap", "-O1");
        String nativeOut = Gcc.run(List.of(prog.toString()));
        assertThat(nativeOut).startsWith("4 caught, 1 from int3, 1197 formatted, last 703|2.714 |str|0x12ed|t|");
        Path trace = dir.resolve("s.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).as("its handler got the 3 raised and its own int3; printf as native").isEqualTo(nativeOut);
        Matcher m = Pattern.compile("int3 fallback: ([\\d,]+) accesses recorded in ([\\d,]+) traps").matcher(r.stderr());
        assertThat(m.find()).as(r.stderr()).isTrue();
        long accesses = Long.parseLong(m.group(1).replace(",", "")), traps = Long.parseLong(m.group(2).replace(",", ""));
        // fewer since punned jumps (docs/rewriting.md, "Punned jumps") take most of libc's without a trap; how many
        // the agent can write depends on where the run's mappings fall (827 and 163 traps seen), so only that
        // traps were taken with every signal blocked
        assertThat(traps).as("snprintf's short instructions, 20 calls").isPositive();
        assertThat(accesses).isGreaterThanOrEqualTo(traps);

        // libc's instructions the fallback took (planned here as the run planned them) recorded in the trace
        Path libc = Path.of("/lib/x86_64-linux-gnu/libc.so.6");
        Set<Long> trapped = new HashSet<>();
        for (Decision d : new PatchPlanner(new Decoder()).plan(ElfFile.read(libc)))
            if (d instanceof Decision.Trapped t) trapped.add(t.instruction().address());
        long libcBias = TraceFile.read(trace).comments().stream().filter(c -> c.startsWith("module " + libc + " "))
                .map(c -> Long.parseUnsignedLong(c.replaceAll(".* bias=0x([0-9a-f]+) .*", "$1"), 16)).findFirst().orElseThrow();
        Set<Long> seen = new HashSet<>();
        long events = 0;
        for (var l : TraceFile.read(trace).lines())
            if (l.access() && trapped.contains(l.number(2) - libcBias)) {
                seen.add(l.number(2));
                events++;
            }
        assertThat(seen.size()).as("distinct libc instructions traced through the fallback").isGreaterThan(50);
        // not bounded by the fallback's count: a trapped instruction reached by falling through from a patched
        // one runs in that one's trampoline tail, without a trap
        assertThat(events).as("their accesses, through traps or trampoline tails").isPositive();
    }

    @Test
    void aSigtrapAtTheDefaultActionKillsAsNatively() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_sigtrap.c", "sigtrap", "-O1");
        Process p = new ProcessBuilder(prog.toString(), "die").redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        int nativeStatus = p.waitFor();
        assertThat(nativeStatus).isEqualTo(128 + 5);
        var r = Cli.run(dir, "run", "--mode", "rewrite", "-q", "-o", dir.resolve("k.trace").toString(), "--", prog.toString(), "die");
        assertThat(r.status()).as(r.stderr()).isEqualTo(nativeStatus);
        assertThat(r.stderr()).contains("killed by SIGTRAP");
    }

    /**
     * A handler that runs while sigsuspend, ppoll, pselect, epoll_pwait or epoll_pwait2 waits with a mask of
     * every signal but its own: natively SIGTRAP is blocked in it, and the fallback's traps in the handler's
     * snprintf killed the program. The runtime's wrappers leave SIGTRAP and SIGSEGV out of those masks, so
     * it runs as natively, and each handler's store into seen[] is in the trace once, in order.
     */
    @Test
    void aHandlerRunningUnderAWaitsMaskTrapsAndIsTraced() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_sigmasks.c", "sigmasks", "-O1");
        String nativeOut = Gcc.run(List.of(prog.toString()));
        assertThat(nativeOut).startsWith("5 handled: sigsuspend ppoll pselect epoll_pwait epoll_pwait2, seen 1 2 3 4 5, last ");
        Path trace = dir.resolve("m.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(nativeOut);
        Matcher m = Pattern.compile("int3 fallback: [\\d,]+ accesses recorded in ([\\d,]+) traps").matcher(r.stderr());
        assertThat(m.find()).as(r.stderr()).isTrue();
        // snprintf's short instructions in the handlers: most are punned jumps now, written at run time (13 traps
        // are left in this run, 50 and more while a fifth of libc's puns were kept as int3s)
        assertThat(Long.parseLong(m.group(1).replace(",", ""))).as("snprintf's short instructions in the handlers").isPositive();
        List<String> stores = TraceFile.read(trace).lines().stream()
                .filter(l -> l.type() == 'S' && l.field(0).startsWith("seen+") && l.field(2).startsWith("on_usr1+"))
                .map(l -> l.field(0)).toList();
        assertThat(stores).containsExactly("seen+0", "seen+4", "seen+8", "seen+12", "seen+16");
    }
}
