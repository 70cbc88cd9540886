package org.memtrace.rewrite;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Instruction;

/**
 * Which registers a trampoline's probe may use unsaved (DeadRegisters), and the probe written in them
 * (TrampolineWriter): decoded from bytes, the first instruction patched, the rest the module's code after it.
 */
class DeadRegistersTest {
    private static final long AT = 0x401000;

    private static List<Instruction> code(int... bytes) {
        byte[] b = new byte[bytes.length];
        for (int i = 0; i < bytes.length; i++) b[i] = (byte) bytes[i];
        return new Decoder().decodeAll(b, 0, b.length, AT);
    }

    /** The module's first instruction patched alone: its bytes re-encoded from the decoded length. */
    private static Decision.Patch first(List<Instruction> code, int... bytes) {
        Instruction insn = code.getFirst();
        byte[] own = new byte[insn.length()];
        for (int i = 0; i < own.length; i++) own[i] = (byte) bytes[i];
        return new Decision.Patch(List.of(new Decision.Part(insn, own, insn.accesses(), -1, Decision.Move.COPY)));
    }

    @Test
    void registersOverwrittenBeforeTheyAreReadAreDeadAndOthersLive() {
        // mov (%rdi),%eax; mov %rsi,%rcx; lea 8(%rdx),%r8; add %r9,%r10; mov %ecx,%edx; ret
        int[] b = {0x8b, 0x07, 0x48, 0x89, 0xf1, 0x4c, 0x8d, 0x42, 0x08, 0x4d, 0x01, 0xca, 0x89, 0xca, 0xc3};
        List<Instruction> code = code(b);
        Decision.Patch p = first(code, b);
        // rax: written by the load itself; rcx, r8: overwritten after it; rdx: read (lea) before its overwrite;
        // r10: a read-modify-write; r11: undecided at the return
        assertThat(new DeadRegisters(code).at(p, 0)).containsExactlyInAnyOrder("rax", "rcx", "r8");
        assertThat(DeadRegisters.NONE.at(p, 0)).containsExactly("rax");
    }

    @Test
    void aConditionalJumpKeepsARegisterDeadOnlyWhereBothWaysOverwriteIt() {
        // 0: mov (%rdi),%rax; 3: test %rax,%rax; 6: je 12; 8: mov %esi,%ecx; a: mov %esi,%edx; c: mov %edi,%ecx; e: ret
        int[] b = {0x48, 0x8b, 0x07, 0x48, 0x85, 0xc0, 0x74, 0x04, 0x89, 0xf1, 0x89, 0xf2, 0x89, 0xf9, 0xc3};
        List<Instruction> code = code(b);
        // rcx is overwritten on both ways (at 8 falling through, at c jumped to), rdx on one only; rax by the load
        assertThat(new DeadRegisters(code).at(first(code, b), 0)).containsExactlyInAnyOrder("rax", "rcx");
    }

    /**
     * A way ends, every register not yet overwritten live, where control may leave for code the walk does not
     * follow: a call (the callee reads its arguments, and an exception it throws reaches a landing pad that may
     * read any callee-saved register), a return (the caller's), an indirect jump (a switch's or a tail call's
     * target), a system call and a trap (a handler sees every register in its context). Overwrites before the
     * way ends still count.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "call,        e8 00 00 00 00",
        "ret,         c3",
        "jmp *%rsi,   ff e6",
        "jmp *(%rsi), ff 26",
        "call *%rsi,  ff d6",
        "syscall,     0f 05",
        "ud2,         0f 0b",
        "int3,        cc",
    })
    void registersOverwrittenOnlyPastACallAReturnAnIndirectJumpOrATrapAreLive(String what, String leave) {
        // mov (%rdi),%eax; mov $0,%r8d; <leave>; mov $0,%ecx; mov $0,%edx; ret
        List<Integer> bytes = new java.util.ArrayList<>(List.of(0x8b, 0x07, 0x41, 0xb8, 0, 0, 0, 0));
        for (String h : leave.trim().split(" ")) bytes.add(Integer.parseInt(h, 16));
        bytes.addAll(List.of(0xb9, 0, 0, 0, 0, 0xba, 0, 0, 0, 0, 0xc3));
        int[] b = bytes.stream().mapToInt(Integer::intValue).toArray();
        List<Instruction> code = code(b);
        assertThat(code.get(2).mnemonic()).isEqualTo(what.split(" ")[0]);
        assertThat(new DeadRegisters(code).at(first(code, b), 0)).as(what).containsExactlyInAnyOrder("rax", "r8");
    }

    @Test
    void aJumpOutOfTheSweptCodeOrAWayOffItsEndLeavesTheRestLive() {
        // mov (%rdi),%eax; mov $0,%r8d; je +0x100 (not an instruction swept); mov $0,%ecx; ret
        int[] b = {0x8b, 0x07, 0x41, 0xb8, 0, 0, 0, 0, 0x0f, 0x84, 0x00, 0x01, 0, 0, 0xb9, 0, 0, 0, 0, 0xc3};
        List<Instruction> code = code(b);
        assertThat(new DeadRegisters(code).at(first(code, b), 0)).containsExactlyInAnyOrder("rax", "r8");
        // mov (%rdi),%eax; mov $0,%r8d: the code ends before %rcx is overwritten
        assertThat(new DeadRegisters(code.subList(0, 2)).at(first(code, b), 0)).containsExactlyInAnyOrder("rax", "r8");
    }

    /**
     * In code with landing pads (a call-site range that has one) nothing is dead: an instruction there that faults may be unwound from
     * (gcc's -fnon-call-exceptions, glibc's asynchronous cancellation) into a pad that reads the registers it
     * stopped with, the probe's. A way that reaches such a function ends there.
     */
    @Test
    void aFunctionWithLandingPadsHasNoDeadRegistersAndEndsAWayThatReachesIt() {
        // 0: mov (%rdi),%eax; 2: mov $0,%r8d; 8: jmp 0xf; a: ud2 (pad) ... f: mov $0,%ecx; 14: mov $0,%edx; 19: ret
        int[] b = {0x8b, 0x07, 0x41, 0xb8, 0, 0, 0, 0, 0xeb, 0x05, 0x0f, 0x0b, 0x90, 0x90, 0x90,
            0xb9, 0, 0, 0, 0, 0xba, 0, 0, 0, 0, 0xc3};
        List<Instruction> code = code(b);
        Decision.Patch p = first(code, b);
        assertThat(new DeadRegisters(code).at(p, 0)).containsExactlyInAnyOrder("rax", "r8", "rcx", "rdx");
        // the probed instruction's function has pads
        assertThat(new DeadRegisters(code, new TreeMap<>(Map.of(AT, AT + b.length))).at(p, 0)).isEmpty();
        // the function jumped to (a tail call) has them: only what was overwritten before it
        assertThat(new DeadRegisters(code, new TreeMap<>(Map.of(AT + 0xf, AT + b.length))).at(p, 0)).containsExactlyInAnyOrder("rax", "r8");
        // a function before, not covering any of it
        assertThat(new DeadRegisters(code, new TreeMap<>(Map.of(AT - 0x100, AT))).at(p, 0)).hasSize(4);
    }

    @Test
    void implicitReadsKeepARegisterLive() {
        // mov (%rdi),%eax; rep movsb (reads %rcx, %rsi, %rdi); mov $0,%ecx; mov $0,%esi; mov $0,%edx; ret
        int[] b = {0x8b, 0x07, 0xf3, 0xa4, 0xb9, 0, 0, 0, 0, 0xbe, 0, 0, 0, 0, 0xba, 0, 0, 0, 0, 0xc3};
        List<Instruction> code = code(b);
        assertThat(new DeadRegisters(code).at(first(code, b), 0)).containsExactlyInAnyOrder("rax", "rdx");
        // mov (%rdi),%eax; cqo (reads %rax, overwrites %rdx); ret: the load's own write of %rax kills it first
        int[] c = {0x8b, 0x07, 0x48, 0x99, 0xc3};
        List<Instruction> cqo = code(c);
        assertThat(new DeadRegisters(cqo).at(first(cqo, c), 0)).containsExactly("rax");
    }

    @Test
    void aProbeInDeadRegistersSavesNothingAndCommitsThroughItsAddressRegister() {
        // mov (%rdi),%eax; mov %rsi,%rcx; ret
        int[] b = {0x8b, 0x07, 0x48, 0x89, 0xf1, 0xc3};
        List<Instruction> code = code(b);
        String asm = TrampolineWriter.assembly(List.of(first(code, b)), Probes.RECORD, SiteWeights.FULL, StackSlots.NONE, new DeadRegisters(code));
        assertThat(asm).doesNotContain("push", "pop", "%rsp")
                .contains("mt_s0:\n\tlea (%rdi),%rax\n\tmov cursor_slot(%rip),%rcx\n\tmov %fs:(%rcx),%rcx\n\tmov %rax,(%rcx)\n"
                        + "\tlea mt_s0(%rip),%rax\n\tmov %rax,8(%rcx)\n\tmov cursor_slot(%rip),%rax\n\tlea 16(%rcx),%rcx\n"
                        + "\tmov %rcx,%fs:(%rax)\n\t.byte 139,7\n");
        // one dead register is not enough: the GOT form, its three registers saved
        String saved = TrampolineWriter.assembly(List.of(first(code, b)), Probes.RECORD, SiteWeights.FULL, StackSlots.NONE,
                new DeadRegisters(code.subList(0, 1)));
        assertThat(saved).contains("\tlea -128(%rsp),%rsp\n\tpush %rax\n\tpush %rdx\n\tpush %r11\n");
        // a checked trampoline keeps the saving form whatever is dead
        assertThat(TrampolineWriter.assembly(List.of(first(code, b)), Probes.BOTH, SiteWeights.FULL, StackSlots.NONE, new DeadRegisters(code)))
                .contains("\tpush %rax\n\tpush %rdx\n\tpush %r11\n").doesNotContain("mov cursor_slot(%rip),%rax");
    }

    @Test
    void aStackAddressIsNotSteppedWhenNothingIsPushed() {
        // mov 8(%rsp),%rax; mov %rsi,%rcx; ret
        int[] b = {0x48, 0x8b, 0x44, 0x24, 0x08, 0x48, 0x89, 0xf1, 0xc3};
        List<Instruction> code = code(b);
        String asm = TrampolineWriter.assembly(List.of(first(code, b)), Probes.RECORD, SiteWeights.FULL, StackSlots.NONE, new DeadRegisters(code));
        assertThat(asm).contains("mt_s0:\n\tlea 8(%rsp),%rax\n").doesNotContain("push");
        assertThat(Arrays.asList(asm.split("\n"))).filteredOn(l -> l.contains("(%rsp)")).hasSize(1);
    }
}
