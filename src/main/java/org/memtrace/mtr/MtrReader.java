package org.memtrace.mtr;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.ExecutorService;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.memtrace.event.Event;
import org.memtrace.event.StreamFormatException;

/**
 * Turns a {@code .mtr} file back into one event stream: the threads' slot streams are merged so that events
 * come in the order of their global sequence numbers, and each access record is delivered between the
 * events of its own thread that surround it, as late as it can be (just before its thread's next event) so
 * that the allocations other threads made before it are known when it is named. Pending accesses are
 * bounded ({@link #MAX_PENDING} per thread): past that they go out at once, which the order still allows.
 * Each thread reads its chunks through a {@link ChunkSlots}, which decodes them ahead on other cores.
 *
 * <p>Access records become {@link Event.Probe}; the records of one rep string instruction become one
 * {@link Event.Block} (two fetches for {@code cmps}); skeleton loop records become the accesses the loop
 * computed ({@link AccessRecords}). Damage ends the thread or the file where it is found: everything before
 * it is delivered, and {@link Result#problems} says what was lost.
 */
public final class MtrReader {
    static final int MAX_PENDING = 1 << 20;
    private static final long TAG = 1L << 63;
    private static final int TAG_EVENT = 1;

    /**
     * What reading found. {@code probes} counts access records, {@code events} the embedded event records,
     * {@code dropped} the records the runtime says it could not write (the end record); {@code complete} is
     * false when the file was cut short or damaged, and {@code problems} says what was lost; {@code damaged}
     * tells a file cut short or damaged (read up to the damage) from one whose records do not fit the
     * program's files (a site no table describes, a skeleton run that does not match).
     */
    public record Result(long chunks, long probes, long events, long dropped, boolean ended, List<String> problems,
                         Skeleton skeleton, boolean damaged) {
        public boolean complete() { return ended && problems.isEmpty(); }
    }

    /**
     * What skeleton replay did: accesses computed (not recorded), and the loops of the loaded files that the
     * rewriter left in full mode, by reason.
     */
    public record Skeleton(long computed, Map<String, Long> declined) {
        public boolean any() { return computed > 0 || !declined.isEmpty(); }
    }

    /**
     * Where access records and computed accesses go when a caller wants them without an {@link Event.Probe}
     * object each (a replay-speed measurement, a counting consumer): in the same order as the events.
     */
    public interface Accesses {
        void access(int tid, long address, Event.ProbeSite site);
    }

    /**
     * The records a skeleton loop run logs, for a caller that regenerates the computed accesses itself
     * ({@code memtrace skeleton --emit-c}), in the order the reader delivers them: entry values (slot 0
     * starts a run), markers of conditional blocks and side exits, the exit. Only records the reader's own
     * replay accepted come here; a run that does not match its skeleton is one of the result's problems.
     */
    public interface LoopRecords {
        void entry(int tid, SkeletonTable.Loop loop, long bias, int slot, long value);

        void marker(int tid, int marker, long value);

        void exit(int tid, long value);
    }

    private static final LoopRecords NO_LOOP_RECORDS = new LoopRecords() {
        @Override public void entry(int tid, SkeletonTable.Loop loop, long bias, int slot, long value) {}
        @Override public void marker(int tid, int marker, long value) {}
        @Override public void exit(int tid, long value) {}
    };

    private final MtrFile file;
    private final Consumer<? super Event> consumer;
    /** Told the stored bytes of the chunks begun so far, each time a thread begins one: a reader's progress. */
    private LongConsumer chunkProgress = bytes -> {};
    private long storedBegun;
    private final ModuleSites modules;
    private final List<String> problems = new ArrayList<>();
    private final AccessRecords records;
    private long events;
    /** Threads whose trace ended at damage. */
    private int threadsLost;
    /** One thread: accesses go out as they are read (see advance). */
    private boolean direct;

    private MtrReader(MtrFile file, Consumer<? super Event> consumer, Accesses accesses, LoopRecords loopRecords) {
        this.file = file;
        this.consumer = consumer;
        this.modules = new ModuleSites(problems::add);
        this.records = new AccessRecords(modules, consumer, accesses, loopRecords);
    }

    /**
     * Delivers every event the file holds to {@code consumer}, in order.
     *
     * @throws MtrFormatException when a module's skeleton does not belong to the recording (its build-id
     *                            differs or is missing): nothing after its module event is delivered
     */
    public static Result read(MtrFile file, Consumer<? super Event> consumer) throws MtrFormatException {
        return new MtrReader(file, consumer, (tid, address, site) -> consumer.accept(new Event.Probe(tid, address, site)),
                NO_LOOP_RECORDS).run();
    }

    /** As {@link #read(MtrFile, Consumer)}, but every access (recorded or computed) goes to {@code accesses} instead. */
    public static Result read(MtrFile file, Consumer<? super Event> consumer, Accesses accesses) throws MtrFormatException {
        return new MtrReader(file, consumer, accesses, NO_LOOP_RECORDS).run();
    }

    /** As {@link #read(MtrFile, Consumer, Accesses)}, and each skeleton loop record also goes to {@code loops}. */
    public static Result read(MtrFile file, Consumer<? super Event> consumer, Accesses accesses, LoopRecords loops)
            throws MtrFormatException {
        return new MtrReader(file, consumer, accesses, loops).run();
    }

    /**
     * As {@link #read(MtrFile, Consumer, Accesses)}, telling {@code progress} the stored bytes of the chunks begun so
     * far each time a thread begins one (of {@link MtrFile#storedBytes()} in all).
     */
    public static Result read(MtrFile file, Consumer<? super Event> consumer, Accesses accesses, LongConsumer progress)
            throws MtrFormatException {
        MtrReader r = new MtrReader(file, consumer, accesses, NO_LOOP_RECORDS);
        r.chunkProgress = progress;
        return r.run();
    }

    private Result run() throws MtrFormatException {
        // shared: the decoders make the buffers' zstd contexts; closed after they have stopped
        int depth = ChunkSlots.ahead(file);
        try (Arena arena = Arena.ofShared(); ExecutorService decoders = depth > 0 ? ChunkSlots.decoders() : null) {
            List<ThreadStream> threads = new ArrayList<>();
            LongConsumer begun = stored -> chunkProgress.accept(storedBegun += stored);
            file.threads().forEach((tid, chunks) -> threads.add(new ThreadStream(records.thread(tid),
                    new ChunkSlots(file, chunks, arena, decoders, depth, begun))));
            direct = threads.size() == 1;
            if (direct) {
                // one thread: its events come in order, no queue needed to merge them
                ThreadStream t = threads.getFirst();
                for (advance(t); t.next != null; advance(t)) {
                    flush(t);
                    deliver(t.next);
                    t.next = null;
                }
            } else {
                PriorityQueue<ThreadStream> ready = new PriorityQueue<>(Comparator.comparingLong((ThreadStream t) -> t.nextSeq));
                for (ThreadStream t : threads) {
                    advance(t);
                    if (t.next != null) ready.add(t);
                }
                while (!ready.isEmpty()) {
                    ThreadStream t = ready.poll();
                    flush(t);
                    deliver(t.next);
                    t.next = null;
                    advance(t);
                    if (t.next != null) ready.add(t);
                }
            }
            for (ThreadStream t : threads) flush(t);
        }
        records.problems(problems);
        List<String> all = new ArrayList<>(problems);
        file.problem().ifPresent(all::add);
        long dropped = file.end().map(MtrFile.End::dropped).orElse(0L);
        return new Result(file.chunks(), records.probes(), events, dropped, file.end().isPresent(), List.copyOf(all),
                new Skeleton(records.computed(), modules.declinedLoops()), file.problem().isPresent() || threadsLost > 0);
    }

    private void deliver(Event e) throws MtrFormatException {
        // a rewritten program stopped in a trampoline: the user wants the instruction of their program
        if (e instanceof Event.Exit x && x.kind() == Event.ExitKind.SIGNAL)
            e = new Event.Exit(x.tid(), x.kind(), x.value(), modules.original(x.ip()), x.address(), x.path());
        modules.observe(e);
        consumer.accept(e);
    }

    /**
     * Reads the thread's slots up to its next event (kept in {@code next}), holding the accesses before it, or
     * with a single thread delivering them at once: no other thread's event can come between them and the
     * event, so holding them would only copy every record twice.
     */
    private void advance(ThreadStream t) {
        try {
            ChunkSlots s = t.slots;
            while (true) {
                if (direct) deliverRun(t);
                if (!s.nextSlot()) break;
                if ((s.w1 & TAG) == 0) {
                    if (direct) { // the first slot of a chunk
                        records.access(t.state, s.w0, s.w1);
                        continue;
                    }
                    if (t.pendingCount == MAX_PENDING) deliverHeld(t);
                    t.hold(s.w0, s.w1);
                    continue;
                }
                int type = (int) (s.w1 & 0xff);
                int length = (int) ((s.w1 >>> 8) & 0xffff);
                if (type != TAG_EVENT) throw new MtrFormatException("unknown tag type " + type);
                long seq = s.w0;
                Event e = s.event(length);
                events++;
                t.next = e;
                t.nextSeq = seq;
                return;
            }
        } catch (MtrFormatException | StreamFormatException e) {
            problems.add("thread " + t.state.tid + ", chunk " + t.slots.chunkOrder() + ": " + e.getMessage() + "; the rest of this thread's trace is lost");
            t.slots.abandon();
            threadsLost++;
            // Its accesses before the damage go out now, after its last event; held to the end, they would come
            // after the other threads' frees and be named <freed:…>, a use after free that nothing recorded.
            flush(t);
        }
    }

    /** Delivers the access records from the thread's position up to its next tag or the end of its chunk. */
    private void deliverRun(ThreadStream t) {
        ChunkSlots s = t.slots;
        long[] w = s.words;
        int pos = s.pos, last = s.wordCount - 1;
        while (pos < last && (w[pos + 1] & TAG) == 0) {
            records.access(t.state, w[pos], w[pos + 1]);
            pos += 2;
        }
        s.pos = pos;
    }

    /** Delivers the thread's held accesses before its next event (or its end): a rep instruction left open ends here. */
    private void flush(ThreadStream t) {
        deliverHeld(t);
        records.finishRep(t.state);
    }

    private void deliverHeld(ThreadStream t) {
        for (int i = 0; i < t.pendingCount; i++) records.access(t.state, t.pending[2 * i], t.pending[2 * i + 1]);
        t.pendingCount = 0;
    }

    /** One thread's slots, its open rep instruction and loop run, the accesses read but not yet delivered, and its next event. */
    private static final class ThreadStream {
        final AccessRecords.ThreadState state;
        final ChunkSlots slots;
        long[] pending = new long[64];
        int pendingCount;
        Event next;
        long nextSeq;

        ThreadStream(AccessRecords.ThreadState state, ChunkSlots slots) {
            this.state = state;
            this.slots = slots;
        }

        void hold(long address, long site) {
            if (2 * pendingCount == pending.length) pending = Arrays.copyOf(pending, pending.length * 2);
            pending[2 * pendingCount] = address;
            pending[2 * pendingCount + 1] = site;
            pendingCount++;
        }
    }
}
