package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongPredicate;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;

/**
 * Decides, for every memory instruction of a module's code, whether and how a trampoline traces it
 * (docs/rewriting.md, "The planner"). The code is read by a linear sweep of each executable section, the
 * PLT's included, at link-time addresses: gcc and the linker put no data in those sections, which is what
 * makes the sweep exact; hand-written assembly's data in {@code .text} is skipped where a sized {@code @object}
 * symbol names it, and breaks the sweep where nothing does.
 *
 * <p>An instruction of 5 bytes or more gets a {@code jmp rel32} over itself. A shorter one takes its
 * successors into its trampoline up to the first instruction boundary 5 bytes on ("Short instructions"):
 * only where nothing can jump between them, which the planner knows for a function (by its FDE or the symbol
 * table): every way into its middle is a direct branch, the return from a call, both visible to the sweep,
 * or an indirect jump to an address the module's data holds ({@link IndirectTargets}; a function that
 * computes one from a label of its own does not move).
 */
public final class PatchPlanner {
    /** A {@code jmp rel32}. */
    static final int JUMP_LENGTH = 5;

    private final Decoder decoder;
    private final PartRules rules;

    public PatchPlanner(Decoder decoder) { this(decoder, a -> true, true); }

    /**
     * A planner that traces only the memory instructions {@code traced} accepts, and their stack accesses only
     * when {@code stack} (as {@code memtrace cc --no-stack} does): the others get no decision and no probe,
     * and a run may move them like any instruction without memory access.
     */
    public PatchPlanner(Decoder decoder, LongPredicate traced, boolean stack) {
        this.decoder = decoder;
        this.rules = new PartRules(decoder, traced, stack);
    }

    /** The instructions the last {@link #plan} swept, in address order (what follows each patch: {@link DeadRegisters}). */
    private List<Instruction> swept = List.of();

    List<Instruction> swept() { return swept; }

    /** One decision per memory instruction of {@code elf}'s code, in address order. */
    public List<Decision> plan(ElfFile elf) throws ElfFormatException {
        SweptCode code = SweptCode.of(decoder, elf);
        swept = code.instructions();
        List<Decision> out = new ArrayList<>();
        List<Instruction> all = code.instructions();
        long consumed = Long.MIN_VALUE; // the bytes before this belong to a patch already
        long hook = debugState(elf);
        Padding padding = new Padding(all, code.bytes(), code.targets(), hook);
        for (int i = 0; i < all.size(); i++) {
            Instruction insn = all.get(i);
            if (insn.address() >= hook && insn.address() < hook + JUMP_LENGTH) continue;
            if (insn.flow() == Flow.SYSTEM_CALL && setsSignalMask(code, i)) {
                out.add(new Decision.SignalMask(new Decision.Patch(List.of(
                        new Decision.Part(insn, code.bytes().get(i), List.of(), -1, Decision.Move.COPY)))));
                continue;
            }
            if (!rules.traces(insn)) continue;
            Decision d = rules.decide(insn, code.bytes().get(i));
            if (d instanceof Decision.Left l && l.reason() == Decision.Reason.SHORT && !code.movable().isEmpty()) {
                Decision.Patch run = run(code, i, consumed, padding);
                if (run == null) {
                    d = new Decision.Left(insn, Decision.Reason.NEIGHBOURS);
                } else {
                    // the moved successors are decided by the run: each memory instruction among them counts once
                    for (Decision.Part p : run.parts())
                        if (p.instruction() != insn && !p.accesses().isEmpty()) out.add(new Decision.Covered(p.instruction()));
                    d = run;
                    while (i + 1 < all.size() && all.get(i + 1).address() < run.end()) i++;
                }
            }
            if (d instanceof Decision.Left l && (l.reason() == Decision.Reason.NEIGHBOURS || l.reason() == Decision.Reason.SHORT)) {
                Decision.Part alone = rules.trapPart(insn, code.bytes().get(i));
                Decision.Via via = alone == null ? null : padding.near(insn, consumed);
                if (via != null) d = new Decision.Patch(List.of(alone), List.of(), via);
                else if (alone != null) d = new Decision.Trapped(new Decision.Patch(List.of(alone)));
            }
            if (d instanceof Decision.Patch p) consumed = p.end();
            out.add(d);
        }
        return Tails.add(out, all, code.bytes(), rules::tailPart);
    }

    /**
     * ld.so's {@code _dl_debug_state} (the debugger's {@code r_brk}), or -1: its 5 bytes ({@code ret} and
     * padding) are the runtime's dlopen hook's (rw_dlopen.c), so nothing of the loader's plan goes there.
     */
    private static long debugState(ElfFile elf) {
        return elf.dynsym().stream().filter(x -> x.name().equals("_dl_debug_state") && x.isDefined() && x.value() != 0)
                .mapToLong(ElfSymbol::value).findFirst().orElse(-1);
    }

    /** rt_sigprocmask, the system call whose number a {@link Decision.SignalMask} site loads. */
    private static final byte[] MOV_SIGPROCMASK = {(byte) 0xb8, 14, 0, 0, 0};

    /**
     * Whether the {@code syscall} at {@code all[i]} is an {@code rt_sigprocmask}: a {@code mov $14,%eax} among
     * the 8 sequential instructions before it, no branch target between. (A wrong guess costs a trap: the
     * runtime looks at %rax before it emulates.)
     */
    private static boolean setsSignalMask(SweptCode code, int i) {
        List<Instruction> all = code.instructions();
        byte[] self = code.bytes().get(i);
        if (self.length != 2 || (self[0] & 0xff) != 0x0f || self[1] != 0x05) return false;
        for (int k = i - 1; k >= 0 && k >= i - 8; k--) {
            Instruction before = all.get(k);
            if (before.flow() != Flow.SEQUENTIAL || before.nextAddress() != all.get(k + 1).address()
                    || code.targets().contains(all.get(k + 1).address())) return false;
            if (Arrays.equals(code.bytes().get(k), MOV_SIGPROCMASK)) return true;
        }
        return false;
    }

    /**
     * The short memory instruction at {@code all[i]} moved with its neighbours, when they can move: its
     * successors up to a boundary 5 bytes on (the last may be a direct jump, a conditional one or a return,
     * which ends the run), else also the instructions before it that access no memory and that no patch took
     * yet; then every following short memory instruction. One function whose ways in are known, no branch
     * target inside the run, every part one a probe can record. Null when they cannot.
     */
    private Decision.Patch run(SweptCode code, int i, long consumed, Padding padding) {
        List<Instruction> all = code.instructions();
        Instruction first = all.get(i);
        Decision.Part own = rules.part(first, code.bytes().get(i));
        if (own == null) return null;
        List<Decision.Part> parts = new ArrayList<>(List.of(own));
        long start = first.address(), end = first.nextAddress();
        boolean closed = first.flow() != Flow.SEQUENTIAL;
        for (int j = i + 1; !closed && end < start + JUMP_LENGTH && j < all.size(); j++) {
            Instruction next = all.get(j);
            Decision.Part p = next.address() == end && !code.targets().contains(end) ? rules.part(next, code.bytes().get(j)) : null;
            if (p == null) break;
            parts.add(p);
            end = next.nextAddress();
            closed = next.flow() != Flow.SEQUENTIAL;
        }
        // a run that ends in a return or a jump short of 5 bytes: the dead padding after it (Padding), which lies
        // outside the function's range, is room too
        long dead = 0;
        if (closed && end < start + JUMP_LENGTH && code.movable(start, end)) {
            List<Decision.Part> nops = padding.after(end, start + JUMP_LENGTH);
            if (nops != null) {
                parts.addAll(nops);
                dead = nops.getLast().instruction().nextAddress() - end;
                end += dead;
            }
        }
        for (int k = i - 1; end < start + JUMP_LENGTH; k--) {
            if (k < 0 || code.targets().contains(start)) return null;
            Instruction before = all.get(k);
            if (before.nextAddress() != start || before.address() < consumed || rules.traces(before) || padding.taken(before.address())
                    || before.flow() != Flow.SEQUENTIAL) return null;
            Decision.Part p = rules.part(before, code.bytes().get(k));
            if (p == null) return null;
            parts.addFirst(p);
            start = before.address();
        }
        // a short memory instruction right after the run goes with it (a return too, which ends it): its own
        // run might meet a branch target
        for (int j = i + 1; !closed && j < all.size(); j++) {
            Instruction next = all.get(j);
            if (next.address() < end) continue;
            if (!rules.traces(next) || next.length() >= JUMP_LENGTH || next.address() != end
                    || code.targets().contains(end) || !code.movable(start, next.nextAddress())) break;
            Decision.Part p = rules.part(next, code.bytes().get(j));
            if (p == null) break;
            parts.add(p);
            end = next.nextAddress();
            if (next.flow() != Flow.SEQUENTIAL) break; // a return ends the run
        }
        return code.movable(start, end - dead) ? new Decision.Patch(parts) : null;
    }

    static int readInt(byte[] b, int p) {
        return (b[p] & 0xff) | (b[p + 1] & 0xff) << 8 | (b[p + 2] & 0xff) << 16 | (b[p + 3] & 0xff) << 24;
    }

    static void writeInt(byte[] b, int p, int v) {
        for (int i = 0; i < 4; i++) b[p + i] = (byte) (v >>> 8 * i);
    }
}
