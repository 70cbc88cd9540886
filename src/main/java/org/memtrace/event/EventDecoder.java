package org.memtrace.event;

import static org.memtrace.event.StreamLayout.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Decodes one record (header included, padding records excluded) into an {@link Event}. Every length is
 * checked against the record's size so a damaged stream ends in a {@link StreamFormatException} instead
 * of a wrong event.
 */
public final class EventDecoder {
    private EventDecoder() {}

    // Unaligned layouts: saved streams and test rings may live in heap segments without 8-byte alignment.
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED;

    public static int type(MemorySegment s, long off) { return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, off)); }

    public static int flags(MemorySegment s, long off) { return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, off + 1)); }

    public static int size(MemorySegment s, long off) { return Short.toUnsignedInt(s.get(U16, off + 2)); }

    public static int tid(MemorySegment s, long off) { return s.get(U32, off + 4); }

    /** Whether a record's header word is a fault's with its two fields (ip, address) after it. */
    static boolean isFault(long header) {
        return (header & 0xff) == MT_ACCESS && (header >>> 16 & 0xffff) >= 24;
    }

    /**
     * Hands the record at {@code off} to {@code sink}: a fault by its fields ({@link EventSink#fault}, no
     * object made), any other record as its decoded {@link Event}, which is returned; null for a fault.
     */
    public static Event deliver(MemorySegment s, long off, long position, EventSink sink) {
        long header = s.get(U64, off);
        if (isFault(header)) {
            int flags = (int) (header >>> 8 & 0xff);
            sink.fault((int) (header >>> 32), s.get(U64, off + 8), s.get(U64, off + 16),
                    (flags & ACC_WRITE) != 0, (flags & ACC_SAME_STEP) != 0);
            return null;
        }
        Event event = decodeOther(s, off, position);
        sink.accept(event);
        return event;
    }

    /**
     * Decodes the record of {@code size} bytes at {@code off} in {@code s}. {@code position} is the record's
     * stream position, used only in error messages.
     */
    public static Event decode(MemorySegment s, long off, long position) {
        // Faults are nearly every record of a trace: one read of the header word and two of the fields, in a
        // method small enough for the JIT to inline the segment accesses into the caller's loop.
        long header = s.get(U64, off);
        if (isFault(header)) {
            int flags = (int) (header >>> 8 & 0xff);
            return new Event.Access((int) (header >>> 32), s.get(U64, off + 8), s.get(U64, off + 16),
                    (flags & ACC_WRITE) != 0, (flags & ACC_SAME_STEP) != 0);
        }
        return decodeOther(s, off, position);
    }

    /**
     * As {@link #decode(MemorySegment, long, long)}, for a record held as little-endian words from
     * {@code words[0]} ({@code .mtr} slots): read from the array directly, without a segment's checks per field.
     */
    public static Event decode(long[] words, long position) {
        return decode(words, 0, position);
    }

    /**
     * As {@link #decode(long[], long)}, for a record from {@code words[at]} on: a {@code .mtr} chunk's record
     * is decoded where the chunk's words hold it, without a copy. The words must hold the whole record.
     */
    public static Event decode(long[] words, int at, long position) {
        long header = words[at];
        int flags = (int) (header >>> 8 & 0xff);
        if (isFault(header))
            return new Event.Access((int) (header >>> 32), words[at + 1], words[at + 2], (flags & ACC_WRITE) != 0, (flags & ACC_SAME_STEP) != 0);
        // an allocation-heavy trace's records are mostly these: decoded here, in a method small enough to inline
        if ((header & 0xff) == MT_ALLOC && size(header) >= 80 && Event.AllocFunction.known(flags))
            return new Event.Alloc((int) (header >>> 32), Event.AllocFunction.of(flags), words[at + 1], words[at + 2], words[at + 3],
                    Arrays.copyOfRange(words, at + 4, at + 10), callers(words, at, size(header)));
        return decodeOther(at == 0 ? words : Arrays.copyOfRange(words, at, at + Math.max(1, (size(header) + 7) / 8)), position);
    }

    /** The return addresses past an allocation record's 80 bytes (stack format 1); the words must hold them. */
    private static long[] callers(long[] words, int at, int size) {
        int n = (size - 80) / 8;
        if (n <= 0) return Event.Alloc.NO_CALLERS;
        return Arrays.copyOfRange(words, at + 10, at + 10 + Math.min(n, words.length - at - 10));
    }

    /** The size field of a record's header word. */
    public static int size(long header) { return (int) (header >>> 16 & 0xffff); }

    /**
     * The record at {@code off} copied into words (its fields are few and read once) and decoded from them;
     * what its size field claims past the segment's end reads as zeros.
     */
    private static Event decodeOther(MemorySegment s, long off, long position) {
        int size = size(s, off);
        long[] words = new long[Math.max(1, (size + 7) / 8)];
        MemorySegment.copy(s, off, MemorySegment.ofArray(words), 0, Math.min(size, s.byteSize() - off));
        return decodeOther(words, position);
    }

    private static Event decodeOther(long[] words, long position) {
        long header = words[0];
        int type = (int) (header & 0xff);
        int flags = (int) (header >>> 8 & 0xff);
        int size = size(header);
        int tid = (int) (header >>> 32);
        var r = new Reader(words, size, position, type);
        return switch (type) {
            case MT_HELLO -> {
                r.need(48);
                yield new Event.Hello(tid, r.u64(8), r.u64(16), r.u64(24), r.u64(32), (int) r.u64(40), flags);
            }
            case MT_ACCESS -> {
                r.need(24);
                yield new Event.Access(tid, r.u64(8), r.u64(16), (flags & ACC_WRITE) != 0, (flags & ACC_SAME_STEP) != 0);
            }
            case MT_BLOCK -> {
                r.need(48);
                Event.BlockOp op = switch (flags & BLK_OP_MASK) {
                    case 1 -> Event.BlockOp.COPY;
                    case 2 -> Event.BlockOp.STORE;
                    case 3 -> Event.BlockOp.FETCH;
                    default -> throw r.bad("unknown block operation " + (flags & BLK_OP_MASK));
                };
                boolean syscall = (flags & BLK_SYSCALL) != 0;
                int what = r.u32(40);
                if (!syscall && (what < 1 || what > 5)) throw r.bad("unknown block function " + what);
                yield new Event.Block(tid, op, syscall, r.u64(8), r.u64(16), r.u64(24), r.u64(32), what);
            }
            case MT_ALLOC -> {
                r.need(80);
                if (!Event.AllocFunction.known(flags)) throw r.bad("unknown allocation function " + flags);
                long[] args = new long[6];
                for (int i = 0; i < 6; i++) args[i] = r.u64(32 + 8L * i);
                long[] callers = new long[Math.max(0, (size - 80) / 8)];
                for (int i = 0; i < callers.length; i++) callers[i] = r.u64(80 + 8L * i);
                yield new Event.Alloc(tid, Event.AllocFunction.of(flags), r.u64(8), r.u64(16), r.u64(24), args,
                        callers.length == 0 ? Event.Alloc.NO_CALLERS : callers);
            }
            case MT_MODULE -> {
                r.need(24);
                int idLen = r.u32(16);
                int pathLen = r.u32(20);
                byte[] id = r.bytes(24, idLen);
                yield new Event.Module(tid, r.u64(8), id, r.string(24L + idLen, pathLen));
            }
            case MT_MAPPING -> {
                r.need(40);
                yield new Event.Mapping(tid, r.u64(8), r.u64(16), r.u64(24), r.u32(32), (flags & MAP_TRACED) != 0,
                        r.string(40, r.u32(36)));
            }
            case MT_RANGE -> {
                r.need(32);
                if (flags != RANGE_ADD && flags != RANGE_REMOVE) throw r.bad("unknown range change " + flags);
                int kind = r.u32(24);
                if (Integer.bitCount(kind) != 1 || kind > 8) throw r.bad("unknown region kind " + kind);
                yield new Event.Range(tid, flags == RANGE_ADD, r.u64(8), r.u64(16), Event.RegionKind.of(kind), r.u32(28));
            }
            case MT_THREAD -> {
                r.need(16);
                if (flags != THREAD_START && flags != THREAD_EXIT) throw r.bad("unknown thread change " + flags);
                yield new Event.ThreadEvent(tid, flags == THREAD_START, r.u64(8));
            }
            case MT_CONTROL -> {
                r.need(16);
                if (flags != CTL_START && flags != CTL_STOP) throw r.bad("unknown control " + flags);
                yield new Event.Control(tid, flags == CTL_START, r.u64(8));
            }
            case MT_EXIT -> {
                r.need(40);
                Event.ExitKind kind = switch (flags) {
                    case EXIT_NORMAL -> Event.ExitKind.NORMAL;
                    case EXIT_EXEC -> Event.ExitKind.EXEC;
                    case EXIT_SIGNAL -> Event.ExitKind.SIGNAL;
                    case EXIT_EXEC_FAILED -> Event.ExitKind.EXEC_FAILED;
                    default -> throw r.bad("unknown exit kind " + flags);
                };
                yield new Event.Exit(tid, kind, r.u64(8), r.u64(16), r.u64(24), r.string(40, r.u32(32)));
            }
            case MT_STATS -> {
                r.need(48);
                yield new Event.Stats(tid, r.u64(8), r.u64(16), r.u64(24), r.u64(32), r.u64(40));
            }
            case MT_FORK -> {
                r.need(16);
                yield new Event.Fork(tid, r.u64(8));
            }
            case MT_WRITER -> {
                r.need(32);
                // 48 bytes since the writer-less count (rewrite mode's threads writing their own buffers)
                yield size >= 48 ? new Event.Writer(tid, r.u64(8), r.u64(16), r.u64(24), (flags & WRITER_NONE) != 0, r.u64(32), r.u64(40))
                        : new Event.Writer(tid, r.u64(8), r.u64(16), r.u64(24));
            }
            case MT_FALLBACK -> {
                r.need(24);
                // 48 bytes since the puns' counts (written, kept their int3: bytes not as planned, no stub page)
                yield size >= 48 ? new Event.Fallback(tid, r.u64(8), r.u64(16), r.u64(24), r.u64(32), r.u64(40))
                        : new Event.Fallback(tid, r.u64(8), r.u64(16));
            }
            case MT_CONTEXT -> {
                // format 2 (rewrite mode): word 0 is the instruction whose trampoline's records have the stack
                int first = (flags & CONTEXT_INSTRUCTION) != 0 ? 1 : 0;
                if (first == 1) r.need(16);
                long[] callers = new long[(size - 8) / 8 - first];
                for (int i = 0; i < callers.length; i++) callers[i] = r.u64(8 + 8L * (i + first));
                yield new Event.Context(tid, callers, first == 1 ? r.u64(8) : Event.Context.ANY);
            }
            default -> throw r.bad("unknown record type " + type);
        };
    }

    /** Bounds-checked field access inside one record, held as little-endian words. */
    private record Reader(long[] w, int size, long position, int type) {
        void need(int min) {
            if (size < min) throw bad("record of type " + type + " is " + size + " bytes, needs at least " + min);
        }

        /** Fields at multiples of 8 bytes. */
        long u64(long at) { return w[(int) (at >>> 3)]; }

        /** Fields at multiples of 4 bytes. */
        int u32(long at) { return (int) (w[(int) (at >>> 3)] >>> (8 * (at & 7))); }

        byte[] bytes(long at, int len) {
            if (len < 0 || at + len > size) throw bad("variable part of " + len + " bytes overruns the record");
            byte[] b = new byte[len];
            for (int i = 0; i < len; i++) {
                long p = at + i;
                b[i] = (byte) (w[(int) (p >>> 3)] >>> (8 * (p & 7)));
            }
            return b;
        }

        String string(long at, int len) { return new String(bytes(at, len), StandardCharsets.UTF_8); }

        StreamFormatException bad(String problem) { return new StreamFormatException(position, problem); }
    }
}
