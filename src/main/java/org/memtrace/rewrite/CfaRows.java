package org.memtrace.rewrite;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSection;

/**
 * Where the canonical frame address is at each instruction, from a module's {@code .eh_frame} call frame
 * information (docs/check.md, "Stack variables of optimised code"): only the CFA rule is followed
 * ({@code DW_CFA_def_cfa*}, advances, {@code remember_state}/{@code restore_state}); where it is {@code %rsp + k}
 * the row says k, so an operand {@code disp(%rsp)} there is {@code disp - k} from the CFA, the origin of DWARF's
 * {@code DW_OP_fbreg} in gcc's functions (frame base {@code DW_OP_call_frame_cfa}).
 *
 * <p>What it gets wrong: it answers nothing (empty) at a pc whose CFA is another register's ({@code %rbp}), an
 * expression, in code without CFI, or in an FDE it could not read to the end (an unknown opcode, a truncated
 * record): fewer accesses classified, never a wrong offset. The rows trust the CFI: gcc's is exact at every
 * instruction; hand-written assembly with wrong CFI would give wrong offsets.
 */
final class CfaRows {
    private static final int RSP = 7;

    /** The rows of one FDE: from {@code pcs[i]} on, the CFA is {@code %rsp + offsets[i]}; {@code Long.MIN_VALUE}: not %rsp's. */
    private record Table(long start, long end, long[] pcs, long[] offsets) {}

    private final Table[] tables; // sorted by start

    private CfaRows(Table[] tables) { this.tables = tables; }

    /** The rows of {@code elf}'s {@code .eh_frame}; none when it has none or it cannot be read. */
    static CfaRows of(ElfFile elf) {
        try {
            Optional<ElfSection> s = elf.section(".eh_frame");
            if (s.isEmpty() || s.get().type() == ElfSection.SHT_NOBITS) return new CfaRows(new Table[0]);
            return parse(elf.contents(s.get()), s.get().address());
        } catch (Exception e) {
            return new CfaRows(new Table[0]);
        }
    }

    /** k where the CFA is {@code %rsp + k} at {@code pc}, if the CFI says so. */
    Optional<Long> rspOffset(long pc) {
        int lo = 0, hi = tables.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (tables[mid].start <= pc) lo = mid + 1; else hi = mid;
        }
        if (lo == 0 || pc >= tables[lo - 1].end) return Optional.empty();
        Table t = tables[lo - 1];
        int i = Arrays.binarySearch(t.pcs, pc);
        if (i < 0) i = -i - 2;
        if (i < 0 || t.offsets[i] == Long.MIN_VALUE) return Optional.empty();
        return Optional.of(t.offsets[i]);
    }


    /** An {@code .eh_frame} section's {@code bytes} loaded at {@code address}. */
    static CfaRows parse(byte[] bytes, long address) {
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        Map<Integer, EhFrame.Cie> cies = new HashMap<>();
        java.util.List<Table> out = new java.util.ArrayList<>();
        try {
            int at = 0;
            while (at + 4 <= bytes.length) {
                long length = Integer.toUnsignedLong(b.getInt(at));
                if (length == 0 || length == 0xffffffffL) break;
                int idAt = at + 4;
                int next = Math.toIntExact(idAt + length);
                if (next > bytes.length || next <= at) break;
                int id = b.getInt(idAt);
                if (id == 0) {
                    cies.put(at, EhFrame.cie(b, idAt + 4, next));
                } else {
                    EhFrame.Cie cie = cies.get(idAt - id);
                    if (cie != null) {
                        b.position(idAt + 4);
                        long start = EhFrame.pointer(b, cie.fdeEncoding(), address);
                        long range = EhFrame.pointer(b, cie.fdeEncoding() & 0x0f, address);
                        if (cie.augmented()) {
                            long aug = EhFrame.uleb(b);
                            b.position(Math.toIntExact(b.position() + aug));
                        }
                        Table t = rows(b, cie, start, start + range, b.position(), next);
                        if (t != null && start != 0 && range > 0) out.add(t);
                    }
                }
                at = next;
            }
        } catch (RuntimeException e) {
            // a record not understood: the tables read so far stand
        }
        out.sort(java.util.Comparator.comparingLong(Table::start));
        return new CfaRows(out.toArray(new Table[0]));
    }

    /** The CFA rows of one FDE: the CIE's initial instructions, then its own; null when an opcode is not known. */
    private static Table rows(ByteBuffer b, EhFrame.Cie cie, long start, long end, int from, int to) {
        long[] state = {-1, 0}; // CFA register, offset
        Deque<long[]> stack = new ArrayDeque<>();
        var pcs = new java.util.ArrayList<Long>();
        var offsets = new java.util.ArrayList<Long>();
        long[] pc = {start};
        if (!run(b, cie, cie.insnStart(), cie.insnEnd(), state, stack, pc, null, null)) return null;
        if (!run(b, cie, from, to, state, stack, pc, pcs, offsets)) return null;
        pcs.add(pc[0]);
        offsets.add(state[0] == RSP ? state[1] : Long.MIN_VALUE);
        // rows by pc: the last row at each pc wins
        long[] p = new long[pcs.size()], o = new long[pcs.size()];
        int n = 0;
        for (int i = 0; i < pcs.size(); i++) {
            if (n > 0 && p[n - 1] == pcs.get(i)) n--;
            p[n] = pcs.get(i);
            o[n++] = offsets.get(i);
        }
        return new Table(start, end, Arrays.copyOf(p, n), Arrays.copyOf(o, n));
    }

    /**
     * Runs CFA instructions {@code [from, to)}; each advance of {@code pc} closes a row (when {@code pcs} is not
     * null). False on an opcode this reader does not know, or a CFA given by an expression.
     */
    private static boolean run(ByteBuffer b, EhFrame.Cie cie, int from, int to, long[] state, Deque<long[]> stack, long[] pc,
                               java.util.List<Long> pcs, java.util.List<Long> offsets) {
        b.position(from);
        while (b.position() < to) {
            int op = Byte.toUnsignedInt(b.get());
            int high = op & 0xc0, low = op & 0x3f;
            long advance = -1;
            if (high == 0x40) advance = low * cie.codeAlign();
            else if (high == 0x80) EhFrame.uleb(b);
            else if (high == 0xc0) { } // restore a register: not the CFA
            else switch (op) {
                case 0x00 -> { }
                case 0x02 -> advance = Byte.toUnsignedInt(b.get()) * cie.codeAlign();
                case 0x03 -> advance = Short.toUnsignedInt(b.getShort()) * cie.codeAlign();
                case 0x04 -> advance = Integer.toUnsignedLong(b.getInt()) * cie.codeAlign();
                case 0x05, 0x09, 0x2f -> { EhFrame.uleb(b); EhFrame.uleb(b); }
                case 0x06, 0x07, 0x08, 0x2e -> EhFrame.uleb(b);
                case 0x0a -> stack.push(state.clone());
                case 0x0b -> {
                    if (stack.isEmpty()) return false;
                    long[] s = stack.pop();
                    state[0] = s[0];
                    state[1] = s[1];
                }
                case 0x0c -> { state[0] = EhFrame.uleb(b); state[1] = EhFrame.uleb(b); }
                case 0x0d -> state[0] = EhFrame.uleb(b);
                case 0x0e -> state[1] = EhFrame.uleb(b);
                case 0x0f -> { return false; } // the CFA as an expression
                case 0x10, 0x16 -> { EhFrame.uleb(b); long n = EhFrame.uleb(b); b.position(Math.toIntExact(b.position() + n)); }
                case 0x11, 0x14, 0x15 -> { EhFrame.uleb(b); EhFrame.sleb(b); }
                case 0x12 -> { state[0] = EhFrame.uleb(b); state[1] = EhFrame.sleb(b) * cie.dataAlign(); }
                case 0x13 -> state[1] = EhFrame.sleb(b) * cie.dataAlign();
                default -> { return false; }
            }
            if (advance >= 0) {
                if (pcs != null) {
                    pcs.add(pc[0]);
                    offsets.add(state[0] == RSP ? state[1] : Long.MIN_VALUE);
                }
                pc[0] += advance;
            }
        }
        return true;
    }
}
