package org.memtrace.rewrite;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Gcc;

/**
 * Punned jumps as planned (docs/rewriting.md, "Punned jumps") on rewrite_pun.s: each at_* instruction the
 * int3 fallback took gets a pun of exactly its own length, {@code e9} and the rel32's free low bytes, whose
 * stub lies where the rel32 with the next instructions' bytes as its high bytes leads; a pun whose window lies
 * below address 0 of a non-PIE executable is not planned, and the instruction keeps its int3, unless the next
 * instruction's own jump can take a prefix that moves the window above (prefix padding).
 */
class PunsTest {
    @TempDir Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"-no-pie", "-pie"})
    void eachShortTrappedInstructionGetsAPunWhoseRel32EndsInItsSuccessorsBytes(String layout) throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_pun.s", "pun", layout);
        Map<String, Long> at = new HashMap<>();
        for (ElfSymbol s : ElfFile.read(prog).symtab()) if (s.name().startsWith("at_")) at.put(s.name(), s.value());
        Path cache = Files.createDirectories(dir.resolve("cache"));
        List<PlanFile.Trap> traps = PlanFile.traps(ModuleRewrite.prepare(prog, cache).plan());
        Map<Long, PlanFile.Trap> byAddress = new HashMap<>();
        for (PlanFile.Trap t : traps) byAddress.put(t.address(), t);
        for (String label : List.of("at_two", "at_three", "at_push", "at_pop")) assertThat(byAddress).as(label).containsKey(at.get(label));

        // at_two, mov (%rdx),%eax (8b 02) before add $0x60,%ecx (83 c1 60): one free byte, a 256-byte window
        PlanFile.Trap two = byAddress.get(at.get("at_two"));
        assertThat(two.pun()).hasSize(2);
        assertThat(two.pun()[0]).isEqualTo((byte) 0xe9);
        long rel = two.stub() - at.get("at_two") - 5;
        assertThat(rel >>> 8).isEqualTo(0x60c183);
        assertThat((byte) rel).isEqualTo(two.pun()[1]);
        assertThat(two.stub() % 16).as("aligned in its window").isZero();

        // at_three, add %eax,8(%rdx) (01 42 08) before xor $0x58,%al (34 58): two free bytes, a 64 KB window
        PlanFile.Trap three = byAddress.get(at.get("at_three"));
        assertThat(three.pun()).hasSize(3);
        rel = three.stub() - at.get("at_three") - 5;
        assertThat(rel >>> 16).isEqualTo(0x5834);
        assertThat(new byte[] {three.pun()[1], three.pun()[2]}).containsExactly((byte) rel, (byte) (rel >>> 8));

        // at_pop, pop %rcx (59) before add $0x60,%r9 (49 83 c1 60): no free byte, one address
        PlanFile.Trap pop = byAddress.get(at.get("at_pop"));
        assertThat(pop.pun()).containsExactly((byte) 0xe9);
        assertThat(pop.stub()).isEqualTo(at.get("at_pop") + 5 + 0x60c18349L);

        // at_push, push %rax (50) before at_pop's pun: rel32 e9 49 83 c1, 1 GB below the code
        PlanFile.Trap push = byAddress.get(at.get("at_push"));
        if (layout.equals("-pie")) {
            assertThat(push.pun()).containsExactly((byte) 0xe9);
            assertThat(push.stub()).isEqualTo(at.get("at_push") + 5 + (int) 0xc18349e9);
        } else {
            assertThat(push.pun()).as("below address 0").isEmpty();
        }
        // at_padded, mov 8(%rdx),%rsi (48 8b 72 08) before at_long's jump: its e9 makes the window 369 MB below the
        // code, fine for a PIE; a non-PIE executable's at_long jump gets a prefix 4f, a window 1.3 GB above
        PlanFile.Trap padded = byAddress.get(at.get("at_padded"));
        assertThat(padded.pun()).hasSize(4);
        rel = padded.stub() - at.get("at_padded") - 5;
        assertThat((int) rel >>> 24).isEqualTo(layout.equals("-pie") ? 0xe9 : 0x4f);
        // at_evict, mov 8(%rdx),%rsi (48 8b 72 08) before at_evicted, mov %esi,20(%rdx) (89 72 14), trapped too: a
        // PIE takes at_evicted's int3 or e9 (a window below); a non-PIE executable's at_evicted is punned with
        // a prefix, 4f e9 and one free byte, whose rel32 reads add $0x60,%ecx (83 c1 60), and at_evict's reads 4f
        PlanFile.Trap evict = byAddress.get(at.get("at_evict")), evicted = byAddress.get(at.get("at_evicted"));
        assertThat(evict.pun()).hasSize(4);
        rel = evict.stub() - at.get("at_evict") - 5;
        if (layout.equals("-pie")) {
            assertThat(evicted.pun()).hasSize(3);
            assertThat(evicted.pun()[0]).isEqualTo((byte) 0xe9);
            assertThat((int) rel >>> 24).isEqualTo(0xe9);
        } else {
            assertThat(evicted.pun()).hasSize(3);
            assertThat(new byte[] {evicted.pun()[0], evicted.pun()[1]}).containsExactly((byte) 0x4f, (byte) 0xe9);
            long relNext = evicted.stub() - at.get("at_evicted") - 6;
            assertThat(relNext >>> 8).isEqualTo(0x60c183);
            assertThat((byte) relNext).isEqualTo(evicted.pun()[2]);
            assertThat((int) rel >>> 24).isEqualTo(0x4f);
        }
        // no two stubs share a byte
        List<Long> stubs = traps.stream().filter(t -> t.pun().length > 0).map(PlanFile.Trap::stub).sorted().toList();
        for (int i = 1; i < stubs.size(); i++) assertThat(stubs.get(i) - stubs.get(i - 1)).isGreaterThanOrEqualTo(Puns.STUB);
    }

    /**
     * rewrite_pun_fallback.s: each 1-byte pun's stub is exactly where its rel32 leads, the second pair's stubs
     * 16 bytes after the first pair's in the same page. The planner decides from the last instruction to the
     * first and fills a stub page from where its last stub ends: at_taken2's stub, placed first, ends past
     * at_taken's one-address window, and a slot taken there for at_taken (as before this was checked) would
     * have made a rel32 its bytes cannot make, a pun the runtime then always refused.
     */
    @ParameterizedTest
    @ValueSource(strings = {"-no-pie", "-pie"})
    void aStubIsPlacedInsideItsWindowWhenItsPageIsFilledPastIt(String layout) throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_pun_fallback.s", "fallback", layout);
        Map<String, Long> at = new HashMap<>();
        for (ElfSymbol s : ElfFile.read(prog).symtab()) if (s.name().startsWith("at_")) at.put(s.name(), s.value());
        Path cache = Files.createDirectories(dir.resolve("cache"));
        Map<Long, PlanFile.Trap> byAddress = new HashMap<>();
        for (PlanFile.Trap t : PlanFile.traps(ModuleRewrite.prepare(prog, cache).plan())) byAddress.put(t.address(), t);
        for (String pop : List.of("at_taken", "at_taken2")) { // pop %rcx (59) before 66 0f 1f 44: one address
            PlanFile.Trap t = byAddress.get(at.get(pop));
            assertThat(t.pun()).as(pop).containsExactly((byte) 0xe9);
            assertThat(t.stub()).as(pop).isEqualTo(at.get(pop) + 5 + 0x441f0f66L);
        }
        for (String push : List.of("at_chained", "at_chained2")) { // push %rax (50) before the pop's pun: e9 66 0f 1f
            PlanFile.Trap t = byAddress.get(at.get(push));
            assertThat(t.pun()).as(push).containsExactly((byte) 0xe9);
            assertThat(t.stub()).as(push).isEqualTo(at.get(push) + 5 + 0x1f0f66e9L);
        }
        assertThat(byAddress.get(at.get("at_taken2")).stub() - byAddress.get(at.get("at_taken")).stub()).isEqualTo(16);
    }
}
