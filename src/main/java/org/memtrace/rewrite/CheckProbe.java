package org.memtrace.rewrite;

import java.util.List;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;

/**
 * The check a trampoline of {@code memtrace run --check --mode rewrite} makes before a moved instruction runs
 * (docs/check.md, "memtrace run --check"): each access that can touch the heap is tested against the shadow
 * memory of {@code memtrace cc --check} (byte {@code (addr >> 3) + 0x7fff8000}, agent/check/check.h), inline:
 *
 * <pre>
 *   lea -128(%rsp),%rsp; push %rax; push %rcx        # below the red zone
 *   lea EA,%rax                                      # the access's address
 *   mov $3,%ecx; shrx %rcx,%rax,%rcx; movzbl 0x7fff8000(%rcx),%ecx; jrcxz first_ok
 *   call *0x7fff9ff8; .long desc; .long mt_base+INSN - .; jmp done
 * first_ok:                                          # the last byte's granule, when the access has more than one byte
 *   lea n-1(%rax),%rax; mov $3,%ecx; shrx ...; movzbl ...; jrcxz done
 *   lea -(n-1)(%rax),%rax; call *0x7fff9ff8; .long desc; .long mt_base+INSN - .
 * done:
 *   pop %rcx; pop %rax; lea 128(%rsp),%rsp
 * </pre>
 *
 * No instruction of it changes the flags (shrx is BMI2's; jrcxz tests %rcx), so nothing of the program's state
 * needs saving but the two registers. A shadow byte that is not 0 calls the runtime's slow path through the
 * quad at 0x7fff9ff8, which the check runtime fills (agent/check/check_rwprobe.c): an absolute address, so the
 * plan and the runtime that applies it stay those of the tracing rewrite. Accesses of up to 32 bytes are whole
 * when both end granules are 0 (every redzone is 32 bytes or more). A rep string instruction's ranges
 * ({@code %rcx} elements from {@code %rsi}, {@code %rdi}; direction flag clear) go to the runtime every time.
 *
 * <p>Not checked, since no redzone is there in a binary nobody rebuilt: stack slots (implicit ones, and operands
 * based on {@code %rsp}), RIP-relative and absolute operands (globals), {@code %fs}/{@code %gs} operands (thread-local
 * storage).
 */
final class CheckProbe {
    /** The quad the check runtime fills with its slow path's address: the shadow of the null page's last 64 bytes. */
    static final long SLOT = 0x7fff9ff8L;
    static final int WRITE = 0x10000, RANGE = 0x20000;

    private CheckProbe() {}

    /** Whether the access can touch the heap, so is checked. */
    static boolean checked(MemoryAccess a) {
        MemoryOperand m = a.operand();
        if (a.implicitStack() || a.sizeBytes() <= 0) return false;
        if (m.isRipRelative() || m.base().isStackPointer() || m.segment().isSegmentWithBase()) return false;
        return !(m.base().isNone() && m.index().isNone());
    }

    /** The accesses of {@code part} its check tests. */
    static List<MemoryAccess> checks(Decision.Part part) {
        return part.accesses().stream().filter(CheckProbe::checked).toList();
    }

    /** Whether {@code p}'s trampoline checks anything (a patch that does not is not written in a check plan). */
    static boolean checksAny(Decision.Patch p) {
        return p.parts().stream().anyMatch(part -> !checks(part).isEmpty());
    }

    /** The most bytes the checks of {@code p} take. */
    static long bound(Decision.Patch p) {
        return 96L * p.all().stream().mapToInt(part -> checks(part).size()).sum();
    }

    /** The checks of one part, before its bytes; {@code label} is unique in the text. */
    static void emit(StringBuilder s, Decision.Part part, String label) {
        List<MemoryAccess> checks = checks(part);
        for (int i = 0; i < checks.size(); i++) {
            MemoryAccess a = checks.get(i);
            String l = label + "_" + i;
            int desc = (a.write() ? WRITE : 0);
            s.append("\tlea -128(%rsp),%rsp\n\tpush %rax\n\tpush %rcx\n");
            s.append("\tlea ").append(TrampolineWriter.address(a.operand())).append(",%rax\n");
            if (part.repString()) {
                // %rcx elements of the access's size: the range's bytes, in %rcx for the runtime
                s.append("\tlea 0(,%rcx,").append(a.sizeBytes()).append("),%rcx\n");
                slowCall(s, desc | RANGE, part);
            } else {
                int n = a.sizeBytes();
                desc |= n;
                granule(s, l + "_first");
                slowCall(s, desc, part);
                s.append("\tjmp ").append(l).append("_done\n");
                s.append(l).append("_first:\n");
                if (n > 1) {
                    s.append("\tlea ").append(n - 1).append("(%rax),%rax\n");
                    granule(s, l + "_done");
                    s.append("\tlea ").append(-(n - 1)).append("(%rax),%rax\n");
                    slowCall(s, desc, part);
                }
                s.append(l).append("_done:\n");
            }
            s.append("\tpop %rcx\n\tpop %rax\n\tlea 128(%rsp),%rsp\n");
        }
    }

    /** Jumps to {@code ok} when the shadow byte of the address in %rax is 0; clobbers %rcx only. */
    private static void granule(StringBuilder s, String ok) {
        s.append("\tmov $3,%ecx\n\tshrx %rcx,%rax,%rcx\n\tmovzbl 0x7fff8000(%rcx),%ecx\n\tjrcxz ").append(ok).append('\n');
    }

    private static void slowCall(StringBuilder s, int desc, Decision.Part part) {
        s.append("\tcall *").append(SLOT).append("\n\t.long ").append(desc).append("\n\t.long mt_base+")
                .append(part.instruction().address()).append(" - .\n");
    }
}
