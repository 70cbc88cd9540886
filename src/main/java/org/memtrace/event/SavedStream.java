package org.memtrace.event;

import static org.memtrace.event.StreamLayout.*;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * Replays a stream saved by {@link StreamWriter}: the same events, in the same order, as the live run.
 *
 * <p>The file is read and its records decoded on a thread of its own, a batch of records ahead of the
 * caller, so that on a machine with a second core the caller's thread does nothing but hand the events on:
 * offline, the events' consumer (interpretation and analyses) is the slower half. Faults travel in the
 * batches as fields, not as {@link Event} objects, and reach the sink through {@link EventSink#fault}.
 */
public final class SavedStream {
    private SavedStream() {}

    /**
     * What the saved header says about the run, and the damage found on the way: one sentence per damaged
     * block skipped (its place and size), or the place where a stream cut short ends (empty for a whole one).
     */
    public record Summary(long records, long bytes, long lost, boolean done, List<String> damage) {
        public Summary(long records, long bytes, long lost, boolean done) {
            this(records, bytes, lost, done, List.of());
        }
    }

    /** Told, after each batch of events handed on, the stream position reached and the records so far. */
    @FunctionalInterface
    public interface Progress {
        void at(long position, long records);
    }

    public static Summary replay(Path file, Consumer<? super Event> consumer) throws IOException {
        return replay(file, consumer::accept, (position, records) -> {});
    }

    /** Records are read in chunks of this size; a record is at most 64 KiB, so a chunk always holds a whole one. */
    private static final int CHUNK = 1 << 20;
    /** Records per batch: small enough to stay in the caches, large enough that the hand-over costs nothing per record. */
    private static final int BATCH = 4096;
    /** Batches in flight: the reader may run this far ahead, so short stalls of either side overlap. */
    private static final int DEPTH = 4;

    private static final VarHandle U64 = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle U32 = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    /**
     * Hands every record (never a padding record) to {@code sink} in stream order, on the calling thread, and
     * returns what the header says. A damaged stream ends in a {@link StreamFormatException} after every record
     * before the damage was handed on, as a failure to read ends in its {@link IOException}. When the sink
     * throws, reading stops and the exception goes to the caller.
     */
    public static Summary replay(Path file, EventSink sink, Progress progress) throws IOException {
        BlockingQueue<Batch> full = new ArrayBlockingQueue<>(DEPTH), free = new ArrayBlockingQueue<>(DEPTH);
        for (int i = 0; i < DEPTH; i++) free.add(new Batch());
        Thread reader = Thread.ofPlatform().name("memtrace stream reader").daemon()
                .start(new Reader(file, full, free)::run);
        try {
            long records = 0;
            while (true) {
                Batch b = full.take();
                b.deliver(sink);
                records += b.count;
                progress.at(b.position, records);
                if (b.last) return b.end();
                b.count = 0;
                free.put(b);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while reading " + file);
        } finally {
            // the reader may be waiting for a free batch, or reading: either ends on the interrupt
            reader.interrupt();
            boolean interrupted = false;
            while (reader.isAlive()) {
                try {
                    reader.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    /** Decoded records on their way from the reader to the caller: faults by their fields, others as events. */
    private static final class Batch {
        final int[] tid = new int[BATCH];
        final byte[] flags = new byte[BATCH];
        final long[] ip = new long[BATCH], address = new long[BATCH];
        /** The record's event, or null for a fault. */
        final Event[] other = new Event[BATCH];
        int count;
        /** Stream position after the batch's last record. */
        long position;
        /** The batch after which there are no more: {@link #summary} or {@link #failure} says why. */
        boolean last;
        Summary summary;
        Throwable failure;

        void deliver(EventSink sink) {
            for (int i = 0; i < count; i++) {
                Event e = other[i];
                if (e == null) {
                    int f = flags[i];
                    sink.fault(tid[i], ip[i], address[i], (f & ACC_WRITE) != 0, (f & ACC_SAME_STEP) != 0);
                } else {
                    other[i] = null;
                    sink.accept(e);
                }
            }
        }

        Summary end() throws IOException {
            switch (failure) {
                case null -> { return summary; }
                case IOException e -> throw e;
                case RuntimeException e -> throw e;
                case Error e -> throw e;
                default -> throw new IllegalStateException(failure);
            }
        }
    }

    /** The reading thread: fills batches from the file until it ends, fails, or the caller stops it. */
    private static final class Reader {
        private final Path file;
        private final BlockingQueue<Batch> full, free;
        /** The batch being filled; null only while waiting for a free one. */
        private Batch batch;

        Reader(Path file, BlockingQueue<Batch> full, BlockingQueue<Batch> free) {
            this.file = file;
            this.full = full;
            this.free = free;
        }

        void run() {
            try {
                batch = free.take();
                Summary summary = read();   // read() moves on to other batches: the last one gets the summary
                batch.summary = summary;
            } catch (InterruptedException | ClosedByInterruptException e) {
                return;   // the caller stopped: nobody waits for the rest
            } catch (Throwable t) {
                if (batch == null) return;
                batch.failure = t;
            }
            batch.last = true;
            full.add(batch);   // never blocks: the caller holds or has queued at most DEPTH - 1 batches besides this one
        }

        private Summary read() throws IOException, InterruptedException {
            try (Arena arena = Arena.ofConfined();
                 var ch = FileChannel.open(file, StandardOpenOption.READ)) {
                long fileSize = ch.size();
                if (fileSize < HEADER_SIZE) throw new StreamFormatException(0, "file is shorter than the header page");
                MemorySegment header = arena.allocate(HEADER_SIZE, 8);
                readFully(ch, header.asByteBuffer(), 0);
                if (header.get(ValueLayout.JAVA_LONG, OFF_MAGIC) == MAGIC
                        && header.get(ValueLayout.JAVA_INT, OFF_VERSION) == SAVED_VERSION_BLOCKS
                        && header.get(ValueLayout.JAVA_INT, OFF_HEADER_SIZE) == HEADER_SIZE)
                    return readBlocks(ch, fileSize, header);
                RingReader.checkHeader(header);
                long bytes = header.get(ValueLayout.JAVA_LONG, OFF_TAIL);
                if (bytes < 0 || bytes > fileSize - HEADER_SIZE)
                    throw new StreamFormatException(0, "header promises " + bytes + " bytes of records, file holds "
                            + (fileSize - HEADER_SIZE));
                // A heap array read through a byte-array view: one bounds check per field, none of a segment's
                // alignment and liveness checks (the rare records other than faults still go through a segment).
                byte[] chunk = new byte[CHUNK];
                MemorySegment data = MemorySegment.ofArray(chunk);
                long base = 0;     // stream position of chunk[0]
                int filled = 0;    // bytes of the chunk holding data
                int at = 0;        // next record in the chunk
                long records = 0;
                while (base + at < bytes) {
                    if (filled - at < RECORD_HEADER_SIZE || filled - at < sizeOf((long) U64.get(chunk, at))) {
                        int kept = filled - at;
                        System.arraycopy(chunk, at, chunk, 0, kept);
                        base += at;
                        at = 0;
                        int want = (int) Math.min(CHUNK - kept, bytes - base - kept);
                        readFully(ch, ByteBuffer.wrap(chunk, kept, want), HEADER_SIZE + base + kept);
                        filled = kept + want;
                    }
                    long pos = base + at;
                    long word = (long) U64.get(chunk, at);
                    int size = sizeOf(word);
                    if (size < RECORD_HEADER_SIZE || size % 8 != 0)
                        throw new StreamFormatException(pos, "record size " + size + " is not a positive multiple of 8");
                    if (size > bytes - pos)
                        throw new StreamFormatException(pos, "record of " + size + " bytes overruns the published data ("
                                + (bytes - pos) + " bytes left)");
                    if (take(chunk, data, at, pos, word, size)) records++;
                    at += size;
                }
                batch.position = bytes;
                return new Summary(records, bytes, header.get(ValueLayout.JAVA_LONG, OFF_LOST),
                        header.get(ValueLayout.JAVA_LONG, OFF_DONE) != 0);
            }
        }

        /** Puts the record at {@code at} in the batch unless it is padding; whether it did. */
        private boolean take(byte[] chunk, MemorySegment data, int at, long pos, long word, int size) throws InterruptedException {
            if (((int) word & 0xff) == MT_PAD) return false;
            Batch b = batch;
            int n = b.count;
            if (EventDecoder.isFault(word)) {
                b.tid[n] = (int) (word >>> 32);
                b.flags[n] = (byte) (word >>> 8);
                b.ip[n] = (long) U64.get(chunk, at + 8);
                b.address[n] = (long) U64.get(chunk, at + 16);
            } else {
                b.other[n] = decode(data, at, pos);
            }
            if ((b.count = n + 1) == BATCH) handOver(pos + size);
            return true;
        }

        /**
         * Version 2: block after block to the end of the file (or of what the header says was finished). A
         * block whose records fail their checksum is skipped and said; one whose header fails ends the reading
         * there (its length is unknown), as a block cut short does.
         */
        private Summary readBlocks(FileChannel ch, long fileSize, MemorySegment header) throws IOException, InterruptedException {
            long tail = header.get(ValueLayout.JAVA_LONG, OFF_TAIL);
            boolean finished = header.get(ValueLayout.JAVA_LONG, OFF_DONE) != 0 || tail > 0;
            long end = HEADER_SIZE + (finished ? tail : fileSize - HEADER_SIZE);
            List<String> damage = new ArrayList<>();
            CRC32C crc = new CRC32C();
            crc.update(header.asSlice(0, OFF_SAVED_HEADER_CRC).asByteBuffer());
            boolean headerWhole = (int) crc.getValue() == header.get(ValueLayout.JAVA_INT, OFF_SAVED_HEADER_CRC);
            if (!headerWhole) {
                // its counts cannot be trusted: read every whole block, and say the ending is unknown
                damage.add("the stream's header page is damaged (its checksum does not match): whether the recording ended, and what it lost, is unknown");
                tail = 0;
                finished = false;
                end = fileSize;
            }
            boolean cut = tail < 0 || end > fileSize;
            if (cut) end = fileSize;
            byte[] head = new byte[BLOCK_HEADER_SIZE];
            byte[] chunk = new byte[1 << 20];
            long at = HEADER_SIZE, records = 0, bytes = 0;
            for (int block = 0; at < end; block++) {
                if (end - at < BLOCK_HEADER_SIZE) {
                    damage.add("the stream is cut short at offset " + end + ", in the header of block " + block + " (offset " + at + "); the blocks before it are read");
                    break;
                }
                readFully(ch, ByteBuffer.wrap(head), at);
                crc.reset();
                crc.update(head, 0, BLOCK_OFF_HEADER_CRC);
                int length = (int) U32.get(head, BLOCK_OFF_LENGTH);
                if ((int) U32.get(head, 0) != BLOCK_MAGIC || (int) crc.getValue() != (int) U32.get(head, BLOCK_OFF_HEADER_CRC)
                        || length <= 0 || length % 8 != 0 || length > BLOCK_MAX) {
                    damage.add("block " + block + " at offset " + at + " has a damaged header (its checksum does not match); the rest of the stream is ignored");
                    break;
                }
                if (end - at - BLOCK_HEADER_SIZE < length) {
                    damage.add("the stream is cut short at offset " + end + ", in block " + block + " (offset " + at + "); the blocks before it are read");
                    break;
                }
                if (chunk.length < length) chunk = new byte[length];
                readFully(ch, ByteBuffer.wrap(chunk, 0, length), at + BLOCK_HEADER_SIZE);
                crc.reset();
                crc.update(chunk, 0, length);
                long pos = bytes;
                bytes += length;
                at += BLOCK_HEADER_SIZE + length;
                if ((int) crc.getValue() != (int) U32.get(head, BLOCK_OFF_CRC)) {
                    damage.add("block " + block + " at offset " + (at - BLOCK_HEADER_SIZE - length) + " is damaged (its checksum does not match): its "
                            + length + " bytes of records are skipped");
                    continue;
                }
                MemorySegment data = MemorySegment.ofArray(chunk);
                for (int r = 0; r < length; ) {
                    long word = (long) U64.get(chunk, r);
                    int size = sizeOf(word);
                    if (size < RECORD_HEADER_SIZE || size % 8 != 0 || size > length - r)
                        throw new StreamFormatException(pos + r, "record size " + size + " does not fit its block");
                    if (take(chunk, data, r, pos + r, word, size)) records++;
                    r += size;
                }
            }
            if (finished && !cut && fileSize > end)
                damage.add((fileSize - end) + " bytes follow the stream's last block; they are ignored");
            if (cut && damage.isEmpty())
                damage.add("the stream is cut short at offset " + fileSize + ": its header promises " + tail
                        + " bytes after the header page; the blocks before the cut are read");
            batch.position = bytes;
            return new Summary(records, bytes, headerWhole ? header.get(ValueLayout.JAVA_LONG, OFF_LOST) : 0,
                    headerWhole && header.get(ValueLayout.JAVA_LONG, OFF_DONE) != 0, List.copyOf(damage));
        }

        private static int sizeOf(long headerWord) { return (int) (headerWord >>> 16) & 0xffff; }

        private static Event decode(MemorySegment data, int at, long pos) {
            try {
                return EventDecoder.decode(data, at, pos);
            } catch (IllegalArgumentException e) {
                // a well-framed record with a code the agent never writes (unknown function, kind…)
                throw new StreamFormatException(pos, e.getMessage());
            }
        }

        /** The batch is full: on to the caller, and on with a free one. */
        private void handOver(long position) throws InterruptedException {
            batch.position = position;
            full.put(batch);
            batch = null;
            batch = free.take();
        }
    }

    /** Fills {@code into} from the file at {@code offset}; the header promised the bytes are there. */
    private static void readFully(FileChannel ch, ByteBuffer into, long offset) throws IOException {
        while (into.hasRemaining()) {
            int n = ch.read(into, offset);
            if (n < 0) throw new StreamFormatException(offset, "the file ends before the bytes its header promises");
            offset += n;
        }
    }
}
