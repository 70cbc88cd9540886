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
 * Dead padding (docs/rewriting.md, "Dead padding") on rewrite_padding.s: a {@code ret} a branch lands on and
 * one after a {@code jne} take the nops after them into their jumps; a {@code call *%rdi} that a branch lands on
 * gets a {@code jmp rel8} to the nops before it, whose first 5 bytes jump to its trampoline. None of them
 * traps, at 10 calls or 1,000, and each records exactly the accesses it makes.
 */
class RewritePaddingTest {
    @TempDir Path dir;
    private Path prog;
    private final Map<String, Long> at = new HashMap<>();

    @BeforeEach
    void build() throws Exception {
        prog = Gcc.compile(dir, "rewrite_padding.s", "padding", "-no-pie");
        for (ElfSymbol s : ElfFile.read(prog).symtab()) at.put(s.name(), s.value());
        at.put("at_ret1", at.get("callit") + 5);
    }

    @Test
    void shortInstructionsJumpThroughTheNopsNextToThem() throws Exception {
        Map<Long, Decision> decided = new HashMap<>();
        for (Decision d : new PatchPlanner(new Decoder()).plan(ElfFile.read(prog))) decided.put(d.instruction().address(), d);
        Decision.Patch find = (Decision.Patch) decided.get(at.get("at_find_ret"));
        assertThat(find.parts()).extracting(p -> p.instruction().length()).as("the ret, then the 7-byte nop").containsExactly(1, 7);
        assertThat(find.via()).isNull();
        Decision.Patch ret1 = (Decision.Patch) decided.get(at.get("at_ret1"));
        assertThat(ret1.end()).as("the ret and the 4-byte nop only").isEqualTo(at.get("callit") + 10);
        Decision.Patch call = (Decision.Patch) decided.get(at.get("at_call"));
        assertThat(call.parts()).hasSize(1);
        assertThat(call.parts().getFirst().move()).isEqualTo(Decision.Move.INDIRECT_CALL);
        assertThat(call.via().address()).as("the 5-byte nop before it, which the first ret left").isEqualTo(at.get("callit") + 10);
        assertThat(call.end()).isEqualTo(at.get("at_ret2"));
        Decision.Patch ret2 = (Decision.Patch) decided.get(at.get("at_ret2"));
        assertThat(ret2.parts()).extracting(p -> p.instruction().length()).containsExactly(1, 5);
    }

    @Test
    void noneTrapsAndEachRecordsItsAccesses() throws Exception {
        long few = traps(run("few", "10").stderr());
        long many = traps(run("many", "1000").stderr());
        // within a few: libc's own traps (a punned jump's stub page may land on another mapping in one run)
        assertThat(many).as("990 more calls of each").isBetween(few - 5, few + 5);
        Map<Long, List<String>> byIp = byIp(dir.resolve("many.trace"));
        String counter = "0x" + Long.toHexString(at.get("counter"));
        assertThat(byIp.get(at.get("at_find_ret"))).hasSize(1000);
        String slot = byIp.get(at.get("at_find_ret")).getFirst();
        assertThat(slot).startsWith("L0x7ff");
        assertThat(byIp.get(at.get("at_find_ret"))).containsOnly(slot);
        assertThat(byIp.get(at.get("at_ret1"))).as("callit(0): the even calls").containsExactlyElementsOf(Collections.nCopies(500, slot));
        String push = "S0x" + Long.toHexString(Long.decode(slot.substring(1)) - 8); // callit's return address's slot, less 8
        assertThat(byIp.get(at.get("at_call"))).containsExactlyElementsOf(Collections.nCopies(500, push));
        assertThat(byIp.get(at.get("at_ret2"))).containsExactlyElementsOf(Collections.nCopies(500, slot));
        assertThat(byIp.get(at.get("bump"))).containsExactlyElementsOf(repeat(500, "L" + counter, "S" + counter));
    }

    private Cli.Result run(String name, String calls) throws Exception {
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-o", dir.resolve(name + ".trace").toString(), "--",
                prog.toString(), calls);
        assertThat(r.status()).as("find counted, bump called: " + r.stderr()).isZero();
        return r;
    }

    private static long traps(String stderr) {
        Matcher m = Pattern.compile("int3 fallback: [\\d,]+ accesses recorded in ([\\d,]+) traps").matcher(stderr);
        assertThat(m.find()).as(stderr).isTrue();
        return Long.parseLong(m.group(1).replace(",", ""));
    }

    /** The program's accesses by instruction address (-no-pie: link-time), each "L0x…"/"S0x…", in trace order. */
    private static Map<Long, List<String>> byIp(Path trace) throws Exception {
        Map<Long, List<String>> byIp = new TreeMap<>();
        for (var l : TraceFile.read(trace).lines())
            if (l.access()) byIp.computeIfAbsent(l.number(2), k -> new ArrayList<>()).add(l.type() + l.field(0));
        return byIp;
    }

    private static List<String> repeat(int times, String... s) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < times; i++) out.addAll(List.of(s));
        return out;
    }
}
