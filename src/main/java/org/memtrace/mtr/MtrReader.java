package org.memtrace.mtr;

import java.lang.foreign.Arena;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.memtrace.event.Event;
import org.memtrace.event.EventDecoder;
import org.memtrace.event.StreamFormatException;
import org.memtrace.event.StreamLayout;

/**
 * Turns a {@code .mtr} file back into one event stream: the threads' slot streams are merged so that events
 * come in the order of their global sequence numbers, and each access record is delivered between the
 * events of its own thread that surround it, as late as it can be (just before its thread's next event) so
 * that the allocations other threads made before it are known when it is named. Pending accesses are
 * bounded ({@link #MAX_PENDING} per thread): past that they go out at once, which the order still allows.
 * Each thread holds the decompressed chunk being read and, when a thread has more than one chunk, the next
 * {@link #AHEAD}, which two decoder threads decompress and unpack meanwhile: zstd and unpacking are half or
 * more of a logged trace's replay, and on other cores they overlap the merge and the loops' regeneration
 * (bench/results/skeleton.md, "Replay: decoder threads").
 *
 * <p>Access records become {@link Event.Probe}; the records of one rep string instruction become one
 * {@link Event.Block} (two fetches for {@code cmps}). Damage ends the thread or the file where it is found:
 * everything before it is delivered, and {@link Result#problems} says what was lost.
 */
public final class MtrReader {
    static final int MAX_PENDING = 1 << 20;
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
    private final Accesses accesses;
    private final LoopRecords loopRecords;
    /** Told the stored bytes of the chunks begun so far, each time a thread begins one: a reader's progress. */
    private LongConsumer chunkProgress = bytes -> {};
    private long storedBegun;
    private final ModuleSites modules;
    private final List<String> problems = new ArrayList<>();
    private long probes, events, unknownSites, firstUnknownSite, brokenReps, computed, brokenLoops;
    private long firstBrokenLoop;
    /** Threads whose trace ended at damage. */
    private int threadsLost;
    /** One thread: accesses go out as they are read (see advance). */
    private boolean direct;

    private MtrReader(MtrFile file, Consumer<? super Event> consumer, Accesses accesses, LoopRecords loopRecords) {
        this.file = file;
        this.consumer = consumer;
        this.accesses = accesses;
        this.loopRecords = loopRecords;
        this.modules = new ModuleSites(problems::add);
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
        int depth = ahead(file);
        try (Arena arena = Arena.ofShared(); ExecutorService decoders = depth > 0 ? decoders() : null) {
            List<ThreadStream> threads = new ArrayList<>();
            file.threads().forEach((tid, chunks) -> threads.add(new ThreadStream(tid, chunks, arena, decoders, depth)));
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
        if (unknownSites > 0)
            problems.add(unknownSites + " access records name a site no site table describes (the first 0x"
                    + Long.toHexString(firstUnknownSite) + "); they are left out");
        if (brokenLoops > 0)
            problems.add(brokenLoops + " skeleton loop runs do not match their records (the first at 0x" + Long.toHexString(firstBrokenLoop)
                    + "); their computed accesses are left out from the mismatch on");
        if (brokenReps > 0) problems.add(brokenReps + " rep string instructions lack their count record; they are left out");
        List<String> all = new ArrayList<>(problems);
        file.problem().ifPresent(all::add);
        long dropped = file.end().map(MtrFile.End::dropped).orElse(0L);
        return new Result(file.chunks(), probes, events, dropped, file.end().isPresent(), List.copyOf(all),
                new Skeleton(computed, modules.declinedLoops()), file.problem().isPresent() || threadsLost > 0);
    }

    /**
     * How many chunks each thread decodes ahead of the one it reads: none when every thread has one chunk
     * (there is no next one to decode meanwhile), fewer as threads are many ({@link #AHEAD_THREADS}).
     */
    private static int ahead(MtrFile file) {
        int threads = file.threads().size();
        if (file.chunks() == threads) return 0;
        return threads <= AHEAD_THREADS ? AHEAD : threads <= 2 * AHEAD_THREADS ? 1 : 0;
    }

    /**
     * Two daemon threads that decode chunks ahead of the reading thread, taking them in the order they are
     * asked for: two, since on heap.c's trace one decoder was the slower of the two threads.
     */
    private static ExecutorService decoders() {
        return Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "memtrace-chunk-decoder");
            t.setDaemon(true);
            return t;
        });
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
            while (true) {
                if (direct) deliverRun(t);
                if (!t.nextSlot()) break;
                if ((t.w1 & TAG) == 0) {
                    if (direct) { // the first slot of a chunk
                        access(t, t.w0, t.w1);
                        continue;
                    }
                    if (t.pendingCount == MAX_PENDING) deliverHeld(t);
                    t.hold(t.w0, t.w1);
                    continue;
                }
                int type = (int) (t.w1 & 0xff);
                int length = (int) ((t.w1 >>> 8) & 0xffff);
                if (type != TAG_EVENT) throw new MtrFormatException("unknown tag type " + type);
                long seq = t.w0;
                Event e = t.event(length);
                events++;
                t.next = e;
                t.nextSeq = seq;
                return;
            }
        } catch (MtrFormatException | StreamFormatException e) {
            problems.add("thread " + t.tid + ", chunk " + t.chunkOrder() + ": " + e.getMessage() + "; the rest of this thread's trace is lost");
            t.abandon();
            threadsLost++;
            // Its accesses before the damage go out now, after its last event; held to the end, they would come
            // after the other threads' frees and be named <freed:…>, a use after free that nothing recorded.
            flush(t);
        }
    }

    /** Delivers the access records from the thread's position up to its next tag or the end of its chunk. */
    private void deliverRun(ThreadStream t) {
        long[] w = t.words;
        int pos = t.pos, last = t.wordCount - 1;
        while (pos < last && (w[pos + 1] & TAG) == 0) {
            access(t, w[pos], w[pos + 1]);
            pos += 2;
        }
        t.pos = pos;
    }

    /** Delivers the thread's held accesses before its next event (or its end): a rep instruction left open ends here. */
    private void flush(ThreadStream t) {
        deliverHeld(t);
        finishRep(t);
    }

    private void deliverHeld(ThreadStream t) {
        for (int i = 0; i < t.pendingCount; i++) access(t, t.pending[2 * i], t.pending[2 * i + 1]);
        t.pendingCount = 0;
    }

    private void access(ThreadStream t, long address, long siteAddress) {
        probes++;
        // the common record first, tested directly: a pattern switch dispatches through a bootstrap per record
        Event.ProbeSite plain = modules.access(siteAddress);
        if (plain != null && t.rep == null && t.loop == null) {
            accesses.access(t.tid, address, plain);
            return;
        }
        special(t, address, siteAddress, modules.site(siteAddress));
    }

    /** The rest of {@link #access}, apart so that the common path stays small enough for the JIT to inline. */
    private void special(ThreadStream t, long address, long siteAddress, SiteTable.Site site) {
        switch (site) {
            case null -> {
                if (unknownSites++ == 0) firstUnknownSite = siteAddress;
            }
            case SiteTable.Relaxed r -> {
                // an access the linker took away (a TLS resolver push, a GOT load): nothing happened
            }
            case SiteTable.Access a -> {
                finishRep(t);
                if (t.loop != null && !t.loop.callees(a.site().ip()) && !t.loop.logged(a.site().ip(), t)) brokenLoop(t, a.site().ip());
                accesses.access(t.tid, address, a.site());
            }
            case SiteTable.LoopValue v -> {
                finishRep(t);
                if (v.slot() == 0) {
                    if (t.loop != null && t.loop.inCall()) t.callers.push(t.loop); // a run inside a function the loop called
                    else if (t.loop != null) brokenLoop(t, v.loop().loggedIp()[0]);
                    t.loop = t.replay(v.loop());
                } else if (t.loop == null || t.loop.loop != v.loop()) {
                    brokenLoop(t, v.loop().loggedIp()[0]);
                    return;
                }
                t.loop.value(v.slot(), address);
                loopRecords.entry(t.tid, v.source(), v.bias(), v.slot(), address);
            }
            case SiteTable.LoopMarker m -> {
                finishRep(t);
                // without a run (its entry was lost, or it broke already) the exit record counts the loss once
                if (t.loop != null && (t.loop.loop != m.loop() || !t.loop.marker(m.marker(), address, t))) {
                    brokenLoop(t, m.loop().loggedIp()[0]);
                    return;
                }
                if (t.loop != null) loopRecords.marker(t.tid, m.marker(), address);
                if (t.loop != null && t.loop.ends(m.marker())) t.loop = t.callers.poll(); // a side exit: the run is over
            }
            case SiteTable.LoopExit x -> {
                finishRep(t);
                if (t.loop == null || t.loop.loop != x.loop() || !t.loop.exit(address, t)) brokenLoop(t, x.loop().loggedIp()[0]);
                else loopRecords.exit(t.tid, address);
                t.loop = t.callers.poll(); // back in the caller's run, if a loop called this one's function
            }
            case SiteTable.Rep r -> {
                if (t.rep != null && (t.rep.ip() != r.ip() || (t.repSeen & 1 << r.role()) != 0)) finishRep(t);
                t.rep = r;
                t.repSeen |= 1 << r.role();
                switch (r.role()) {
                    case SiteTable.KIND_REP_DESTINATION -> t.repDestination = address;
                    case SiteTable.KIND_REP_SOURCE -> t.repSource = address;
                    default -> t.repCount = address;
                }
                if (t.repSeen == r.roles()) finishRep(t);
            }
        }
    }

    /** A loop run whose records are not what its skeleton says: counted, and the thread goes on without it. */
    private void brokenLoop(ThreadStream t, long ip) {
        if (brokenLoops++ == 0) firstBrokenLoop = ip;
        t.loop = null;
        t.callers.clear();
    }

    /** Turns the rep instruction's records into block events; a zero count touched no memory and prints nothing. */
    private void finishRep(ThreadStream t) {
        SiteTable.Rep r = t.rep;
        if (r == null) return;
        int seen = t.repSeen;
        t.rep = null;
        t.repSeen = 0;
        if ((seen & 1 << SiteTable.KIND_REP_COUNT) == 0) {
            brokenReps++;
            return;
        }
        if (t.repCount == 0) return;
        long length = t.repCount * r.size();
        int tid = t.tid;
        long dst = t.repDestination, src = t.repSource;
        switch (r.op()) {
            case MOVS -> block(tid, Event.BlockOp.COPY, r, dst, src, length, Event.BlockFunction.REP_MOVS);
            case STOS -> block(tid, Event.BlockOp.STORE, r, dst, 0, length, Event.BlockFunction.REP_STOS);
            case LODS -> block(tid, Event.BlockOp.FETCH, r, 0, src, length, Event.BlockFunction.REP_LODS);
            case SCAS -> block(tid, Event.BlockOp.FETCH, r, 0, dst, length, Event.BlockFunction.REP_SCAS);
            case CMPS -> {
                block(tid, Event.BlockOp.FETCH, r, 0, src, length, Event.BlockFunction.REP_CMPS);
                block(tid, Event.BlockOp.FETCH, r, 0, dst, length, Event.BlockFunction.REP_CMPS);
            }
        }
    }

    private void block(int tid, Event.BlockOp op, SiteTable.Rep r, long dst, long src, long length, Event.BlockFunction f) {
        consumer.accept(new Event.Block(tid, op, false, r.ip(), dst, src, length, f.code));
    }

    /** One thread's slots across its chunks, with the accesses read but not yet delivered. */
    private final class ThreadStream implements LoopReplay.Sink {
        final int tid;
        final List<MtrFile.Chunk> chunks;
        /** Decode the next chunks while this one is read from {@code scratch}; null: decode in place. */
        private final ExecutorService decoders;
        /** The buffers of the chunk being read (null before the first with a decoder). */
        private MtrFile.Scratch scratch;
        /** The chunks after this one, oldest first: each one's buffers and its word count, when decoded. */
        private final ArrayDeque<MtrFile.Scratch> spares = new ArrayDeque<>();
        private final ArrayDeque<Future<Integer>> ahead = new ArrayDeque<>();
        /** The next chunk to hand to the decoders. */
        private int queued;
        int chunk = -1;
        /** The chunk's slots as words, decoded onto the heap (MtrFile.words). */
        long[] words = new long[0];
        int wordCount;
        int pos;
        long w0, w1;
        long[] pending = new long[64];
        /** The event record being decoded, reused: the decoder copies what it keeps. */
        long[] recordWords = new long[16];
        int pendingCount;
        Event next;
        long nextSeq;
        SiteTable.Rep rep;
        int repSeen;
        long repDestination, repSource, repCount;
        LoopReplay loop;
        /** This thread's replay of each loop it ran, reused from run to run. */
        private final Map<SkeletonTable.Placed, LoopReplay> replays = new IdentityHashMap<>();
        /** The runs whose body called the function the current run is in, innermost first. */
        final ArrayDeque<LoopReplay> callers = new ArrayDeque<>();

        @Override
        public void computed(long address, Event.ProbeSite site) {
            computed++;
            accesses.access(tid, address, site);
        }

        LoopReplay replay(SkeletonTable.Placed loop) {
            LoopReplay r = replays.computeIfAbsent(loop, LoopReplay::new);
            // a recursive call runs the loop again while its caller's run of it goes on: that run keeps its state
            return (callers.contains(r) ? new LoopReplay(loop) : r).start();
        }

        ThreadStream(int tid, List<MtrFile.Chunk> chunks, Arena arena, ExecutorService decoders, int depth) {
            this.tid = tid;
            this.chunks = chunks;
            this.decoders = decoders;
            if (decoders == null) scratch = new MtrFile.Scratch(arena);
            else for (int i = 0; i < Math.min(chunks.size(), depth + 1); i++) decodeAhead(new MtrFile.Scratch(arena));
        }

        boolean nextSlot() throws MtrFormatException {
            while (pos + 1 >= wordCount) {
                if (chunk + 1 >= chunks.size()) return false;
                chunk++;
                chunkProgress.accept(storedBegun += chunks.get(chunk).storedLength());
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

        void hold(long address, long site) {
            if (2 * pendingCount == pending.length) pending = Arrays.copyOf(pending, pending.length * 2);
            pending[2 * pendingCount] = address;
            pending[2 * pendingCount + 1] = site;
            pendingCount++;
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

        long chunkOrder() { return chunk < 0 ? -1 : chunks.get(chunk).order(); }

        void abandon() {
            chunk = chunks.size();
            wordCount = 0;
            pos = 0;
        }
    }
}
