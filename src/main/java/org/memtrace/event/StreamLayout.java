package org.memtrace.event;

/**
 * Offsets and codes of the event stream, mirrored from agent/include/memtrace_stream.h. Kept in one place so
 * the ring reader, the saved-stream writer and the decoder cannot disagree about the header page.
 */
public final class StreamLayout {
    private StreamLayout() {}

    public static final long MAGIC = 0x3143525454454d4dL;
    public static final int VERSION = 1;
    public static final int HEADER_SIZE = 4096;

    public static final long OFF_MAGIC = 0;
    public static final long OFF_VERSION = 8;
    public static final long OFF_HEADER_SIZE = 12;
    public static final long OFF_CAPACITY = 16;
    public static final long OFF_AGENT_PID = 24;
    public static final long OFF_HEAD = 64;
    public static final long OFF_TAIL = 128;
    public static final long OFF_LOST = 192;
    public static final long OFF_DONE = 200;

    /** Every record starts with {u8 type, u8 flags, u16 size, u32 tid}. */
    public static final int RECORD_HEADER_SIZE = 8;

    public static final int MT_PAD = 0;
    public static final int MT_HELLO = 1;
    public static final int MT_ACCESS = 2;
    public static final int MT_BLOCK = 3;
    public static final int MT_ALLOC = 4;
    public static final int MT_MODULE = 5;
    public static final int MT_MAPPING = 6;
    public static final int MT_RANGE = 7;
    public static final int MT_THREAD = 8;
    public static final int MT_CONTROL = 9;
    public static final int MT_EXIT = 10;
    public static final int MT_STATS = 11;
    public static final int MT_FORK = 12;

    public static final int ACC_WRITE = 0x01;
    public static final int ACC_SAME_STEP = 0x02;
    public static final int BLK_OP_MASK = 0x0f;
    public static final int BLK_SYSCALL = 0x10;
    public static final int MAP_TRACED = 0x01;
    public static final int RANGE_ADD = 1;
    public static final int RANGE_REMOVE = 2;
    public static final int THREAD_START = 1;
    public static final int THREAD_EXIT = 2;
    public static final int CTL_START = 1;
    public static final int CTL_STOP = 2;
    public static final int EXIT_NORMAL = 1;
    public static final int EXIT_EXEC = 2;
    public static final int EXIT_SIGNAL = 3;
    public static final int EXIT_EXEC_FAILED = 4;
}
