package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongPredicate;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSection;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.RegisterOperand;

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
    private static final long SHF_EXECINSTR = 0x4;

    private final Decoder decoder;
    /** The memory instructions to trace, by link-time address (a selection, {@code --omega}); the others only move. */
    private final LongPredicate traced;
    /** Whether stack accesses (through %rsp or %rbp, and implicit slots) of a traced instruction are recorded. */
    private final boolean stack;

    public PatchPlanner(Decoder decoder) { this(decoder, a -> true, true); }

    /**
     * A planner that traces only the memory instructions {@code traced} accepts, and their stack accesses only
     * when {@code stack} (as {@code memtrace cc --no-stack} does): the others get no decision and no probe,
     * and a run may move them like any instruction without memory access.
     */
    public PatchPlanner(Decoder decoder, LongPredicate traced, boolean stack) {
        this.decoder = decoder;
        this.traced = traced;
        this.stack = stack;
    }

    /** Whether the planner records {@code insn}'s accesses. */
    private boolean traces(Instruction insn) { return !insn.accesses().isEmpty() && traced.test(insn.address()); }

    /** The accesses a probe records for {@code insn}: none when it is not traced, else its own (stack ones only with {@link #stack}). */
    private List<MemoryAccess> recorded(Instruction insn) {
        if (!traces(insn)) return List.of();
        return stack ? insn.accesses() : insn.accesses().stream().filter(a -> !a.operand().isStack()).toList();
    }

    /** What the sweep of one module found: its instructions and where control may arrive other than by falling through. */
    private record Code(List<Instruction> instructions, List<byte[]> bytes, Set<Long> targets, TreeMap<Long, Long> movable) {
        /** Whether the instructions in [from, to) lie in one function whose ways in are all known. */
        boolean movable(long from, long to) {
            var f = movable.floorEntry(from);
            return f != null && to <= f.getValue();
        }
    }

    /** The instructions the last {@link #plan} swept, in address order (what follows each patch: {@link DeadRegisters}). */
    private List<Instruction> swept = List.of();

    List<Instruction> swept() { return swept; }

    /** One decision per memory instruction of {@code elf}'s code, in address order. */
    public List<Decision> plan(ElfFile elf) throws ElfFormatException {
        Code code = sweep(elf);
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
            if (!traces(insn)) continue;
            Decision d = decide(insn, code.bytes().get(i));
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
                Decision.Part alone = trapPart(insn, code.bytes().get(i));
                Decision.Via via = alone == null ? null : padding.near(insn, consumed);
                if (via != null) d = new Decision.Patch(List.of(alone), List.of(), via);
                else if (alone != null) d = new Decision.Trapped(new Decision.Patch(List.of(alone)));
            }
            if (d instanceof Decision.Patch p) consumed = p.end();
            out.add(d);
        }
        return Tails.add(out, all, code.bytes(), this::tailPart);
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
    private static boolean setsSignalMask(Code code, int i) {
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

    /** The module's code, the places control may reach other than by falling through, and the functions whose runs may move. */
    private Code sweep(ElfFile elf) throws ElfFormatException {
        List<Instruction> all = new ArrayList<>();
        List<byte[]> bytes = new ArrayList<>();
        Set<Long> targets = new HashSet<>();
        for (ElfSection s : elf.sections()) {
            // the PLT's too: each of its memory instructions (jmp *GOT, push $n, PLT0's push) is 5 bytes or more
            if ((s.flags() & SHF_EXECINSTR) == 0 || s.type() == ElfSection.SHT_NOBITS) continue;
            byte[] code = elf.contents(s);
            targets.add(s.address());
            long from = s.address();
            for (long[] d : dataIn(elf, s)) {
                decode(code, s.address(), from, d[0], all, bytes, targets);
                from = Math.max(from, d[1]);
            }
            decode(code, s.address(), from, s.address() + code.length, all, bytes, targets);
        }
        Set<Long> named = new HashSet<>(); // every address an operand names: a lea of code is a pointer, data a table's start
        for (Instruction insn : all)
            for (MemoryOperand m : insn.memoryOperands()) m.staticAddress().ifPresent(named::add);
        targets.addAll(named);
        targets.addAll(relocated(elf));
        IndirectTargets.add(elf, named, targets);
        TreeMap<Long, Long> functions = functions(elf, targets);
        // an indirect jump lands on an address the data holds (a target now) unless its function computes one
        // from a label of its own
        Set<Long> own = IndirectTargets.ownLabels(all, functions);
        for (Instruction insn : all) {
            boolean indirect = insn.flow() == Flow.JUMP && insn.branchTarget().isEmpty();
            var f = functions.floorEntry(insn.address());
            if (indirect && f != null && insn.address() < f.getValue() && own.contains(f.getKey())) functions.remove(f.getKey());
        }
        return new Code(all, bytes, targets, functions);
    }

    /** Decodes {@code code} (loaded at {@code base}) from {@code from} to {@code to}, adding what it finds. */
    private void decode(byte[] code, long base, long from, long to, List<Instruction> all, List<byte[]> bytes, Set<Long> targets) {
        if (to <= from) return;
        for (Instruction insn : decoder.decodeAll(code, (int) (from - base), (int) (to - from), from)) {
            int at = (int) (insn.address() - base);
            all.add(insn);
            bytes.add(Arrays.copyOfRange(code, at, at + insn.length()));
            insn.branchTarget().ifPresent(targets::add);
            if (insn.flow() == Flow.CALL) targets.add(insn.nextAddress());
        }
    }

    /**
     * The data the symbol tables place in code section {@code s} (sized {@code STT_OBJECT} symbols, which
     * hand-written assembly declares with {@code .type x, @object}), start to end in address order: the sweep
     * skips them, so no patch overwrites a table, and starts again at each one's end, where the code after it
     * begins (a table whose last bytes begin an instruction would otherwise swallow that code's first bytes).
     */
    private static List<long[]> dataIn(ElfFile elf, ElfSection s) throws ElfFormatException {
        List<ElfSymbol> symbols = new ArrayList<>(elf.symtab());
        symbols.addAll(elf.dynsym());
        List<long[]> out = new ArrayList<>();
        long end = s.address() + s.size();
        for (ElfSymbol x : symbols)
            if (x.isDefined() && x.isObject() && x.size() > 0 && x.value() >= s.address() && x.value() < end)
                out.add(new long[] {x.value(), Math.min(end, x.value() + x.size())});
        out.sort(java.util.Comparator.comparingLong((long[] r) -> r[0]));
        return out;
    }

    /**
     * The functions whose runs may move, start to end: one per FDE of {@code .eh_frame} but those whose LSDA
     * could not be read (the unwinder enters a landing pad at an address no branch names: every landing pad
     * read becomes a target), and, where no FDE covers any of its bytes,
     * each sized function of the symbol table in a module without {@code .gcc_except_table} (hand-written
     * assembly without CFI). Every FDE start and symbol value becomes a target: a function pointer may hold it.
     */
    private static TreeMap<Long, Long> functions(ElfFile elf, Set<Long> targets) throws ElfFormatException {
        List<long[]> ranges = new ArrayList<>(); // start, end, 1 when it may move
        TreeMap<Long, Long> described = new TreeMap<>();
        for (EhFrame.Fde f : EhFrame.of(elf).fdes()) {
            targets.add(f.start());
            targets.addAll(f.landingPads());
            described.merge(f.start(), f.end(), Math::max);
            ranges.add(new long[] {f.start(), f.end(), f.opaque() ? 0 : 1});
        }
        List<ElfSymbol> symbols = new ArrayList<>(elf.symtab());
        symbols.addAll(elf.dynsym());
        boolean pads = elf.section(".gcc_except_table").isPresent();
        for (ElfSymbol s : symbols) {
            if (!s.isDefined() || s.value() == 0) continue;
            targets.add(s.value()); // any symbol may be a function pointer's or a jump's destination
            long end = s.value() + s.size();
            if (pads || !s.isFunction() || s.size() <= 0) continue;
            var before = described.floorEntry(s.value());
            var inside = described.ceilingKey(s.value());
            boolean covered = before != null && before.getValue() > s.value() || inside != null && inside < end;
            if (!covered) ranges.add(new long[] {s.value(), end, 1});
        }
        // ranges that overlap (a symbol's function inside another, an FDE of code a symbol also sizes): none moves
        ranges.sort(java.util.Comparator.comparingLong((long[] r) -> r[0]).thenComparingLong(r -> r[1]));
        long reach = Long.MIN_VALUE;
        long[] last = null;
        for (long[] r : ranges) {
            if (r[0] < reach) {
                r[2] = 0;
                if (last != null) last[2] = 0;
            }
            if (r[1] > reach) {
                reach = r[1];
                last = r;
            }
        }
        TreeMap<Long, Long> functions = new TreeMap<>();
        for (long[] r : ranges) if (r[2] == 1) functions.put(r[0], r[1]);
        return functions;
    }

    /**
     * The code addresses the dynamic relocations write into data (R_X86_64_RELATIVE and IRELATIVE addends):
     * function pointers of a position-independent module, which may name any instruction.
     */
    private static Set<Long> relocated(ElfFile elf) throws ElfFormatException {
        Set<Long> out = new HashSet<>();
        for (ElfSection s : elf.sections()) {
            if (s.type() != ElfSection.SHT_RELA || s.size() % 24 != 0) continue;
            var b = elf.contentsOf(s).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            for (int at = 0; at + 24 <= b.limit(); at += 24) {
                int type = (int) b.getLong(at + 8);
                if (type == 8 || type == 37) out.add(b.getLong(at + 16));
            }
        }
        return out;
    }

    /**
     * The short memory instruction at {@code all[i]} moved with its neighbours, when they can move: its
     * successors up to a boundary 5 bytes on (the last may be a direct jump, a conditional one or a return,
     * which ends the run), else also the instructions before it that access no memory and that no patch took
     * yet; then every following short memory instruction. One function whose ways in are known, no branch
     * target inside the run, every part one a probe can record. Null when they cannot.
     */
    private Decision.Patch run(Code code, int i, long consumed, Padding padding) {
        List<Instruction> all = code.instructions();
        Instruction first = all.get(i);
        Decision.Part own = part(first, code.bytes().get(i));
        if (own == null) return null;
        List<Decision.Part> parts = new ArrayList<>(List.of(own));
        long start = first.address(), end = first.nextAddress();
        boolean closed = first.flow() != Flow.SEQUENTIAL;
        for (int j = i + 1; !closed && end < start + JUMP_LENGTH && j < all.size(); j++) {
            Instruction next = all.get(j);
            Decision.Part p = next.address() == end && !code.targets().contains(end) ? part(next, code.bytes().get(j)) : null;
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
            if (before.nextAddress() != start || before.address() < consumed || traces(before) || padding.taken(before.address())
                    || before.flow() != Flow.SEQUENTIAL) return null;
            Decision.Part p = part(before, code.bytes().get(k));
            if (p == null) return null;
            parts.addFirst(p);
            start = before.address();
        }
        // a short memory instruction right after the run goes with it (a return too, which ends it): its own
        // run might meet a branch target
        for (int j = i + 1; !closed && j < all.size(); j++) {
            Instruction next = all.get(j);
            if (next.address() < end) continue;
            if (!traces(next) || next.length() >= JUMP_LENGTH || next.address() != end
                    || code.targets().contains(end) || !code.movable(start, next.nextAddress())) break;
            Decision.Part p = part(next, code.bytes().get(j));
            if (p == null) break;
            parts.add(p);
            end = next.nextAddress();
            if (next.flow() != Flow.SEQUENTIAL) break; // a return ends the run
        }
        return code.movable(start, end - dead) ? new Decision.Patch(parts) : null;
    }

    /**
     * An instruction as a part of a run, or null when a probe could not record it or its bytes could not
     * move: sequential ones, a plain {@code ret}, direct jumps and conditional jumps without prefixes (the
     * assembler writes them anew) and calls (emulated; a call ends the run, so its return lands past it);
     * never an indirect jump, a loop or jrcxz.
     */
    private Decision.Part part(Instruction insn, byte[] bytes) {
        if (refusal(insn, bytes) != null) return null;
        Decision.Move move = Decision.Move.COPY;
        switch (insn.flow()) {
            case SEQUENTIAL -> { }
            case RETURN -> {
                if ((bytes[0] & 0xff) != 0xc3 && (bytes[0] & 0xff) != 0xc2) return null;
            }
            case JUMP, CONDITIONAL_JUMP -> {
                int op = bytes[0] & 0xff;
                boolean plain = op == 0xeb || op == 0xe9 || (op >= 0x70 && op <= 0x7f)
                        || op == 0x0f && bytes.length == 6 && (bytes[1] & 0xf0) == 0x80;
                if (!plain || insn.branchTarget().isEmpty()) return null;
                move = Decision.Move.BRANCH;
            }
            case CALL -> move = callMove(insn, bytes);
            default -> { return null; }
        }
        return new Decision.Part(insn, bytes, recorded(insn), ripDisplacement(insn, bytes), move);
    }

    /**
     * A short instruction as the one part of a trampoline the int3 fallback enters (the instruction keeps its
     * place, so nothing about its neighbours matters), or null when a probe cannot record it: sequential
     * ones, any return, an indirect jump (its bytes, RIP-relative re-aimed; nothing falls through) and the
     * calls a trampoline emulates.
     */
    private Decision.Part trapPart(Instruction insn, byte[] bytes) {
        if (refusal(insn, bytes) != null) return null;
        Decision.Move move = switch (insn.flow()) {
            case SEQUENTIAL, RETURN -> Decision.Move.COPY;
            case JUMP -> insn.branchTarget().isEmpty() ? Decision.Move.COPY : null;
            case CALL -> callMove(insn, bytes);
            default -> null;
        };
        return move == null ? null : new Decision.Part(insn, bytes, insn.accesses(), ripDisplacement(insn, bytes), move);
    }

    /**
     * An instruction as a copy in a trampoline's tail (docs/rewriting.md, "Trampoline tails"): as the int3
     * fallback's part (sequential ones, any return, an indirect jump, the calls a trampoline emulates), its
     * accesses the ones this planner records; a plain conditional jump as a run's last part is (written anew
     * to its target; the tail goes on where it falls through); null for any other (a direct jump, a system
     * call, a trap, an instruction no probe can record), which ends the tail before it.
     */
    Decision.Part tailPart(Instruction insn, byte[] bytes) {
        if (insn.flow() == Flow.CONDITIONAL_JUMP) return part(insn, bytes);
        Decision.Part p = trapPart(insn, bytes);
        return p == null ? null : new Decision.Part(insn, bytes, recorded(insn), p.ripDisplacement(), p.move());
    }

    /** The decision for one instruction that accesses memory, {@code bytes} its encoding, on its own. */
    Decision decide(Instruction insn, byte[] bytes) {
        Decision.Reason no = refusal(insn, bytes);
        if (no != null) return new Decision.Left(insn, no);
        if (insn.length() < JUMP_LENGTH) return new Decision.Left(insn, Decision.Reason.SHORT);
        Decision.Move move = insn.flow() == Flow.CALL ? callMove(insn, bytes) : Decision.Move.COPY;
        return new Decision.Patch(List.of(new Decision.Part(insn, bytes, recorded(insn), ripDisplacement(insn, bytes), move)));
    }

    /**
     * Why a probe could not record {@code insn}, or its bytes could not run in a trampoline; null when they
     * can. A probe computes 64-bit addresses of general registers, adds the thread pointer to an {@code %fs}
     * operand when it is the instruction's last access (computed before the cursor is loaded), records a rep
     * string instruction's pointers and count, and re-aims a RIP-relative displacement it can find.
     */
    private Decision.Reason refusal(Instruction insn, byte[] bytes) {
        if (insn.rep() && !Decision.Part.repString(insn) && !insn.accesses().isEmpty()) return Decision.Reason.REP;
        if (insn.flow() == Flow.CALL && callMove(insn, bytes) == null) return Decision.Reason.CALL;
        List<MemoryAccess> accesses = insn.accesses();
        for (int k = 0; k < accesses.size(); k++) {
            MemoryOperand m = accesses.get(k).operand();
            boolean fsLast = m.segment().name().equals("fs") && k == accesses.size() - 1;
            if (m.segment().isSegmentWithBase() && !fsLast) return Decision.Reason.SEGMENT;
            if (!addressable(m) || accesses.get(k).sizeBytes() > 255) return Decision.Reason.ADDRESSING;
        }
        for (MemoryOperand m : insn.memoryOperands())
            if (m.isRipRelative() && ripDisplacement(insn, bytes, m) < 0) return Decision.Reason.ADDRESSING;
        return null;
    }

    /**
     * How a call runs in a trampoline: {@code e8 rel32} pushes its return address and jumps; {@code ff /2}
     * through a 64-bit register other than %rsp or a memory operand without segment pushes it and jumps
     * through the same operand. Null for others (far calls, a 32-bit address).
     */
    private static Decision.Move callMove(Instruction insn, byte[] bytes) {
        if (insn.branchTarget().isPresent())
            return bytes.length == JUMP_LENGTH && (bytes[0] & 0xff) == 0xe8 ? Decision.Move.CALL : null;
        var explicit = insn.operands().stream().filter(o -> switch (o) {
            case RegisterOperand r -> r.visibility() == Operand.Visibility.EXPLICIT;
            case MemoryOperand m -> m.visibility() == Operand.Visibility.EXPLICIT;
            default -> false;
        }).toList();
        if (explicit.size() != 1) return null;
        return switch (explicit.getFirst()) {
            case RegisterOperand r -> r.register().widthBits() == 64 && !r.register().isStackPointer() ? Decision.Move.INDIRECT_CALL : null;
            case MemoryOperand m -> m.sizeBytes() == 8 && !m.segment().isSegmentWithBase() && addressable(m) ? Decision.Move.INDIRECT_CALL : null;
            default -> null;
        };
    }

    /** Where the instruction's RIP-relative displacement sits in {@code bytes}; -1 when it has none. */
    private int ripDisplacement(Instruction insn, byte[] bytes) {
        for (MemoryOperand m : insn.memoryOperands()) if (m.isRipRelative()) return ripDisplacement(insn, bytes, m);
        return -1;
    }

    /** Whether a probe's {@code lea} can compute the operand: 64-bit general registers only (no VSIB, no addr32). */
    private static boolean addressable(MemoryOperand m) {
        boolean base = m.base().isNone() || m.isRipRelative() || m.base().widthBits() == 64;
        boolean index = m.index().isNone() || m.index().widthBits() == 64;
        return base && index;
    }

    /**
     * Where the RIP-relative displacement sits in {@code bytes}: the 4-byte field holding it that, changed,
     * changes the decoded displacement by as much (so an immediate that happens to hold the same bytes is
     * not taken for it); -1 when none does.
     */
    private int ripDisplacement(Instruction insn, byte[] bytes, MemoryOperand m) {
        for (int p = bytes.length - 4; p >= 1; p--) {
            if (readInt(bytes, p) != (int) m.displacement()) continue;
            byte[] moved = bytes.clone();
            writeInt(moved, p, (int) m.displacement() + 0x1000);
            Optional<Instruction> again = decoder.decode(moved, 0, insn.address());
            if (again.isEmpty() || again.get().length() != bytes.length) continue;
            for (MemoryOperand o : again.get().memoryOperands())
                if (o.isRipRelative() && o.displacement() == m.displacement() + 0x1000) return p;
        }
        return -1;
    }

    static int readInt(byte[] b, int p) {
        return (b[p] & 0xff) | (b[p + 1] & 0xff) << 8 | (b[p + 2] & 0xff) << 16 | (b[p + 3] & 0xff) << 24;
    }

    static void writeInt(byte[] b, int p, int v) {
        for (int i = 0; i < 4; i++) b[p + i] = (byte) (v >>> 8 * i);
    }
}
