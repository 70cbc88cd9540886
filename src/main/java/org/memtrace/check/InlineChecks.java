package org.memtrace.check;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The last step of {@link CheckRewriter}: every check left after pruning that tests 1 to 8 bytes becomes an
 * inline test of its shadow, calling the runtime only on its slow path.
 */
final class InlineChecks {
    /** The labels gcc's -g puts for the debug info's locations and scopes: no jump leads to them. */
    private static final Pattern DEBUG_LABEL = Pattern.compile("\\.L(VL|BB|BE|BI|VU)\\d+");
    /**
     * The displacement of the {@code nopl} after a slow call whose run has checks left, plus their number: the
     * runtime reads it at the call's return address and takes them back off the count when that check stops the
     * program (check_shadow.c, rest_of_run). Executed on slow paths only.
     */
    private static final int REST_MARK = 0x6d740000;
    /** A heap block's redzones: at least 32 bytes on the right and 64 on the left (agent/check/check_heap.c). */
    private static final int INTO_REACH = 96;
    /** A live block's header magic (check.h's MC_LIVE): at 64 bytes below the block, its size at 56. */
    private static final int MC_LIVE = 0x4d544c56;

    private InlineChecks() {}

    /**
     * Every remaining check of 1 to 8 bytes becomes an inline test of its shadow byte, calling the runtime
     * only when that byte is not 0 or the access crosses into the next granule. The registers it uses (%rax,
     * %rcx) and the flags are the call's to clobber: gcc planned a call there. The checks are counted in the
     * thread's {@code __memtrace_check_inline} once per run ({@link #runs}), not each: one {@code addq} at a run's
     * first check stands for all of them (a chain of increments of one memory word was 8 % of bzip2's run).
     * An addressable indexed access outside loops whose base
     * {@link IndexBase} finds is also tested against its base's heap block when it lies 96 bytes or more from
     * that base ({@code __memtrace_check_index}: an index that carried it over both redzones into another block).
     */
    static List<String> inline(List<String> lines) {
        List<String> out = new ArrayList<>(lines.size() + lines.size() / 2);
        List<AsmLine> parsed = lines.stream().map(AsmLine::parse).toList();
        boolean[] inLoop = IndexBase.inLoops(parsed);
        int[] run = runs(parsed);
        int n = 0, rest = 0;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            CheckCall c = inlined(parsed.get(i));
            if (c == null) {
                out.add(line);
                continue;
            }
            IndexBase.Base base = inLoop[i] ? null : IndexBase.of(parsed, i);
            String slow = ".Lmtc_x" + n, done = ".Lmtc_d" + n++;
            if (base != null) out.addAll(base.setup());
            if (run[i] > 0) {
                out.add("\tmovq\t__memtrace_check_inline@gottpoff(%rip), %rcx");
                out.add(run[i] == 1 ? "\tincq\t%fs:(%rcx)" : "\taddq\t$" + run[i] + ", %fs:(%rcx)");
                rest = run[i];
            }
            String restMark = --rest > 0 ? "\tnopl\t" + (REST_MARK + rest) + "(%rax)" : null;
            String callee = "__memtrace_slow_" + (c.store() ? "store" : "load") + c.size() + "@PLT";
            if (base == null) {
                out.addAll(outOfLine(c.size(), n - 1, callee, restMark));
                continue;
            }
            String fine = ".Lmtc_i" + (n - 1);
            out.addAll(firstTest(c.size()));
            out.add("\tje\t" + fine);
            out.addAll(exactTests(c.size(), fine, slow));
            out.add(slow + ":");
            out.add("\tcall\t" + callee);
            if (restMark != null) out.add(restMark);
            {
                // addressable: an index under INTO_REACH bytes from its base cannot have crossed both redzones
                out.add("\tjmp\t" + done);
                out.add(fine + ":");
                out.add("\tmovq\t%rdi, %rax");
                out.add("\tsubq\t%rsi, %rax");
                out.add("\taddq\t$" + INTO_REACH + ", %rax");
                out.add("\tcmpq\t$" + 2 * INTO_REACH + ", %rax");
                out.add("\tjb\t" + done);
                out.addAll(liveBlockHolds(c.size(), done, ".Lmtc_xi" + (n - 1)));
                out.add("\tmovl\t$" + (c.size() | (c.store() ? 1 << 8 : 0) | (base.either() ? 1 << 9 : 0)) + ", %edx");
                out.add("\tcall\t__memtrace_check_index@PLT");
                if (restMark != null) out.add(restMark);
            }
            out.add(done + ":");
        }
        return out;
    }

    /**
     * A kept check of 1 to 8 bytes with no index test: its first compare in line, falling through when it is 0
     * (the common case), and everything else out of line, in the section's subsection 1 (after all of its
     * functions' code): the exact tests, and the runtime entered as if called from the line after the compare
     * ({@code leaq ret(%rip), %rcx; pushq %rcx; jmp slow}: the same stack alignment as gcc's call). So the fast
     * path takes no branch (jumping over the slow code in line was 9 % of sqlite3's checked run), and the slow
     * call's return address ({@code .Lmtc_qN}, a site of the table, followed by the run's rest mark, which the
     * fast path executes as a nop) is where the check stands: its function, line, inlined frames (DWARF) and
     * unwind rules are the check's own. The out-of-line instructions themselves have no unwind rules (a debugger
     * stopped on one cannot walk back); a return that no call pushed would trip a CET shadow stack, which the
     * process enables only when every module is marked for it, and the check runtime is not.
     */
    private static List<String> outOfLine(int size, int n, String callee, String restMark) {
        String away = ".Lmtc_o" + n, back = ".Lmtc_q" + n, slow = ".Lmtc_x" + n;
        List<String> out = new ArrayList<>(firstTest(size));
        out.add("\tjne\t" + away);
        out.add(back + ":");
        if (restMark != null) out.add(restMark);
        out.add("\t.subsection\t1");
        out.add(away + ":");
        out.addAll(exactTests(size, back, slow));
        out.add(slow + ":");
        out.add("\tleaq\t" + back + "(%rip), %rcx");
        out.add("\tpushq\t%rcx");
        out.add("\tjmp\t" + callee);
        out.add("\t.subsection\t0");
        return out;
    }

    /**
     * The first compare of the inline test of an access of 1, 2, 4 or 8 bytes at %rdi: zero when the access may
     * be made. The shadow bytes of the access's granule and (for more than one byte) of the next one are both 0,
     * so every byte is addressable wherever in the granule it starts (ASan's test reads only the first granule
     * and misses an unaligned access that crosses into the next). One byte: its shadow byte, kept in %ecx.
     */
    static List<String> firstTest(int size) {
        List<String> out = new ArrayList<>(List.of("\tmovq\t%rdi, %rax", "\tshrq\t$3, %rax"));
        if (size == 1) {
            out.add("\tmovsbl\t2147450880(%rax), %ecx");
            out.add("\ttestl\t%ecx, %ecx");
        } else {
            out.add("\tcmpw\t$0, 2147450880(%rax)");
        }
        return out;
    }

    /**
     * The exact tests after a first compare that was not 0, jumping to {@code fine} when the access may be made
     * and to {@code slow}, the runtime's exact test, which follows them, otherwise: an 8-byte access that
     * starts its granule needs that granule's byte 0 (the next granule is a block's redzone after its last field);
     * a shorter one that stays in its granule, that granule's byte 0 or k with its last byte under k (a partial
     * last granule: a block of 20 bytes' bytes 16..19). Anything else (a poisoned byte, an access across into a
     * partial or poisoned granule) is the runtime's. Before, a 2- or 4-byte access tested its crossing with three
     * more instructions on the fast path and every access to a partial granule called the runtime (2-3 % of
     * sqlite3's checked run). %rax, %rcx and the flags are the call's to clobber.
     */
    static List<String> exactTests(int size, String fine, String slow) {
        List<String> out = new ArrayList<>();
        if (size == 1) {
            out.add("\tmovl\t%edi, %eax");
            out.add("\tandl\t$7, %eax");
            out.add("\tcmpl\t%ecx, %eax");
            out.add("\tjl\t" + fine);
            return out;
        }
        if (size == 8) {
            out.add("\ttestb\t$7, %dil");
            out.add("\tjne\t" + slow);
            out.add("\tcmpb\t$0, 2147450880(%rax)");
            out.add("\tje\t" + fine);
            return out;
        }
        out.add("\tmovsbl\t2147450880(%rax), %ecx");
        out.add("\tmovl\t%edi, %eax");
        out.add("\tandl\t$7, %eax");
        out.add("\taddl\t$" + (size - 1) + ", %eax");
        out.add("\tcmpl\t$7, %eax");
        out.add("\tja\t" + slow);
        out.add("\ttestl\t%ecx, %ecx");
        out.add("\tje\t" + fine);
        out.add("\tcmpl\t%ecx, %eax");
        out.add("\tjl\t" + fine);
        return out;
    }

    /**
     * The index test's fast path: the base (%rsi) starts a live heap block that holds the access's bytes (%rdi):
     * the granule before it is a heap block's left redzone (shadow 0xfa, so the base is 8-aligned and the block's
     * header, {@code struct mc_block} of check.h, lies in the 64 bytes below it), the header's magic is
     * {@code MC_LIVE} and {@code addr - base + size <= size} of the block. Otherwise the runtime looks: a base inside
     * a block, a quarantined one, the other term of an {@code either} base (mainGtU's {@code block[i1]}: 2.4 % of
     * bzip2's checked run in that call). A base at 2^47 or above (an index taken for the base) has no shadow.
     */
    private static List<String> liveBlockHolds(int size, String done, String slow) {
        return List.of(
                "\tleaq\t-1(%rsi), %rax",
                "\tmovq\t%rax, %rcx",
                "\tshrq\t$47, %rcx",
                "\tjne\t" + slow,
                "\tshrq\t$3, %rax",
                "\tcmpb\t$-6, 2147450880(%rax)",
                "\tjne\t" + slow,
                "\tcmpl\t$" + MC_LIVE + ", -64(%rsi)",
                "\tjne\t" + slow,
                "\tmovq\t%rdi, %rax",
                "\tsubq\t%rsi, %rax",
                "\taddq\t$" + size + ", %rax",
                "\tcmpq\t-56(%rsi), %rax",
                "\tjbe\t" + done,
                slow + ":");
    }

    /** The check a line calls when {@link #inline} tests it inline (1 to 8 bytes, an aborting check), else null. */
    private static CheckCall inlined(AsmLine line) {
        CheckCall c = CheckCall.of(line);
        if (c == null || c.size() == 0 || c.size() > 8) return null;
        return ((AsmLine.Instruction) line).operands().getFirst().contains("noabort") ? null : c;
    }

    /**
     * Runs of inlined checks: checks with no label (but debug info's), jump, return, other call, section change or inline assembly
     * between them, so that whoever executes a run's first check executes all of its checks, unless a check stops
     * the program or an access faults in between (check_shadow.c takes a stopping check's rest back off). At a
     * run's first check the number of checks of the run, 0 at the others.
     */
    static int[] runs(List<AsmLine> parsed) {
        int[] run = new int[parsed.size()];
        int first = -1;
        for (int i = 0; i < parsed.size(); i++) {
            AsmLine l = parsed.get(i);
            if (inlined(l) != null) {
                if (first < 0) first = i;
                run[first]++;
            } else if (endsRun(l)) {
                first = -1;
            }
        }
        return run;
    }

    private static boolean endsRun(AsmLine l) {
        return switch (l) {
            case AsmLine.Label x -> !DEBUG_LABEL.matcher(x.name()).matches();
            case AsmLine.Directive d -> !d.name().equals(".loc") && !d.name().startsWith(".cfi_");
            case AsmLine.Instruction in -> {
                String m = in.mnemonic();
                yield in.isJump() || m.startsWith("call") || m.startsWith("ret") || m.startsWith("loop") || m.startsWith("sys")
                        || m.startsWith("int") || m.startsWith("xbegin") || m.startsWith("xabort") || m.equals("ud2")
                        || m.equals("hlt") || m.startsWith("lret") || m.startsWith("iret");
            }
            case AsmLine.Other o -> false;
        };
    }
}
