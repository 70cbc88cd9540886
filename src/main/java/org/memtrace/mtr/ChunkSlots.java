package org.memtrace.mtr;

import java.lang.foreign.Arena;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongConsumer;
import org.memtrace.event.Event;
import org.memtrace.event.EventDecoder;
import org.memtrace.event.StreamLayout;

/**
 * One thread's slots across its chunks, for {@link MtrReader}: each chunk decompressed and unpacked into words
 * when the reader reaches it, or, when the thread has more than one, the next {@link #AHEAD} decoded meanwhile
 * by two decoder threads: zstd and unpacking are half or more of a logged trace's replay, and on other cores
 * they overlap the merge and the loops' regeneration (bench/results/skeleton.md, "Replay: decoder threads").
 */
final class ChunkSlots {
    /**
     * Chunks a thread's decoders work ahead: with one, the decoder waited while the reader finished a chunk
     * and the reader while the decoder finished the next, and heap.c's trace kept each thread busy under half
     * the time. Fewer for a trace of many threads ({@link #ahead}).
     */
    private static final int AHEAD = 2;
    /**
     * Threads of a trace up to which each decodes {@link #AHEAD} chunks ahead, then one up to twice as many,
     * then none: each chunk held costs about 3 MB (its words, the zstd output, the codec table), and a trace
     * of 64 threads decoding two ahead would hold 600 MB.
     */
    private static final int AHEAD_THREADS = 16;

    private final MtrFile file;
    private final List<MtrFile.Chunk> chunks;
    /** Told the stored length of each chunk as the reader begins it. */
    private final LongConsumer begun;
    /** Decode the next chunks while this one is read from {@code scratch}; null: decode in place. */
    private final ExecutorService decoders;
    /** The buffers of the chunk being read (null before the first with a decoder). */
    private MtrFile.Scratch scratch;
    /** The chunks after this one, oldest first: each one's buffers and its word count, when decoded. */
    private final ArrayDeque<MtrFile.Scratch> spares = new ArrayDeque<>();
    private final ArrayDeque<Future<Integer>> ahead = new ArrayDeque<>();
    /** The next chunk to hand to the decoders. */
    private int queued;
    private int chunk = -1;
    /** The chunk's slots as words, decoded onto the heap (MtrFile.words). */
    long[] words = new long[0];
    int wordCount;
    int pos;
    /** The slot {@link #nextSlot} read. */
    long w0, w1;
    /** The event record being decoded, reused: the decoder copies what it keeps. */
    private long[] recordWords = new long[16];

    /**
     * A thread's {@code chunks} of {@code file}, decoded {@code depth} ahead by {@code decoders} (null: in
     * place), with buffers from {@code arena}.
     */
    ChunkSlots(MtrFile file, List<MtrFile.Chunk> chunks, Arena arena, ExecutorService decoders, int depth, LongConsumer begun) {
        this.file = file;
        this.chunks = chunks;
        this.begun = begun;
        this.decoders = decoders;
        if (decoders == null) scratch = new MtrFile.Scratch(arena);
        else for (int i = 0; i < Math.min(chunks.size(), depth + 1); i++) decodeAhead(new MtrFile.Scratch(arena));
    }

    /**
     * How many chunks each thread decodes ahead of the one it reads: none when every thread has one chunk
     * (there is no next one to decode meanwhile), fewer as threads are many ({@link #AHEAD_THREADS}).
     */
    static int ahead(MtrFile file) {
        int threads = file.threads().size();
        if (file.chunks() == threads) return 0;
        return threads <= AHEAD_THREADS ? AHEAD : threads <= 2 * AHEAD_THREADS ? 1 : 0;
    }

    /**
     * Two daemon threads that decode chunks ahead of the reading thread, taking them in the order they are
     * asked for: two, since on heap.c's trace one decoder was the slower of the two threads.
     */
    static ExecutorService decoders() {
        return Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "memtrace-chunk-decoder");
            t.setDaemon(true);
            return t;
        });
    }

    /** Reads the next slot into {@link #w0} and {@link #w1}, beginning the next chunk when this one is done; false at the end. */
    boolean nextSlot() throws MtrFormatException {
        while (pos + 1 >= wordCount) {
            if (chunk + 1 >= chunks.size()) return false;
            chunk++;
            begun.accept(chunks.get(chunk).storedLength());
            wordCount = decoded();
            words = scratch.words(wordCount);
            pos = 0;
        }
        w0 = words[pos];
        w1 = words[pos + 1];
        pos += 2;
        return true;
    }

    /**
     * The word count of chunk {@code chunk}, whose words are now {@code scratch}'s: decoded here, or waited
     * for from the decoders, whose buffers of the chunk before then take the next chunk not yet queued.
     */
    private int decoded() throws MtrFormatException {
        if (decoders == null) return file.words(chunks.get(chunk), scratch);
        int count;
        try {
            count = ahead.removeFirst().get();
        } catch (ExecutionException e) {
            switch (e.getCause()) {
                case MtrFormatException f -> throw f;
                case RuntimeException r -> throw r;
                case Error r -> throw r;
                default -> throw new IllegalStateException(e.getCause());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MtrFormatException("reading was interrupted");
        }
        MtrFile.Scratch done = scratch;
        scratch = spares.removeFirst();
        if (done != null) decodeAhead(done); // the chunk before this one is no longer read: its buffers are free
        return count;
    }

    /** Queues the next chunk not yet queued, if any, to be decoded into {@code into}, which goes behind the others. */
    private void decodeAhead(MtrFile.Scratch into) {
        spares.addLast(into);
        if (queued == chunks.size()) return;
        MtrFile.Chunk next = chunks.get(queued++);
        ahead.addLast(decoders.submit(() -> file.words(next, into)));
    }

    /** The event record in the next slots (it may continue in the thread's next chunk, then it is copied out first). */
    Event event(int length) throws MtrFormatException {
        if (length < StreamLayout.RECORD_HEADER_SIZE) throw new MtrFormatException("event tag of length " + length);
        int slots = (length + MtrFile.SLOT - 1) / MtrFile.SLOT;
        if (pos + 2 * slots <= wordCount) { // within this chunk: decoded where it lies
            int at = pos;
            pos += 2 * slots;
            int size = EventDecoder.size(words[at]);
            if (size != length) throw new MtrFormatException("event tag says " + length + " bytes, its record " + size);
            return EventDecoder.decode(words, at, chunks.get(chunk).offset());
        }
        if (recordWords.length < 2 * slots) recordWords = new long[2 * slots];
        for (int i = 0; i < slots; i++) {
            if (!nextSlot()) throw new MtrFormatException("event record cut short by the end of the thread's trace");
            recordWords[2 * i] = w0;
            recordWords[2 * i + 1] = w1;
        }
        int size = EventDecoder.size(recordWords[0]);
        if (size != length) throw new MtrFormatException("event tag says " + length + " bytes, its record " + size);
        return EventDecoder.decode(recordWords, chunks.get(chunk).offset());
    }

    /** The order number of the chunk being read, for a problem's message; -1 before the first. */
    long chunkOrder() { return chunk < 0 ? -1 : chunks.get(chunk).order(); }

    /** Ends the thread's slots here: its trace is damaged. */
    void abandon() {
        chunk = chunks.size();
        wordCount = 0;
        pos = 0;
    }
}
