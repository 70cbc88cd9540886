package org.memtrace.rewrite;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Gcc;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.MemoryAccess;

/**
 * The check trampolines of {@code memtrace run --check --mode rewrite} (CheckProbe): which accesses get a
 * check (through a register but %rsp: yes; a global, the stack: no), the inline test and the slow call's
 * descriptor of a load and a store, and that the text assembles and links.
 */
class CheckProbeTest {
    @TempDir Path dir;

    @Test
    void pointerAccessesAreCheckedInlineGlobalsAndStackSlotsAreNot() throws Exception {
        Files.writeString(dir.resolve("probe.c"), """
                int g[4];
                __attribute__((noinline)) int load(int *p) { return p[1] + 7; }
                __attribute__((noinline)) void store(long *p, long v) { p[3] = v; g[0]++; }
                __attribute__((noinline)) int global(void) { return g[1] * 3 + 1; }
                int main(void) { long a[4]; store(a, 1); return load((int *)a) + global(); }
                """);
        ElfFile elf = ElfFile.read(Gcc.compile(dir, "probe.c", "probe", "-O2", "-no-pie"));
        long load = 0, store = 0, global = 0;
        for (ElfSymbol s : elf.symtab()) {
            if (s.name().equals("load")) load = s.value();
            if (s.name().equals("store")) store = s.value();
            if (s.name().equals("global")) global = s.value();
        }
        Decision.Patch loadPatch = null, storePatch = null, globalPatch = null;
        for (Decision d : new PatchPlanner(new Decoder()).plan(elf)) {
            if (!(d instanceof Decision.Patch p)) continue;
            long a = p.instruction().address();
            if (a == load) loadPatch = p;
            if (a >= store && a < store + 16 && p.parts().getFirst().accesses().stream().anyMatch(x -> x.write() && !x.read())) storePatch = p;
            if (a >= global && a < global + 16) globalPatch = p;
        }
        assertThat(loadPatch).isNotNull();
        assertThat(CheckProbe.checksAny(loadPatch)).isTrue();
        assertThat(CheckProbe.checks(loadPatch.parts().getFirst())).singleElement().satisfies(x -> assertThat(x.sizeBytes()).isEqualTo(4));
        // a global (RIP-relative) has no redzone in a binary nobody rebuilt: its instruction is not patched
        assertThat(globalPatch).isNotNull();
        assertThat(CheckProbe.checksAny(globalPatch)).isFalse();
        String text = TrampolineWriter.assembly(List.of(loadPatch), Probes.CHECK, SiteWeights.FULL);
        assertThat(text).contains("\tlea -128(%rsp),%rsp\n\tpush %rax\n\tpush %rcx\n\tlea 4(%rdi),%rax\n"
                + "\tmov $3,%ecx\n\tshrx %rcx,%rax,%rcx\n\tmovzbl 0x7fff8000(%rcx),%ecx\n\tjrcxz ");
        assertThat(text).contains("\tcall *" + CheckProbe.SLOT + "\n\t.long 4\n\t.long mt_base+" + load + " - .\n");
        assertThat(text).contains("\tlea 3(%rax),%rax\n");
        // checking only: no probe records, no site table entry
        assertThat(text).doesNotContain("cursor_slot(%rip)").doesNotContain("mt_s0");
        assertThat(storePatch).isNotNull();
        assertThat(TrampolineWriter.assembly(List.of(storePatch), Probes.CHECK, SiteWeights.FULL)).contains("\t.long " + (0x10000 | 8) + "\n");
        // both: the check, then the recording probe
        String both = TrampolineWriter.assembly(List.of(loadPatch), Probes.BOTH, SiteWeights.FULL);
        assertThat(both.indexOf("shrx")).isLessThan(both.indexOf("cursor_slot(%rip)"));
        var linked = TrampolineLinker.link(List.of(loadPatch, storePatch), Probes.CHECK, SiteWeights.FULL, 0x200000, new byte[0], dir, dir.resolve("t.elf"));
        assertThat(linked.text().length).isLessThanOrEqualTo((int) (TrampolineWriter.bound(loadPatch) + CheckProbe.bound(loadPatch)
                + TrampolineWriter.bound(storePatch) + CheckProbe.bound(storePatch) + 64));
    }

    /**
     * ITC's redundant_cond_014 shape (issue 22, slow22): a gcc -O0 loop whose every instruction reads or writes a
     * local through {@code disp(%rbp)} took a check trampoline per access, 18x native under run --check, for a
     * test that cannot fail (nobody poisons a stack's shadow). With the function's DWARF those frame slots are
     * not checked, so the loop is left as it is; an indexed local and an access through a pointer still are.
     */
    @Test
    void frameSlotsOfAnUnoptimisedFunctionAreNotCheckedIndexedAndPointerAccessesAre() throws Exception {
        Files.writeString(dir.resolve("slots.c"), """
                volatile int sink;
                __attribute__((noinline)) void count(int a, int *p) {
                  int b = 0; int buf[4] = {0};
                  do { b += a; a--; } while (10 < a);
                  buf[a & 3] = b;
                  *p = b + buf[1];
                  sink = b;
                }
                int main(void) { int x; count(100, &x); return x & 1; }
                """);
        ElfFile elf = ElfFile.read(Gcc.compile(dir, "slots.c", "slots", "-O0", "-g"));
        ElfSymbol count = elf.symtab().stream().filter(s -> s.name().equals("count")).findFirst().orElseThrow();
        StackSlots slots = new StackSlots(org.memtrace.symbols.DwarfLocals.read(elf));
        List<Decision.Part> parts = new java.util.ArrayList<>();
        for (Decision d : new PatchPlanner(new Decoder()).plan(elf)) {
            Decision.Patch p = d instanceof Decision.Patch q ? q : d instanceof Decision.Trapped t ? t.patch() : null;
            if (p == null) continue;
            for (Decision.Part part : p.all()) {
                long a = part.instruction().address();
                if (a >= count.value() && a < count.value() + count.size()) parts.add(part);
            }
        }
        // an instruction may be a part twice (moved with a run, copied in a tail): counted once
        long withoutDwarf = parts.stream().filter(p -> !CheckProbe.checks(p).isEmpty()).map(p -> p.instruction().address()).distinct().count();
        List<Decision.Part> checked = parts.stream().filter(p -> !CheckProbe.checks(p, slots).isEmpty()).toList();
        // without DWARF every disp(%rbp) access is tested against the shadow: the loop's five among them
        assertThat(withoutDwarf).isGreaterThanOrEqualTo(9);
        // with it: the indexed store buf[a & 3] (against buf) and the store through p (the shadow), nothing else
        assertThat(checked.stream().map(p -> p.instruction().address()).distinct()).hasSize(2);
        assertThat(checked).anySatisfy(p -> assertThat(slots.slotOf(p.instruction().address(), CheckProbe.checks(p, slots).getFirst()))
                .hasValueSatisfying(v -> assertThat(v.variable()).isEqualTo("buf")));
        assertThat(checked).anySatisfy(p -> assertThat(CheckProbe.checks(p, slots).getFirst().operand().base().isFramePointer()).isFalse());
    }

    /**
     * A frame slot statically past its variable (FrameConstants: {@code tag[5] = 'z'} of a {@code char[5]}, over
     * the saved %rbp) is patched, and its trampoline calls the slow path with no test: the address, the offset
     * in the variable as a constant, the stack descriptor and the variable's size, line and names.
     */
    @Test
    void aConstantSlotPastItsVariableCallsTheSlowPathWithoutATest() throws Exception {
        Files.writeString(dir.resolve("smash.c"), """
                volatile int sink; int idx;
                __attribute__((noinline)) void smash(int bad) { char tag[5]; tag[0] = 1; if (bad) tag[5] = 'z'; sink = tag[idx]; }
                int main(int argc, char **argv) { smash(argc > 1); return 0; }
                """);
        ElfFile elf = ElfFile.read(Gcc.compile(dir, "smash.c", "smash", "-O0", "-g"));
        ElfSymbol smash = elf.symtab().stream().filter(s -> s.name().equals("smash")).findFirst().orElseThrow();
        StackSlots slots = StackSlots.of(elf);
        assertThat(slots.constantFindings()).isEqualTo(1);
        List<Decision.Part> flagged = new java.util.ArrayList<>();
        for (Decision d : new PatchPlanner(new Decoder()).plan(elf)) {
            Decision.Patch p = d instanceof Decision.Patch q ? q : d instanceof Decision.Trapped t ? t.patch() : null;
            if (p == null) continue;
            for (Decision.Part part : p.all()) {
                long a = part.instruction().address();
                if (a >= smash.value() && a < smash.value() + smash.size()
                        && part.accesses().stream().anyMatch(x -> slots.constantOf(a, x).isPresent())) flagged.add(part);
            }
        }
        assertThat(flagged).isNotEmpty();
        Decision.Part part = flagged.getFirst();
        MemoryAccess store = part.accesses().stream().filter(x -> slots.constantOf(part.instruction().address(), x).isPresent()).findFirst().orElseThrow();
        assertThat(CheckProbe.checks(part, slots)).contains(store); // no longer a frame slot left alone
        var found = slots.constantOf(part.instruction().address(), store).orElseThrow();
        assertThat(found.slot().variable()).isEqualTo("tag");
        assertThat(found.offset()).isEqualTo(5);
        StringBuilder text = new StringBuilder();
        CheckProbe.emit(text, part, "t", slots);
        assertThat(text.toString()).doesNotContain("jrcxz").contains("mov $5,%rcx", "call *" + CheckProbe.SLOT,
                ".long " + (CheckProbe.WRITE | CheckProbe.STACK | 1) + "\n", ".asciz \"tag\"", ".asciz \"smash\"");
    }
}
