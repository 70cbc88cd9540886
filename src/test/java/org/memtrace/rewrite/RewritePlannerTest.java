package org.memtrace.rewrite;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Gcc;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryOperand;

/**
 * The planner and the trampolines on hand-written assembly (rewrite_tactics.s), whose at_* labels name one
 * instruction per tactic: each gets the decision the tactic calls for, and the linked trampolines decode to
 * the compiled-in group probe, the moved instruction still addressing what it addressed, and the jump back.
 */
class RewritePlannerTest {
    @TempDir Path dir;
    private ElfFile elf;
    private final Map<String, Long> at = new HashMap<>();
    private final Map<Long, Decision> decisions = new HashMap<>();

    @BeforeEach
    void plan() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_tactics.s", "tactics", "-no-pie");
        elf = ElfFile.read(prog);
        for (ElfSymbol s : elf.symtab()) if (s.name().startsWith("at_") || s.name().equals("counter") || s.name().equals("tail")) at.put(s.name(), s.value());
        for (Decision d : new PatchPlanner(new Decoder()).plan(elf)) decisions.put(d.instruction().address(), d);
    }

    private Decision decision(String label) {
        assertThat(at).containsKey(label);
        return decisions.get(at.get(label));
    }

    @Test
    void aLongInstructionJumpsOverItself() {
        Decision.Patch p = (Decision.Patch) decision("at_long");
        assertThat(p.parts()).hasSize(1);
        assertThat(p.parts().getFirst().ripDisplacement()).as("movl $7,counter(%%rip): disp after 2 opcode bytes").isEqualTo(2);
        assertThat(p.end()).isEqualTo(at.get("at_long") + 10);
        assertThat(((Decision.Patch) decision("at_helper")).parts()).hasSize(1);
    }

    @Test
    void aShortInstructionMovesWithItsSuccessorsAndTheNextShortAccess() {
        Decision.Patch p = (Decision.Patch) decision("at_short");
        assertThat(p.parts()).extracting(part -> part.instruction().mnemonic()).containsExactly("mov", "add", "mov");
        long covered = at.get("at_short") + 5;
        assertThat(p.end()).isEqualTo(covered + 3);
        assertThat(decisions.get(covered)).isInstanceOf(Decision.Covered.class);
    }

    @Test
    void aRunEndsWithABranchOrAReturnAndTakesWhatComesBeforeWhenItMust() {
        long tail = at.get("tail");
        assertThat(decision("tail")).isInstanceOf(Decision.Patch.class);
        Decision.Patch loop = (Decision.Patch) decisions.get(tail + 18);
        assertThat(loop.parts()).extracting(part -> part.instruction().mnemonic()).containsExactly("add", "cmp", "jl");
        assertThat(loop.parts().getLast().move()).isEqualTo(Decision.Move.BRANCH);
        Decision.Patch ret = (Decision.Patch) decisions.get(tail + 25);
        assertThat(ret.parts()).extracting(part -> part.instruction().mnemonic()).containsExactly("add", "mov", "ret");
        assertThat(ret.end()).isEqualTo(tail + 31);
    }

    @Test
    void whatNoJumpCanPatchGoesToTheInt3FallbackInATrampolineOfItsOwn() {
        Decision.Patch alone = ((Decision.Trapped) decision("at_blocked")).patch(); // a branch target right after it
        assertThat(alone.parts()).hasSize(1);
        assertThat(alone.instruction().address()).isEqualTo(at.get("at_blocked"));
        assertThat(alone.parts().getFirst().move()).isEqualTo(Decision.Move.COPY);
        assertThat(alone.parts().getFirst().accesses()).hasSize(1);
        assertThat(decisions.values()).as("nothing in the fixture is left untraced").noneMatch(d -> d instanceof Decision.Left);
    }

    @Test
    void aFunctionThatJumpsIndirectlyMovesAroundThePlacesItsDataNames() throws Exception {
        assertThat(((Decision.Patch) decision("at_indirect")).parts()).as("a tail call through %%rsi: nothing names its middle")
                .extracting(part -> part.instruction().mnemonic()).containsExactly("mov", "add");
        ElfFile sw = ElfFile.read(Gcc.compile(dir, "rewrite_switch.s", "switch", "-no-pie"));
        Map<String, Long> s = new HashMap<>();
        for (ElfSymbol x : sw.symtab()) s.put(x.name(), x.value());
        Map<Long, Decision> d = new HashMap<>();
        for (Decision x : new PatchPlanner(new Decoder()).plan(sw)) d.put(x.instruction().address(), x);
        long rel = s.get("rel_switch"), abs = s.get("abs_switch"), own = s.get("own_label");
        // each case 0 ends where case 1 begins, which only a table names (rel_switch's at +18 and +23)
        for (long[] c : new long[][] {{rel + 18, rel + 23, rel + 28}, {abs + 15, abs + 21, abs + 26}}) {
            Decision.Patch zero = (Decision.Patch) d.get(c[0]);
            assertThat(zero.parts()).extracting(part -> part.instruction().mnemonic()).containsExactly("mov", "add");
            assertThat(zero.end()).isEqualTo(c[1]);
            for (int k = 1; k <= 2; k++)
                assertThat(((Decision.Patch) d.get(c[k])).parts()).extracting(part -> part.instruction().mnemonic()).containsExactly("add", "ret");
        }
        // own_label jumps to 1f plus %rdi: its instructions keep their place (a pun or the int3 fallback)
        assertThat(d.get(own + 12)).isInstanceOf(Decision.Trapped.class);
        assertThat(d.get(own + 15)).isInstanceOf(Decision.Trapped.class);
    }

    @Test
    void anIndirectCallMovesWithTheInstructionBeforeItAndIsEmulated() {
        Decision.Patch p = (Decision.Patch) decision("at_icall");
        assertThat(p.parts()).extracting(part -> part.instruction().mnemonic()).containsExactly("lea", "call");
        assertThat(p.parts().getLast().move()).isEqualTo(Decision.Move.INDIRECT_CALL);
        assertThat(TrampolineWriter.callee(p.parts().getLast().instruction())).isEqualTo("%rax");
    }

    @Test
    void repStringInstructionsRecordTheirPointersAndCount() {
        Decision.Patch movs = (Decision.Patch) decision("at_rep");
        assertThat(movs.parts()).extracting(part -> part.instruction().mnemonic()).containsExactly("mov", "movsb");
        assertThat(TrampolineWriter.sites(movs.parts().getLast())).extracting(TrampolineWriter.Site::address, TrampolineWriter.Site::kind)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("(%rdi)", TrampolineWriter.KIND_REP_DESTINATION),
                        org.assertj.core.groups.Tuple.tuple("(%rsi)", TrampolineWriter.KIND_REP_SOURCE),
                        org.assertj.core.groups.Tuple.tuple("(%rcx)", TrampolineWriter.KIND_REP_COUNT));
        assertThat(movs.sites()).isEqualTo(3);
        Decision.Patch stos = (Decision.Patch) decisions.get(at.get("at_stos") + 5);
        assertThat(stos.parts()).extracting(part -> part.instruction().mnemonic()).containsExactly("stosq", "mov", "leave", "ret");
        assertThat(TrampolineWriter.sites(stos.parts().getFirst())).extracting(TrampolineWriter.Site::size).containsOnly(8);
    }

    @Test
    void fsOperandsAddTheThreadPointerLongOrShort() {
        Decision.Patch alone = (Decision.Patch) decision("at_fs");
        assertThat(alone.parts()).singleElement().satisfies(part -> assertThat(TrampolineWriter.sites(part).getFirst().fs()).isTrue());
        assertThat(TrampolineWriter.assembly(List.of(alone))).contains("\tlea 40,%rax\n\tmov %fs:0,%rdx\n\tlea (%rax,%rdx),%rax\n");
        Decision.Patch shortOne = (Decision.Patch) decisions.get(at.get("at_tp") + 11);
        assertThat(shortOne.parts()).hasSize(2);
        assertThat(decisions.get(at.get("at_tp") + 15)).isInstanceOf(Decision.Covered.class);
    }

    @Test
    void aStrippedModuleMovesRunsInsideItsFdesUpToLandingPads() throws Exception {
        Path named = Gcc.compile(dir, "rewrite_fde.s", "fde", "-no-pie");
        Map<String, Long> f = new HashMap<>();
        for (ElfSymbol s : ElfFile.read(named).symtab()) f.put(s.name(), s.value());
        ElfFile stripped = ElfFile.read(Gcc.compile(dir, "rewrite_fde.s", "fde-stripped", "-no-pie", "-s"));
        assertThat(stripped.symtab()).isEmpty();
        assertThat(EhFrame.of(stripped).fdes()).contains(new EhFrame.Fde(f.get("short_run"), f.get("short_run") + 9, List.of(), false, List.of()),
                new EhFrame.Fde(f.get("with_lsda"), f.get("with_lsda") + 9, List.of(f.get("with_lsda") + 2), false,
                        List.of(new EhFrame.Range(f.get("with_lsda"), f.get("with_lsda") + 9))));
        Map<Long, Decision> d = new HashMap<>();
        for (Decision x : new PatchPlanner(new Decoder()).plan(stripped)) d.put(x.instruction().address(), x);
        assertThat(((Decision.Patch) d.get(f.get("short_run"))).parts()).extracting(p -> p.instruction().mnemonic())
                .containsExactly("mov", "add", "mov", "ret");
        assertThat(d.get(f.get("short_run") + 5)).isInstanceOf(Decision.Covered.class);
        assertThat(d.get(f.get("with_lsda"))).as("a landing pad after it: the int3 fallback").isInstanceOf(Decision.Trapped.class);
        assertThat(((Decision.Patch) d.get(f.get("with_lsda") + 2)).parts()).extracting(p -> p.instruction().mnemonic())
                .containsExactly("add", "mov", "ret");
    }

    @Test
    void aDirectCallIsEmulated() {
        Decision.Patch p = (Decision.Patch) decision("at_call");
        assertThat(p.parts()).singleElement().satisfies(part -> assertThat(part.call()).isTrue());
    }

    @Test
    void linkedTrampolinesDecodeToTheProbeTheMovedInstructionAndTheJumpBack() throws Exception {
        // without its tail (copies of at_short's run, the je and at_blocked: RewriteTailTest's subject)
        Decision.Patch p = ((Decision.Patch) decision("at_long")).withTail(List.of());
        long base = 0x200000;
        var linked = TrampolineLinker.link(List.of(p), base, new byte[0], dir, dir.resolve("t.elf"));
        assertThat(linked.textAddress()).isEqualTo(base);
        assertThat(linked.trampolines()).containsExactly(base + 8); // after the cursor slot
        List<Instruction> code = new Decoder().decodeAll(linked.text(), 8, linked.text().length - 8, base + 8);
        List<String> mnemonics = code.stream().map(Instruction::mnemonic).toList();
        assertThat(mnemonics).containsExactly("lea", "push", "push", "push", "lea", "mov", "mov", "mov", "lea", "mov",
                "lea", "mov", "pop", "pop", "pop", "lea", "mov", "jmp");
        // the probe's address is the instruction's: counter, RIP-relative from the trampoline
        MemoryOperand probed = code.get(4).memoryOperands().getFirst();
        assertThat(probed.staticAddress()).hasValue(at.get("counter"));
        // the cursor's offset is read from the slot, then through %fs
        assertThat(code.get(5).memoryOperands().getFirst().staticAddress()).hasValue(base);
        assertThat(code.get(6).memoryOperands().getFirst().segment().name()).isEqualTo("fs");
        Instruction moved = code.get(16);
        assertThat(moved.length()).isEqualTo(10);
        assertThat(moved.memoryOperands().getFirst().staticAddress()).hasValue(at.get("counter"));
        assertThat(code.get(17).branchTarget()).hasValue(p.end());
        // the jump written over the instruction reaches the trampoline
        PlanFile.Patch jump = ModuleRewrite.jump(p, linked.trampolines()[0]);
        Instruction written = new Decoder().decode(jump.jump(), 0, p.instruction().address()).orElseThrow();
        assertThat(written.branchTarget()).hasValue(base + 8);
        // the bytes there now, up to 8 (a jump padded with prefixes writes more than 5: Puns)
        assertThat(jump.old()).containsExactly(java.util.Arrays.copyOf(p.parts().getFirst().bytes(), 8));
    }

    /**
     * A {@code .plt.sec} entry of an MPX-era link ({@code endbr64; bnd jmp *slot(%rip)}): the 7-byte jump through
     * memory gets a jump of its own; its trampoline records the slot's load and jumps through the same slot,
     * nothing after it.
     */
    @Test
    void aPltJumpThroughTheGotRecordsItsLoadAndJumpsThroughTheSameSlot() throws Exception {
        long at = 0x401004, slot = at + 7 + 0x2ff6;
        byte[] bytes = {(byte) 0xf2, (byte) 0xff, 0x25, (byte) 0xf6, 0x2f, 0, 0};
        Instruction jmp = new Decoder().decode(bytes, 0, at).orElseThrow();
        Decision.Patch p = (Decision.Patch) new PartRules(new Decoder(), a -> true, true).decide(jmp, bytes);
        assertThat(p.parts()).singleElement().satisfies(part -> {
            assertThat(part.ripDisplacement()).isEqualTo(3);
            assertThat(part.accesses()).singleElement().satisfies(a -> {
                assertThat(a.read()).isTrue();
                assertThat(a.write()).isFalse();
                assertThat(a.sizeBytes()).isEqualTo(8);
            });
        });
        long base = 0x200000;
        var linked = TrampolineLinker.link(List.of(p), base, new byte[0], dir, dir.resolve("p.elf"));
        List<Instruction> code = new Decoder().decodeAll(linked.text(), 8, linked.text().length - 8, base + 8);
        assertThat(code.get(4).memoryOperands().getFirst().staticAddress()).as("the probe's address").hasValue(slot);
        Instruction last = code.getLast();
        assertThat(last.mnemonic()).isEqualTo("jmp");
        assertThat(last.memoryOperands().getFirst().staticAddress()).as("the same slot, from the trampoline").hasValue(slot);
        assertThat(code.stream().filter(i -> i.mnemonic().equals("jmp"))).as("no jump back").hasSize(1);
    }

    @Test
    void theSiteTableNamesTheModulesInstructions() throws Exception {
        Decision.Patch p = (Decision.Patch) decision("at_short");
        var linked = TrampolineLinker.link(List.of(p), 0x200000, new byte[0], dir, dir.resolve("t.elf"));
        ElfFile t = ElfFile.read(linked.file());
        var sites = t.contentsOf(t.section("memtrace_sites").orElseThrow()).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        long section = t.section("memtrace_sites").orElseThrow().address();
        // the load of at_short, the store of at_covered, and in its tail (through the je) at_blocked's load
        assertThat(sites.limit()).isEqualTo(3 * 24);
        assertThat(section + 48 + 4 + sites.getInt(52)).isEqualTo(at.get("at_blocked"));
        assertThat(section + 4 + sites.getInt(4)).isEqualTo(at.get("at_short"));
        assertThat(sites.get(8)).isEqualTo((byte) TrampolineWriter.KIND_LOAD);
        assertThat(section + 24 + 4 + sites.getInt(28)).isEqualTo(at.get("at_short") + 5);
        assertThat(sites.get(32)).isEqualTo((byte) TrampolineWriter.KIND_STORE);
        assertThat(t.buildId()).isPresent();
    }

}
