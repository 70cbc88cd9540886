package org.memtrace.madt;

import java.io.OutputStream;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.function.Consumer;
import org.memtrace.trace.Naming;

/**
 * The text trace's bytes, made and written on a thread of their own: the interpretation stage's thread (which
 * reads the trace, names each access and keeps the summary) puts each access line's fields and names into a
 * batch, and this thread turns them into bytes ({@link NameBytes}, {@link LineBuffer}) and writes them: the
 * formatting and the writes were 30-40 % of the reading thread's time (JFR, bench/results/run-split.md,
 * 2026-12-07; which commands use the thread: {@link MadtWriter}). Lines come out in the order they
 * were put, one consumer taking the batches first in, first out: the trace is the same bytes as when one
 * thread did both.
 *
 * <p>The names go over as the stage's objects (a {@link Naming.Span}, a data name, a region), never looked
 * up here: the naming changes with the trace's events, which the stage's thread reads ahead. A symbolic line's
 * end after its region ({@link SiteTails}) is made on the stage's thread, which has the code names, and comes
 * as bytes. The lines other than loads and stores come whole, as bytes. A write error is said once, on the
 * stage's thread, at its next hand-over or at {@link #close}; nothing is written after it. With {@code threaded}
 * false each line is made and written at once on the caller's thread, by the same code, without a batch (whose
 * fields were written, read back and cleared: 7 % of {@code run -o FILE}'s CPU, perf on python3, 2026-12-07),
 * and a write error is said at once.
 */
final class LinePipe {
    /** Lines per batch: a hand-over (a queue and a wake-up) per 2,048 lines is a few ns per line. */
    static final int BATCH = 2048;
    /** Batches in all: the stage's thread runs up to three ahead of the writing. */
    private static final int BATCHES = 4;
    private static final byte LOAD = 0, STORE = 1, TEXT = 2;

    /**
     * One hand-over's lines, each line's numbers in {@link #WORDS} consecutive words and its objects in three
     * consecutive slots: the stage's thread writes two arrays in order, where a field per array touched ten
     * cache lines. The objects are cleared once written, so nothing outlives its line.
     */
    private static final class Batch {
        /** Per line: sequence, address, ip, size << 32 | tid, weight << 8 | kind. */
        static final int WORDS = 5;
        int count;
        boolean last;
        final long[] words = new long[WORDS * BATCH];
        /** Per access line: its span, or else its data name (null when only the raw form is written) and region. */
        final Naming.Span[] spans = new Naming.Span[BATCH];
        final String[] dataNames = new String[BATCH];
        final String[] regions = new String[BATCH];
        /** Per line: an access line's tail ({@link SiteTails}), or a {@code TEXT} entry's whole lines. */
        final byte[][] bytes = new byte[BATCH][];
    }

    private final AddressMode mode;
    private final Consumer<String> problems;
    private final LineBuffer out;
    private final NameBytes names = new NameBytes();
    private final BlockingQueue<Batch> full = new ArrayBlockingQueue<>(BATCHES + 1);
    private final BlockingQueue<Batch> free = new ArrayBlockingQueue<>(BATCHES);
    /** Null: each full batch is written on the caller's thread. */
    private final Thread writer;
    private Batch filling = new Batch();
    /** The write error's sentence (set by the writing side, said once by the stage's side). */
    private volatile String problem;
    private boolean said;
    /** A failure of the writing code itself, thrown on the stage's thread as the analysis's crash. */
    private volatile Throwable crash;

    LinePipe(OutputStream stream, AddressMode mode, Consumer<String> problems, boolean threaded) {
        this.mode = mode;
        this.problems = problems;
        this.out = new LineBuffer(stream, p -> { if (problem == null) problem = p; });
        if (threaded) {
            for (int i = 1; i < BATCHES; i++) free.add(new Batch());
            writer = new Thread(this::drain, "memtrace-text-writer");
            writer.setDaemon(true);
            writer.start();
        } else {
            writer = null;
        }
    }

    /** Whether a write failed (as far as this side knows yet): the trace stops there. */
    boolean failed() {
        return problem != null;
    }

    /**
     * An access line: {@code span} the access's {@link Naming.Span} when it has one, else {@code dataName} its
     * data name (null when only the raw form is written) and {@code region} its region; {@code tail} the
     * symbolic line's end ({@link SiteTails}), null when only the raw form is written.
     */
    void access(long sequence, long address, long ip, int size, int tid, int weight, boolean store, Naming.Span span,
                String dataName, String region, byte[] tail) {
        long sizeTid = (long) size << 32 | (tid & 0xffffffffL), weightKind = (long) weight << 8 | (store ? STORE : LOAD);
        if (writer == null) {
            // on the caller's thread the line is made at once: a batch would only copy its fields twice
            line(sequence, address, ip, sizeTid, weightKind, span, dataName, region, tail);
            if (out.failed()) say();
            return;
        }
        Batch b = filling;
        int i = b.count;
        long[] w = b.words;
        int at = Batch.WORDS * i;
        w[at] = sequence;
        w[at + 1] = address;
        w[at + 2] = ip;
        w[at + 3] = sizeTid;
        w[at + 4] = weightKind;
        b.spans[i] = span;
        b.dataNames[i] = dataName;
        b.regions[i] = region;
        b.bytes[i] = tail;
        if ((b.count = i + 1) == BATCH) handOver(false);
    }

    /** Lines made whole (comments, allocations, blocks), in their place among the access lines. */
    void text(byte[] lines) {
        if (writer == null) {
            text(out, lines);
            if (out.failed()) say();
            return;
        }
        Batch b = filling;
        int i = b.count;
        b.words[Batch.WORDS * i + 4] = TEXT;
        b.bytes[i] = lines;
        if ((b.count = i + 1) == BATCH) handOver(false);
    }

    /** Writes every line put, closes the stream and says a write error if there was one. */
    void close() {
        handOver(true);
        if (writer != null) {
            boolean interrupted = false;
            while (writer.isAlive()) {
                try {
                    writer.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
        }
        say();
        rethrow();
    }

    /** Gives the batch being filled to the writing side and takes an empty one. */
    private void handOver(boolean last) {
        Batch b = filling;
        b.last = last;
        if (writer == null) {
            write(b);
            if (last) out.close();
            b.count = 0;
        } else {
            put(full, b);
            if (!last) filling = take(free);
        }
        say();
        rethrow();
    }

    private void say() {
        if (!said && problem != null) {
            said = true;
            problems.accept(problem);
        }
    }

    private void rethrow() {
        Throwable t = crash;
        if (t == null) return;
        crash = null;
        if (t instanceof RuntimeException r) throw r;
        if (t instanceof Error e) throw e;
        throw new IllegalStateException(t);
    }

    /** The writing thread: batches in the order they were handed over, until the last. */
    private void drain() {
        while (true) {
            Batch b = take(full);
            if (crash == null) {
                try {
                    write(b);
                    if (b.last) out.close();
                } catch (RuntimeException | Error e) {
                    crash = e; // the rest is taken and dropped: the stage's thread must never wait for a batch
                }
            }
            if (b.last) return;
            b.count = 0;
            put(free, b);
        }
    }

    private void write(Batch b) {
        long[] w = b.words;
        for (int i = 0; i < b.count && !out.failed(); i++) {
            int at = Batch.WORDS * i;
            if ((byte) w[at + 4] == TEXT) text(out, b.bytes[i]);
            else line(w[at], w[at + 1], w[at + 2], w[at + 3], w[at + 4], b.spans[i], b.dataNames[i], b.regions[i], b.bytes[i]);
        }
        java.util.Arrays.fill(b.spans, 0, b.count, null);
        java.util.Arrays.fill(b.dataNames, 0, b.count, null);
        java.util.Arrays.fill(b.regions, 0, b.count, null);
        java.util.Arrays.fill(b.bytes, 0, b.count, null);
    }

    private static void text(LineBuffer out, byte[] lines) {
        out.room(lines.length);
        out.put(lines);
        out.lineDone();
    }

    /**
     * One access's lines, {@code #} and/or {@code $} (docs/trace-format.md), from its numbers ({@code sizeTid}
     * and {@code weightKind} packed as {@link Batch#words} has them) and its names.
     */
    private void line(long sequence, long address, long ip, long sizeTid, long weightKind, Naming.Span span,
                      String dataName, String regionName, byte[] tail) {
        // A span names the data and region of every address in it: its bytes are made once (NameBytes.span).
        int spanSlot = span == null ? -1 : names.span(span);
        byte[] region = span == null ? names.name(regionName) : names.spanRegion(spanSlot);
        byte letter = (byte) ((byte) weightKind == STORE ? 'S' : 'L');
        if (mode.raw()) {
            out.room(64 + region.length);
            out.put(letter);
            out.put((byte) '#');
            out.putSequence(sequence);
            out.put((byte) ':');
            out.putHex(address);
            out.put((byte) ',');
            out.put(region);
            out.put((byte) ',');
            out.putHex(ip);
            MadtWriter.putSizeThreadWeight(out, (int) (sizeTid >>> 32), (int) sizeTid, (int) (weightKind >> 8));
            out.put((byte) '\n');
        }
        if (mode.symbolic()) {
            byte[] name = span == null ? names.data(address, dataName) : names.spanBase(spanSlot);
            out.room(52 + name.length + region.length + tail.length);
            out.put(letter);
            out.put((byte) '$');
            out.putSequence(sequence);
            out.put((byte) ':');
            out.put(name);
            if (span != null) out.putDecimal(address - span.origin());
            out.put((byte) ',');
            out.put(region);
            out.put(tail);
        }
        out.lineDone();
    }

    private static <T> void put(BlockingQueue<T> queue, T item) {
        boolean interrupted = false;
        while (true) {
            try {
                queue.put(item);
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    private static <T> T take(BlockingQueue<T> queue) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return queue.take();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }
}
