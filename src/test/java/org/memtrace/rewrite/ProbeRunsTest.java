package org.memtrace.rewrite;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Instruction;

/**
 * Which trampoline parts share one probe (ProbeRuns) and where their %rsp-based sites point: decoded from
 * bytes, each part a copy with all its accesses, as the planner makes them.
 */
class ProbeRunsTest {
    private static final long AT = 0x401000;

    private static List<Decision.Part> parts(int... code) {
        byte[] b = new byte[code.length];
        for (int i = 0; i < code.length; i++) b[i] = (byte) code[i];
        List<Decision.Part> out = new ArrayList<>();
        for (Instruction insn : new Decoder().decodeAll(b, 0, b.length, AT)) {
            byte[] own = java.util.Arrays.copyOfRange(b, (int) (insn.address() - AT), (int) (insn.address() - AT) + insn.length());
            out.add(new Decision.Part(insn, own, insn.accesses(), -1, Decision.Move.COPY));
        }
        return out;
    }

    @Test
    void aPrologueSharesOneProbeItsPushesSteppedByWhatEachMoved() {
        // push %rbp; push %rbx; sub $0x28,%rsp; mov %rdi,8(%rsp)
        List<Decision.Part> p = parts(0x55, 0x53, 0x48, 0x83, 0xec, 0x28, 0x48, 0x89, 0x7c, 0x24, 0x08);
        assertThat(ProbeRuns.run(p, 0)).containsExactly(0L, -8L, -16L, -56L);
        assertThat(TrampolineWriter.sites(p.get(1), -8)).extracting(TrampolineWriter.Site::address).containsExactly("136(%rsp)");
        assertThat(TrampolineWriter.sites(p.get(3), -56)).extracting(TrampolineWriter.Site::address).containsExactly("104(%rsp)");
        String asm = TrampolineWriter.assembly(List.of(new Decision.Patch(p)));
        assertThat(asm.split("lea -128\\(%rsp\\),%rsp", -1)).as("one probe for the four parts").hasSize(2);
        assertThat(asm).contains("lea 144(%rsp),%rax", "lea 136(%rsp),%rax", "lea 104(%rsp),%rax").contains("lea 48(%rdx),%rdx");
    }

    @Test
    void anAddressReadingWhatAnEarlierPartWroteStartsAProbeOfItsOwn() {
        // mov (%rdi),%rax; mov (%rax),%rdx; mov 8(%rsi),%rcx
        List<Decision.Part> p = parts(0x48, 0x8b, 0x07, 0x48, 0x8b, 0x10, 0x48, 0x8b, 0x4e, 0x08);
        assertThat(ProbeRuns.run(p, 0)).containsExactly(0L);
        assertThat(ProbeRuns.run(p, 1)).containsExactly(0L, 0L);
    }

    @Test
    void anUnknownMoveOfRspKeepsLaterStackAddressesOut() {
        // mov %rbp,%rsp; mov (%rdi),%eax; push %rbx
        List<Decision.Part> p = parts(0x48, 0x89, 0xec, 0x8b, 0x07, 0x53);
        assertThat(ProbeRuns.rspStep(p.get(0).instruction())).isNull();
        // mov (%rdi),%eax; mov %rbp,%rsp; push %rbx: the push's address is not known at the probe
        List<Decision.Part> q = parts(0x8b, 0x07, 0x48, 0x89, 0xec, 0x53);
        assertThat(ProbeRuns.run(q, 0)).containsExactly(0L, 0L);
    }

    @Test
    void aConditionalJumpEndsTheRun() {
        // cmp %eax,(%rdi); jne +0; mov (%rsi),%eax
        List<Decision.Part> p = parts(0x39, 0x07, 0x75, 0x00, 0x8b, 0x06);
        assertThat(ProbeRuns.run(p, 0)).containsExactly(0L, 0L);
    }
}
