package org.memtrace.export;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;
import org.memtrace.analysis.Access;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.BlockChunks;
import org.memtrace.analysis.Ending;
import org.memtrace.event.Event;

/**
 * DynamoRIO's drmemtrace offline trace (the format {@code drcachesim -indir DIR} and its analysis tools
 * read after raw2trace): one gzip file per thread, {@code trace/drmemtrace.memtrace.TID.trace.gz}, of
 * 12-byte little-endian records {@code (u16 type, u16 size, u64 addr)}. memtrace records only the
 * instructions that access traced memory, so the file type says so: {@code IFILTERED} (instruction
 * entries are a subset of the executed instructions, as in a {@code -L0I_filter} trace) and
 * {@code DFILTERED} (data entries are a subset of the accesses: no stack in fault mode, nothing outside the
 * traced regions), with {@code ARCH_X86_64}. Each traced instruction is an instruction entry (its pc,
 * length and branch kind, decoded from the module file) followed by its data entries: a load, a store, or for a
 * read-modify-write a load and then a store. A block operation (memcpy, a system call's copy) is one
 * instruction entry for the call and its line-sized chunks ({@link BlockChunks}), as in the text exports.
 *
 * <p>Threads interleave as the trace does: whenever the stream moves to another thread, that thread's file
 * gets a timestamp marker whose value is a counter of such switches (not microseconds), and the unknown
 * CPU ({@code -1}); drcachesim's serial scheduler orders threads by these timestamps, so its cache simulator
 * sees the accesses in memtrace's order. What it gets wrong: the instruction count marker at each thread's
 * end counts only the instructions written (the real count is unknown); an instruction memtrace cannot
 * decode is written 1 byte long; the process id is the first thread's id.
 */
public final class Drmemtrace implements Analysis {
    /** trace_version_t: TRACE_ENTRY_VERSION_RETIRED_INSTRUCTIONS_ONLY, the current one. */
    static final int VERSION = 7;
    /** offline_file_type_t: ARCH_X86_64 | IFILTERED | DFILTERED. */
    static final int FILE_TYPE = 0x40 | 0x80 | 0x100;
    static final int LINE = 64, PAGE = 4096;
    /** raw2trace's default chunk size; a gzip file has no chunks, so only the marker says it. */
    static final int CHUNK_INSTRUCTIONS = 10_000_000;

    // trace_type_t
    static final int READ = 0, WRITE = 1, INSTR = 10, DIRECT_JUMP = 11, INDIRECT_JUMP = 12, DIRECT_CALL = 14,
            INDIRECT_CALL = 15, RETURN = 16, THREAD = 22, THREAD_EXIT = 23, PID = 24, HEADER = 25,
            FOOTER = 26, MARKER = 28;
    // trace_marker_type_t
    static final int TIMESTAMP = 2, CPU_ID = 3, FILETYPE = 9, CACHE_LINE_SIZE = 10, VERSION_MARKER = 12,
            PAGE_SIZE = 18, CHUNK_INSTR_COUNT = 20, INSTRUCTION_COUNT = 11;
    /** INVALID_CPU_MARKER_VALUE: the CPU is unknown. */
    static final long UNKNOWN_CPU = -1L;

    /** What the decoder says of the instruction at an address. */
    @FunctionalInterface
    public interface Code {
        /** Its length in bytes, 0 when it cannot be decoded. */
        int lengthOf(long ip);

        /**
         * Its trace_type_t: {@code INSTR} (10), or for a branch that accessed memory (a call pushing its
         * return address, a return, a jump or call through memory) 11, 12, 14, 15 or 16.
         */
        default int typeOf(long ip) { return INSTR; }
    }

    /** One thread's file and what it has written. */
    private static final class ThreadFile {
        final OutputStream out;
        final byte[] record = new byte[12];
        long instructions;

        ThreadFile(OutputStream out) {
            this.out = out;
        }

        void entry(int type, int size, long addr) throws IOException {
            byte[] r = record;
            r[0] = (byte) type;
            r[1] = (byte) (type >>> 8);
            r[2] = (byte) size;
            r[3] = (byte) (size >>> 8);
            for (int i = 0; i < 8; i++) r[4 + i] = (byte) (addr >>> (8 * i));
            out.write(r);
        }

        void marker(int kind, long value) throws IOException {
            entry(MARKER, kind, value);
        }
    }

    private final ParquetDataset.Files files;
    private final Code code;
    private final Map<Integer, ThreadFile> threads = new LinkedHashMap<>();
    private int pid;
    private int currentTid = Integer.MIN_VALUE;
    private ThreadFile current;
    private long switches;
    /** The last access, to find the store half of a read-modify-write. */
    private long lastSequence = -2, lastIp, lastAddress;
    private int lastTid;
    private boolean lastLoad;

    public Drmemtrace(ParquetDataset.Files files, Code code) {
        this.files = files;
        this.code = code;
    }

    @Override
    public void access(Access t) {
        try {
            ThreadFile f = thread(t.tid());
            boolean secondHalf = t.store() && lastLoad && t.sequence() == lastSequence + 1 && t.tid() == lastTid
                    && t.ip() == lastIp && t.address() == lastAddress;
            if (!secondHalf) instruction(f, t.ip());
            // size 0 (shape unknown) is one byte, as cachesim counts it
            f.entry(t.store() ? WRITE : READ, Math.max(1, t.size()), t.address());
            lastSequence = t.sequence();
            lastTid = t.tid();
            lastIp = t.ip();
            lastAddress = t.address();
            lastLoad = !t.store();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void block(long sequence, Event.Block b) {
        try {
            ThreadFile f = thread(b.tid());
            instruction(f, b.ip());
            lastLoad = false;
            BlockChunks.expand(b, SimulatorText.CHUNK, (address, size, write) -> {
                try {
                    f.entry(write ? WRITE : READ, size, address);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void instruction(ThreadFile f, long ip) throws IOException {
        int length = code.lengthOf(ip);
        f.entry(length > 0 ? code.typeOf(ip) : INSTR, length > 0 ? length : 1, ip);
        f.instructions++;
    }

    /** The file of {@code tid}, opened with its header on first use, stamped when the stream switches to it. */
    private ThreadFile thread(int tid) throws IOException {
        if (tid == currentTid) return current;
        ThreadFile f = threads.get(tid);
        if (f == null) {
            if (threads.isEmpty()) pid = tid;
            f = new ThreadFile(gzip(files.create("trace/drmemtrace.memtrace." + Integer.toUnsignedString(tid) + ".trace.gz")));
            threads.put(tid, f);
            f.entry(HEADER, 0, VERSION);
            f.marker(VERSION_MARKER, VERSION);
            f.marker(FILETYPE, FILE_TYPE);
            f.entry(THREAD, 4, Integer.toUnsignedLong(tid));
            f.entry(PID, 4, Integer.toUnsignedLong(pid));
            f.marker(CACHE_LINE_SIZE, LINE);
            f.marker(CHUNK_INSTR_COUNT, CHUNK_INSTRUCTIONS);
            f.marker(PAGE_SIZE, PAGE);
        }
        f.marker(TIMESTAMP, ++switches);
        f.marker(CPU_ID, UNKNOWN_CPU);
        currentTid = tid;
        current = f;
        return f;
    }

    /** gzip at level 1: the records are regular, and the writer is on the thread that interprets the trace. */
    private static OutputStream gzip(OutputStream raw) throws IOException {
        return new BufferedOutputStream(new GZIPOutputStream(raw, 1 << 16) {
            {
                def.setLevel(Deflater.BEST_SPEED);
            }
        }, 1 << 16);
    }

    @Override
    public String name() { return "drmemtrace export"; }

    /** Ends every thread's file: its instruction count, the thread's exit and the footer. */
    @Override
    public void finish(Ending ending) throws IOException {
        IOException failed = null;
        for (Map.Entry<Integer, ThreadFile> e : threads.entrySet()) {
            ThreadFile f = e.getValue();
            try (OutputStream out = f.out) {
                f.marker(INSTRUCTION_COUNT, f.instructions);
                f.entry(THREAD_EXIT, 4, Integer.toUnsignedLong(e.getKey()));
                f.entry(FOOTER, 0, 0);
            } catch (IOException x) {
                if (failed == null) failed = x;
            }
        }
        if (failed != null) throw failed;
    }
}
