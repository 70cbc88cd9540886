package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSection;
import org.memtrace.symbols.ElfSegment;

/**
 * Punned jumps (docs/rewriting.md, "Punned jumps"; E9Patch's instruction punning): an instruction of fewer
 * than 5 bytes that the int3 fallback took gets a {@code jmp rel32} anyway, whose rel32 runs past the
 * instruction into the bytes of the ones after it. Those bytes are left as they are, so the rel32's high
 * bytes are fixed by them and only its low {@code length - 1} bytes are free: the jump can only reach a window
 * of 256^(length-1) addresses, one address for a 1-byte instruction. A 16-byte stub is planned at an address
 * in that window ({@code jmp *0(%rip)} and the trap trampoline's address, which the runtime writes), and the
 * runtime maps the stub's page there, fixed to the module's load bias.
 *
 * <p>Bytes written: the instruction's own {@code length} bytes only ({@code e9} and the free low bytes). A
 * branch into any instruction after it finds that instruction's bytes unchanged (the bytes the rel32 reads
 * are its, as whatever the plan writes there makes them: this file reads the bytes of the final code, jumps
 * and int3s included, and decides from the last instruction to the first, so a later instruction's pun is
 * known when an earlier one reads it). A branch into the middle of the instruction itself would meet changed
 * bytes, which a linear sweep assumes never happens, as it does for every 5-byte jump the plan writes.
 *
 * <p>The trap stays in the plan: the runtime writes the pun only when the bytes after the instruction are, at
 * run time, the ones planned (a jump re-aimed because its trampolines moved changes them) and the stub's
 * page could be mapped; otherwise the instruction keeps its int3.
 */
final class Puns {
    /** A stub's room: {@code ff 25 00000000} and an 8-byte address, rounded. */
    static final int STUB = 16;
    /**
     * Room a non-PIE executable's brk heap keeps after its last segment, and the runtime above the break at
     * run time (rw_apply.c's RW_HEAP_ROOM, which says why 32 MB): no stub goes there.
     */
    static final long HEAP_ROOM = 32L << 20;
    /** How far past a non-PIE executable's end the kernel may start its brk heap (Linux 5.18 on, x86-64: 1 GB). */
    static final long BRK_RANDOM = 1L << 30;
    /** The lowest stub address of a non-PIE executable, and the highest of any: user space, with margins. */
    private static final long LOWEST = 0x100000, HIGHEST = 0x7fff_0000_0000L;

    private final ElfFile elf;
    private final TreeMap<Long, byte[]> code = new TreeMap<>();
    /** Bytes the plan writes over the code, by address. */
    private final Map<Long, Byte> written = new HashMap<>();
    /** The plan's jumps by address: their index in the list {@link #add} returns. */
    private final Map<Long, Integer> jumps = new HashMap<>();
    /** Address ranges no stub may touch: the module's pages, the trampolines' room, a non-PIE heap's room. */
    private final TreeMap<Long, Long> refused = new TreeMap<>();
    /** Stub slots taken, start to end, and how far each stub page is filled. */
    private final TreeMap<Long, Long> slots = new TreeMap<>();
    private final TreeMap<Long, Long> fill = new TreeMap<>();
    /**
     * Where a stub goes only when its window has no other room: a non-PIE executable's [end, end + 1 GB + 32 MB),
     * where the break may start and the runtime then refuses the 32 MB above it (one in 32 of these stubs
     * would find no page at run time).
     */
    private long avoidFrom = Long.MAX_VALUE, avoidTo = Long.MAX_VALUE;

    private Puns(ElfFile elf, long textBase, long textRoom) throws ElfFormatException {
        this.elf = elf;
        for (ElfSection s : elf.sections())
            if ((s.flags() & 0x4) != 0 && s.type() != ElfSection.SHT_NOBITS) code.put(s.address(), elf.contents(s));
        long lo = Long.MAX_VALUE, hi = Long.MIN_VALUE;
        for (ElfSegment s : elf.loadSegments()) {
            lo = Math.min(lo, s.vaddr());
            hi = Math.max(hi, s.vaddr() + s.memSize());
        }
        lo &= ~0xfffL;
        hi = (hi + 0xfff) & ~0xfffL;
        refused.put(lo, elf.type() == ElfFile.ET_EXEC ? hi + HEAP_ROOM : hi);
        if (elf.type() == ElfFile.ET_EXEC) {
            avoidFrom = hi;
            avoidTo = hi + BRK_RANDOM + HEAP_ROOM;
        }
        refused.put(textBase & ~0xfffL, (textBase + textRoom + 0xfff) & ~0xfffL);
    }

    /**
     * {@code traps} (in address order) with a pun on each one that can take one; {@code writes} the jumps the
     * plan writes, {@code lengths} each trapped instruction's length, the trampolines' text planned at
     * {@code textBase} with {@code textRoom} bytes.
     */
    static Result add(ElfFile elf, List<PlanFile.Patch> writes, List<PlanFile.Trap> traps, Map<Long, Integer> lengths,
                      Map<Long, Integer> room, long textBase, long textRoom) throws ElfFormatException {
        Puns p = new Puns(elf, textBase, textRoom);
        List<PlanFile.Patch> jumps = new ArrayList<>(writes);
        for (int i = 0; i < jumps.size(); i++) {
            PlanFile.Patch w = jumps.get(i);
            p.jumps.put(w.address(), i);
            for (int k = 0; k < w.jump().length; k++) p.written.put(w.address() + k, w.jump()[k]);
        }
        for (PlanFile.Trap t : traps) p.written.put(t.address(), (byte) 0xcc);
        List<PlanFile.Trap> out = new ArrayList<>(traps);
        Map<Long, Integer> index = new HashMap<>();
        for (int i = 0; i < out.size(); i++) index.put(out.get(i).address(), i);
        for (int i = out.size() - 1; i >= 0; i--) {
            PlanFile.Trap t = out.get(i);
            Integer length = lengths.get(t.address());
            if (t.signalMask() || length == null || length >= PatchPlanner.JUMP_LENGTH) continue;
            PlanFile.Trap punned = p.pun(t, length);
            if (punned == null) punned = p.padded(t, length, jumps, room);
            if (punned == null) punned = p.paddedTrap(t, length, out, index, lengths);
            if (punned != null) out.set(i, punned);
        }
        return new Result(jumps, out);
    }

    /** The plan's jumps (some padded with prefixes) and its int3 places (some punned). */
    record Result(List<PlanFile.Patch> writes, List<PlanFile.Trap> traps) {}

    /**
     * Prefixes a jump may carry before its {@code e9}, the ones that put a window highest first: REX (0x4f to
     * 0x40; no operand of {@code jmp rel32} uses its bits, and its operand size is 64 bits whatever REX.W
     * says), then the segment overrides 64-bit mode ignores (ds, ss, cs, es).
     */
    private static final int[] PREFIXES = {0x4f, 0x4e, 0x4d, 0x4c, 0x4b, 0x4a, 0x49, 0x48, 0x47, 0x46, 0x45, 0x44, 0x43, 0x42, 0x41, 0x40,
            0x3e, 0x36, 0x2e, 0x26};

    /**
     * Prefix padding (docs/rewriting.md, "Punned jumps"): when the instruction after {@code t} (or one after
     * it that starts within the bytes {@code t}'s rel32 reads, the bytes between left as they are) has a jump
     * of the plan's own whose bytes (a run's, all of them) have room for as many prefixes before its
     * {@code e9} as the rel32 reads of it, those prefixes become the pun's high rel32 bytes instead of that
     * jump's {@code e9} and rel32 (a window 0.6 to 1.3 GB above instead of below); the jump keeps its target,
     * its rel32 less the prefixes. Null when no prefix gives a window with room.
     */
    private PlanFile.Trap padded(PlanFile.Trap t, int length, List<PlanFile.Patch> writes, Map<Long, Integer> room) {
        // the jump whose first byte the rel32 reads: right after t, or after bytes no jump writes (a ret, then a
        // 3-byte nop, then a jump's e9 as the top byte); its prefixes fill what the rel32 reads of it
        long b = t.address() + length;
        while (b < t.address() + PatchPlanner.JUMP_LENGTH - 1 && !jumps.containsKey(b) && !written.containsKey(b)) b++;
        Integer j = jumps.get(b);
        int k = (int) (t.address() + PatchPlanner.JUMP_LENGTH - b);
        // at most 3 prefixes: a plan's jump has 8 bytes, and the runtime looks for its e9 among the first 4
        if (j == null || k > 3 || room.getOrDefault(b, 0) < k + PatchPlanner.JUMP_LENGTH) return null;
        PlanFile.Patch w = writes.get(j);
        if ((w.jump()[0] & 0xff) != 0xe9) return null;
        for (int top : PREFIXES) {
            byte[] jump = new byte[k + PatchPlanner.JUMP_LENGTH];
            for (int i = 0; i < k - 1; i++) jump[i] = 0x2e;
            jump[k - 1] = (byte) top;
            jump[k] = (byte) 0xe9;
            PatchPlanner.writeInt(jump, k + 1, PatchPlanner.readInt(w.jump(), 1) - k);
            Map<Long, Byte> before = new HashMap<>();
            for (int i = 0; i < jump.length; i++) before.put(b + i, written.put(b + i, jump[i]));
            PlanFile.Trap punned = pun(t, length);
            if (punned != null) {
                byte[] old = w.old();
                writes.set(j, new PlanFile.Patch(w.address(), old, jump));
                return punned;
            }
            for (var e : before.entrySet()) {
                if (e.getValue() == null) written.remove(e.getKey());
                else written.put(e.getKey(), e.getValue());
            }
        }
        return null;
    }

    /** The byte at {@code a} of the final code, or -1 when {@code a} is not code. */
    private int at(long a) {
        Byte w = written.get(a);
        if (w != null) return w & 0xff;
        var s = code.floorEntry(a);
        if (s == null || a - s.getKey() >= s.getValue().length) return -1;
        return s.getValue()[(int) (a - s.getKey())] & 0xff;
    }

    /** {@code t} with a pun over its {@code length} bytes, or null when no stub fits the window. */
    private PlanFile.Trap pun(PlanFile.Trap t, int length) { return pun(t, length, new byte[0]); }

    /**
     * {@code t} with a pun over its {@code length} bytes that starts with {@code prefixes} before its {@code e9}
     * (prefix padding, so that an earlier pun reading them finds prefixes), or null when no stub fits the window.
     */
    private PlanFile.Trap pun(PlanFile.Trap t, int length, byte[] prefixes) {
        long a = t.address();
        int e = prefixes.length, free = length - e - 1;
        if (free < 0) return null;
        int fixed = 0;
        for (int k = free; k < 4; k++) {
            int b = at(a + e + 1 + k);
            if (b < 0) return null;
            fixed |= b << 8 * k;
        }
        long end = a + e + PatchPlanner.JUMP_LENGTH;
        long window = end + fixed; // rel32 with its free bytes 0, sign-extended
        long size = 1L << 8 * free;
        long stub = place(window, size);
        if (stub == NONE) return null;
        int rel = (int) (stub - end);
        byte[] bytes = new byte[length];
        System.arraycopy(prefixes, 0, bytes, 0, e);
        bytes[e] = (byte) 0xe9;
        for (int k = 0; k < free; k++) bytes[e + 1 + k] = (byte) (rel >>> 8 * k);
        for (int k = 0; k < length; k++) written.put(a + k, bytes[k]);
        slots.put(stub, stub + STUB);
        long page = stub & ~0xfffL;
        fill.merge(page, stub + STUB - page, Math::max);
        return t.withPun(bytes, stub);
    }

    /** {@code t}'s pun taken back: its slot freed, its bytes the int3 and the code's own again. */
    private void unpun(PlanFile.Trap t) {
        if (t.pun().length == 0) return;
        slots.remove(t.stub());
        written.put(t.address(), (byte) 0xcc);
        for (int k = 1; k < t.pun().length; k++) written.remove(t.address() + k);
    }

    /**
     * Successor eviction with prefix padding: when the instruction after {@code t} is trapped too and long
     * enough, its own pun is planned anew with {@code 5 - length} prefixes before its {@code e9}, which are
     * then the bytes {@code t}'s rel32 reads (a window 0.6 to 1.3 GB above instead of below); {@code out[j]}
     * becomes that pun. Null, and the successor as it was, when either pun has no room.
     */
    private PlanFile.Trap paddedTrap(PlanFile.Trap t, int length, List<PlanFile.Trap> out, Map<Long, Integer> index, Map<Long, Integer> lengths) {
        long b = t.address() + length;
        int k = PatchPlanner.JUMP_LENGTH - length;
        Integer j = index.get(b);
        Integer lb = lengths.get(b);
        if (j == null || lb == null || lb >= PatchPlanner.JUMP_LENGTH || lb < k + 1 || out.get(j).signalMask()) return null;
        PlanFile.Trap before = out.get(j);
        unpun(before);
        byte[] prefixes = new byte[k];
        java.util.Arrays.fill(prefixes, (byte) 0x2e);
        prefixes[k - 1] = (byte) PREFIXES[0];
        PlanFile.Trap next = pun(before.withPun(new byte[0], 0), lb, prefixes);
        if (next != null) {
            for (int top : PREFIXES) {
                written.put(b + k - 1, (byte) top);
                PlanFile.Trap punned = pun(t, length);
                if (punned != null) {
                    byte[] bytes = next.pun();
                    bytes[k - 1] = (byte) top;
                    out.set(j, next.withPun(bytes, next.stub()));
                    return punned;
                }
            }
            unpun(next);
        }
        if (before.pun().length > 0) { // as it was
            for (int i = 0; i < before.pun().length; i++) written.put(b + i, before.pun()[i]);
            slots.put(before.stub(), before.stub() + STUB);
        }
        return null;
    }

    /** No stub address (a PIE's may be negative: below its load bias). */
    private static final long NONE = Long.MIN_VALUE;

    /** A stub address in [from, from + size), out of the break's possible way when it can be; {@link #NONE} when none. */
    private long place(long from, long size) {
        long s = place(from, size, true);
        return s != NONE ? s : place(from, size, false);
    }

    /** A stub address in [from, from + size): in a page already used when one has room, else the first allowed; {@link #NONE} when none. */
    private long place(long from, long size, boolean avoid) {
        long last = from + size - 1;
        if (avoid && from >= avoidFrom && last < avoidTo) return NONE;
        int tried = 0;
        for (var e : fill.subMap(from & ~0xfffL, true, last, true).entrySet()) {
            if (++tried > 16) break;
            // a page filled past the window's end has no slot in it: a stub beyond `last` is one the rel32 cannot reach
            long s = align(Math.max(from, e.getKey() + e.getValue()), from, last);
            if (s <= last && allowed(s) && !(avoid && avoided(s))) return s;
        }
        long step = Math.max(0x1000, size / 64);
        for (long s = from; s <= last; s += step) {
            long c = align(s, from, last);
            if (allowed(c) && !(avoid && avoided(c))) return c;
        }
        return NONE;
    }

    private boolean avoided(long s) { return s + STUB > avoidFrom && s < avoidTo; }

    /** {@code s} rounded up to 16 when that stays in [from, last]. */
    private static long align(long s, long from, long last) {
        long up = (s + 15) & ~15L;
        return up <= last ? up : s;
    }

    /** Whether a stub may take [s, s + STUB). */
    private boolean allowed(long s) {
        long e = s + STUB;
        if (elf.type() == ElfFile.ET_EXEC && (s < LOWEST || e > HIGHEST)) return false;
        if (overlaps(refused, s & ~0xfffL, ((e - 1) | 0xfff) + 1)) return false;
        return !overlaps(slots, s, e);
    }

    private static boolean overlaps(TreeMap<Long, Long> ranges, long s, long e) {
        var before = ranges.floorEntry(s);
        if (before != null && before.getValue() > s) return true;
        Long inside = ranges.higherKey(s);
        return inside != null && inside < e;
    }
}
