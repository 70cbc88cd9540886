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

    /**
     * A saved stream's version (in the header page's version field; the ring's own is {@link #VERSION}):
     * version 1 is the header page then the records, the header written last; version 2
     * ({@link #SAVED_VERSION_BLOCKS}, what memtrace writes) writes the header first and the records in blocks,
     * each with a CRC32C (docs/event-stream.md, "Saved streams").
     */
    public static final int SAVED_VERSION_PLAIN = 1;
    public static final int SAVED_VERSION_BLOCKS = 2;
    /** In a version 2 saved stream's header page: the CRC32C of every other byte of the page (0 to 4091). */
    public static final int OFF_SAVED_HEADER_CRC = HEADER_SIZE - 4;
    /** A block: {u32 magic "SBLK", u32 length of its records, u32 CRC32C of the records, u32 CRC32C of the 12 bytes before}. */
    public static final int BLOCK_MAGIC = 0x4b4c4253;
    public static final int BLOCK_HEADER_SIZE = 16;
    public static final int BLOCK_OFF_LENGTH = 4;
    public static final int BLOCK_OFF_CRC = 8;
    public static final int BLOCK_OFF_HEADER_CRC = 12;
    /** The longest block a reader accepts: the writer's are at most 256 KiB. */
    public static final int BLOCK_MAX = 16 << 20;

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
    public static final int MT_WRITER = 13;
    public static final int MT_FALLBACK = 14;
    public static final int MT_CONTEXT = 15;

    public static final int ACC_WRITE = 0x01;
    public static final int ACC_SAME_STEP = 0x02;
    public static final int BLK_OP_MASK = 0x0f;
    public static final int BLK_SYSCALL = 0x10;
    /** MT_WRITER's flags: no writer thread ran (rewrite mode), the program's threads wrote their own buffers. */
    public static final int WRITER_NONE = 0x01;
    /** MT_CONTEXT's flags: access stack format 2 (rewrite mode, cc builds), word 0 the instruction the stack belongs to. */
    public static final int CONTEXT_INSTRUCTION = 0x01;
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
