package org.memtrace.event;

import static org.memtrace.event.StreamLayout.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/** Builds records byte for byte as the agent lays them out, for synthetic streams in tests. */
public final class TestRecords {
    private TestRecords() {}

    private static ByteBuffer record(int type, int flags, int tid, int bodyBytes) {
        int size = (8 + bodyBytes + 7) & ~7;
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) type).put((byte) flags).putShort((short) size).putInt(tid);
        return b;
    }

    private static byte[] longs(int type, int flags, int tid, long... values) {
        ByteBuffer b = record(type, flags, tid, 8 * values.length);
        for (long v : values) b.putLong(v);
        return b.array();
    }

    public static byte[] hello(int tid, long pid) { return longs(MT_HELLO, 0, tid, pid, 4096, 0x7f0000001000L, 0x7f0000009000L, 15); }

    public static byte[] access(int tid, long ip, long addr, boolean write, boolean sameStep) {
        return longs(MT_ACCESS, (write ? ACC_WRITE : 0) | (sameStep ? ACC_SAME_STEP : 0), tid, ip, addr);
    }

    public static byte[] block(int tid, int flags, long ip, long dst, long src, long len, int what) {
        return longs(MT_BLOCK, flags, tid, ip, dst, src, len, what & 0xffffffffL);
    }

    public static byte[] alloc(int tid, int fn, long caller, long result, long usable, long... args) {
        long[] v = new long[9];
        v[0] = caller;
        v[1] = result;
        v[2] = usable;
        System.arraycopy(args, 0, v, 3, args.length);
        return longs(MT_ALLOC, fn, tid, v);
    }

    /** An MT_ALLOC record of stack format 1: six arguments, then the return addresses above the caller. */
    public static byte[] allocWithStack(int tid, int fn, long caller, long result, long usable, long[] args, long... callers) {
        long[] v = new long[9 + callers.length];
        v[0] = caller;
        v[1] = result;
        v[2] = usable;
        System.arraycopy(args, 0, v, 3, args.length);
        System.arraycopy(callers, 0, v, 9, callers.length);
        return longs(MT_ALLOC, fn, tid, v);
    }

    public static byte[] module(int tid, long bias, byte[] buildId, String path) {
        byte[] p = path.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = record(MT_MODULE, 0, tid, 16 + buildId.length + p.length);
        b.putLong(bias).putInt(buildId.length).putInt(p.length).put(buildId).put(p);
        return b.array();
    }

    public static byte[] mapping(int tid, long start, long end, long offset, int prot, boolean traced, String path) {
        byte[] p = path.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = record(MT_MAPPING, traced ? MAP_TRACED : 0, tid, 32 + p.length);
        b.putLong(start).putLong(end).putLong(offset).putInt(prot).putInt(p.length).put(p);
        return b.array();
    }

    public static byte[] range(int tid, boolean add, long start, long end, int kind, int prot) {
        ByteBuffer b = record(MT_RANGE, add ? RANGE_ADD : RANGE_REMOVE, tid, 24);
        b.putLong(start).putLong(end).putInt(kind).putInt(prot);
        return b.array();
    }

    public static byte[] thread(int tid, boolean start, long value) { return longs(MT_THREAD, start ? THREAD_START : THREAD_EXIT, tid, value); }

    public static byte[] control(int tid, boolean start, long caller) { return longs(MT_CONTROL, start ? CTL_START : CTL_STOP, tid, caller); }

    public static byte[] exit(int tid, int how, long value, long ip, long addr, String path) {
        byte[] p = path.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = record(MT_EXIT, how, tid, 32 + p.length);
        b.putLong(value).putLong(ip).putLong(addr).putInt(p.length).putInt(0).put(p);
        return b.array();
    }

    public static byte[] stats(int tid, long faults, long steps, long syscalls, long windows, long untraced) {
        return longs(MT_STATS, 0, tid, faults, steps, syscalls, windows, untraced);
    }

    public static byte[] fork(int tid, long child) { return longs(MT_FORK, 0, tid, child); }

    /** MT_FALLBACK as runtimes before punned jumps wrote it (24 bytes). */
    public static byte[] fallback(int tid, long traps, long accesses) { return longs(MT_FALLBACK, 0, tid, traps, accesses); }

    /** MT_FALLBACK of 48 bytes: the puns written, and kept as int3s because the bytes changed or no stub page could be had. */
    public static byte[] fallback(int tid, long traps, long accesses, long puns, long punsBytes, long punsPage) {
        return longs(MT_FALLBACK, 0, tid, traps, accesses, puns, punsBytes, punsPage);
    }

    /** MT_WRITER as runtimes before the writer-less count wrote it (32 bytes). */
    public static byte[] writer(int tid, long waitNs, long waits, long buffers) { return longs(MT_WRITER, 0, tid, waitNs, waits, buffers); }

    /** MT_WRITER of 48 bytes: with {@code none}, no writer thread ran and the threads wrote {@code own} buffers in {@code ownNs}. */
    public static byte[] writer(int tid, long waitNs, long waits, long buffers, boolean none, long ownNs, long own) {
        return longs(MT_WRITER, none ? WRITER_NONE : 0, tid, waitNs, waits, buffers, ownNs, own);
    }

    public static byte[] pad(int size) {
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) MT_PAD).put((byte) 0).putShort((short) size).putInt(0);
        return b.array();
    }
}
