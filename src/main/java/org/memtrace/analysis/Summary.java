package org.memtrace.analysis;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.memtrace.event.Event;

/**
 * Table III of the MadT paper, counted from the stream the way the trace prints it (a read-modify-write is
 * a load and a store, the second half of a page straddle is not counted again), plus what the agent and
 * the ring report about the quality of the run. A compiled-in trace (a {@code .mtr} file) counts probe
 * records instead of faults and, for a selective build, the accuracy the selection bought (paper 001's
 * program-level MA and AIA, weighting each basic block by how often it ran).
 */
public final class Summary implements Analysis {
    private final Set<Long> regions = new HashSet<>();
    private final Set<Integer> threads = new HashSet<>();
    /** The thread of the previous event: most events come from the thread before, no set lookup for them. */
    private int lastTid;
    private boolean anyEvent;
    /** The instrumented files whose probes ran, by identity: each file's totals are one shared object. */
    private final Set<Event.SelectionTotals> modules = Collections.newSetFromMap(new IdentityHashMap<>());
    /** The file of the last block run, in {@link #modules}: a block of the same file adds nothing (no set lookup per block). */
    private Event.SelectionTotals lastModule;
    private final boolean compiledIn;
    /**
     * Threads whose start record names no creator (parent 0) after the first thread's: started without the
     * runtime's pthread_create wrapper (libc's own: a SIGEV_THREAD timer's helper and its notifications), so
     * recorded from their first probe. A compiled-in trace's only: fault mode's agent names no parents.
     */
    private final Set<Integer> threadsWithoutCreator = new HashSet<>();
    /** The paths of the modules the trace reports: rewrite mode's trampoline files are among them once applied. */
    private final Set<String> modulePaths = new HashSet<>();
    /**
     * Anonymous memory the program mapped executable (mmap with PROT_EXEC, as PCRE2's JIT does): code made at run
     * time, which rewrite mode cannot have planned. Count and bytes; mprotect to PROT_EXEC is not seen.
     */
    private long generatedCodeMaps, generatedCodeBytes;
    /** The first thread that started with no creator named: the process's own. */
    private int firstThread = -1;
    /** A run of rewrite mode (said by the run, or by the trace's MT_FALLBACK record, which only it writes). */
    private boolean rewritten;
    /**
     * Rewrite mode's trampolines or a cc build's probes were armed (run --access-stacks): the runtime's MT_HELLO
     * says so (a saved trace too); a trace from a runtime that did not say counts as armed.
     */
    private boolean accessStacks = true;
    /** The run said (rewritten, accessStacks): its word, which knows --access-stacks at depth 1, stands over the trace's. */
    private boolean runSaid;
    private long loads, stores, copies, blockStores, fetches, allocations, releases, faults, windowsAtRisk;
    private long probes, blockExecutions, weightedRefs, weightedMa, weightedAia, computed;
    /** The compiled-in runtime's writer as the program ended (MT_WRITER), null when the trace has none. */
    private Event.Writer writer;
    /** Rewrite mode's int3 fallback as the program ended (MT_FALLBACK), null when the trace has none. */
    private Event.Fallback fallback;
    private Map<String, Long> declinedLoops = Map.of();
    /** From the ending: the numbered events, and whether the trace reached the program's end. */
    private long events;
    private boolean atExit = true;
    private boolean selective;
    private PrintWriter table;
    /** Where finish writes the JSON, and the name it is renamed to once complete (the same path for a device). */
    private Path json, jsonName;
    /** Heap totals ride along with the counts: every command that prints a summary shows them. */
    private final HeapTotals heap = new HeapTotals();

    /** The program-level accuracy of a selective build: Σ exec(b)·block_ma (or aia) / Σ exec(b)·block_refs. */
    /**
     * {@code ma}/{@code aia}: the run's, weighted by executed blocks; {@code staticMa}/{@code staticAia}: the
     * selection's over every block of the instrumented files that ran, unweighted, as memtrace analyze
     * reports it.
     */
    public record Accuracy(long blockExecutions, double ma, double aia, double staticMa, double staticAia) {}

    /** {@code compiledIn}: a trace of probe records (a {@code .mtr} file), else of page faults. */
    public Summary(boolean compiledIn) {
        this.compiledIn = compiledIn;
    }

    /**
     * The probes come from rewrite mode's trampolines, not from a {@code memtrace cc} build: the last line says
     * what that mode leaves out. A saved trace says so itself by its int3 fallback record. {@code accessStacks}:
     * its trampolines were armed for access stacks (run --access-stacks), else the heap's note says none were.
     */
    public Summary rewritten(boolean accessStacks) {
        this.rewritten = true;
        this.accessStacks = accessStacks;
        this.runSaid = true;
        return this;
    }

    /** A memtrace cc build run by memtrace run: {@code on} when its probes were armed (run --access-stacks). */
    public Summary accessStacks(boolean on) {
        this.accessStacks = on;
        this.runSaid = true;
        return this;
    }

    /** At the end, print the table on {@code out} (the stage's {@link #finish}); null prints nothing. */
    public Summary printTo(PrintWriter out) {
        this.table = out;
        return this;
    }

    /**
     * At the end, also write the counts and the run's facts as JSON to {@code partial} and, once complete, rename
     * it to {@code name} (as {@code Report.writeTo}: the caller's output file made {@code partial} beside the name,
     * or gave the name itself for a device such as /dev/null); null writes none.
     */
    public Summary jsonTo(Path partial, Path name) {
        this.json = partial;
        this.jsonName = name;
        return this;
    }

    @Override
    public void access(Access access) {
        if (access.store()) stores++;
        else loads++;
        heap.access(access);
    }

    @Override
    public void allocation(Allocation allocation) {
        heap.allocation(allocation);
    }

    /** The heap totals (docs/analyses.md, "Heap totals"). */
    public HeapTotals heap() { return heap; }

    @Override
    public void fault(int tid, long ip, long address, boolean write) {
        thread(tid);
        faults++;
    }

    private void thread(int tid) {
        if (!anyEvent || tid != lastTid) {
            threads.add(tid);
            lastTid = tid;
            anyEvent = true;
        }
    }

    @Override
    public void probe(int tid, long address, Event.ProbeSite site) {
        thread(tid);
        probes++;
        if (site.computed()) computed++;
        if (!selective && site.selective()) selective = true;
        if (site.firstOfBlock()) {
            // every block that ran has run its first site, so its file is seen here, once per block run
            if (site.module() != lastModule) {
                lastModule = site.module();
                modules.add(lastModule);
            }
            blockExecutions++;
            weightedRefs += site.blockRefs();
            weightedMa += site.blockMa();
            weightedAia += site.blockAia();
        }
    }

    @Override
    public void event(Event event) {
        thread(event.tid());
        switch (event) {
            case Event.Block b -> {
                if (compiledIn && !b.syscall() && b.what() >= Event.BlockFunction.REP_MOVS.code) probes++;
                switch (b.op()) {
                    case COPY -> copies++;
                    case STORE -> blockStores++;
                    case FETCH -> fetches++;
                }
            }
            case Event.Alloc a -> {
                switch (a.function()) {
                    case FREE -> { if (a.arg(0) != 0) releases++; }
                    case MUNMAP -> releases++;
                    default -> allocations++;
                }
                // mmap's arguments: address, length, prot, flags, fd, offset
                if (a.function() == Event.AllocFunction.MMAP && a.usable() > 0 && a.args().length >= 4
                        && (a.arg(2) & PROT_EXEC) != 0 && (a.arg(3) & MAP_ANONYMOUS) != 0) {
                    generatedCodeMaps++;
                    generatedCodeBytes += a.usable();
                }
            }
            // Probes reach any mapped memory, not only the ranges the fault agent protects.
            case Event.Mapping m when m.traced() || compiledIn -> regions.add(m.start());
            case Event.Range r when r.added() -> regions.add(r.start());
            case Event.Stats s -> windowsAtRisk = s.windowsAtRisk();
            case Event.Writer w -> writer = w; // cumulative: the last one counts
            case Event.ThreadEvent t when compiledIn && t.started() && t.value() == 0 -> {
                if (firstThread < 0) firstThread = t.tid();
                else if (t.tid() != firstThread) threadsWithoutCreator.add(t.tid());
            }
            case Event.Module m -> modulePaths.add(m.path());
            // a saved trace: the runtime says whether it armed; one that does not leaves the default
            case Event.Hello h when !runSaid && (h.flags() & Event.Hello.ARMING_SAID) != 0 -> accessStacks = (h.flags() & Event.Hello.ARMED) != 0;
            case Event.Fallback f -> {
                fallback = f; // cumulative too
                rewritten = true;
            }
            default -> {}
        }
    }

    public long loads() { return loads; }

    public long stores() { return stores; }

    public long blockCopies() { return copies; }

    public long blockStores() { return blockStores; }

    public long blockFetches() { return fetches; }

    public long allocations() { return allocations; }

    public long releases() { return releases; }

    public int threads() { return threads.size(); }

    public int regions() { return regions.size(); }

    public long faults() { return faults; }

    /** How long the program's threads waited for the trace writer (a .mtr file's MT_WRITER), if the trace says. */
    public Optional<Event.Writer> writer() { return Optional.ofNullable(writer); }

    private static final long PROT_EXEC = 0x4, MAP_ANONYMOUS = 0x20;

    /** Executable anonymous mappings the program made (code generated at run time): how many, and their bytes. */
    public record GeneratedCode(long mappings, long bytes) {}

    public GeneratedCode generatedCode() { return new GeneratedCode(generatedCodeMaps, generatedCodeBytes); }

    /** The paths of the modules the trace reported loaded (the program, its libraries, rewrite mode's trampoline files). */
    public Set<String> modulePaths() { return Collections.unmodifiableSet(modulePaths); }

    /** What rewrite mode's int3 fallback took and recorded (a .mtr file's MT_FALLBACK), if the trace says. */
    public Optional<Event.Fallback> fallback() { return Optional.ofNullable(fallback); }

    /** Probe records of a compiled-in trace; a {@code rep} instruction counts once. */
    public long probes() { return probes; }

    /** Of the probes, the accesses a skeleton loop's replay computed instead of a record (memtrace cc --skeleton). */
    public long computed() { return computed; }

    /** Prints the table and writes the JSON, as configured. */
    @Override
    public String name() { return "summary"; }

    @Override
    public void finish(Ending ending) throws IOException {
        declinedLoops = ending.declinedLoops();
        events = ending.events();
        atExit = ending.cutShort() == null;
        if (table != null) {
            print(table, ending.lost(), ending.elapsed());
            if (ending.cutShort() != null) table.println("  the trace is incomplete: " + ending.cutShort());
            table.flush();
        }
        if (json == null) return;
        Map<String, Object> j = new LinkedHashMap<>(counts(ending.lost()));
        accuracy().ifPresent(a -> {
            j.put("accuracyMa", a.ma());
            j.put("accuracyAia", a.aia());
            j.put("staticAccuracyMa", a.staticMa());
            j.put("staticAccuracyAia", a.staticAia());
        });
        j.put("heap", heap.json(events, atExit));
        if (ending.elapsed() != null) j.put("elapsedSeconds", ending.elapsed().toNanos() / 1e9);
        if (writer != null) // a .mtr trace's writer: how long the program waited for a free buffer, as the table says
        {
            Map<String, Object> w = new LinkedHashMap<>(); // a fixed key order, as the rest of the file
            w.put("waitMs", Math.round(writer.waitNanos() / 1e6));
            w.put("waits", writer.waits());
            w.put("buffers", writer.buffers());
            if (writer.noWriterThread()) { // rewrite mode: the threads' own encoding and writing, as the table says
                w.put("ownMs", Math.round(writer.ownNanos() / 1e6));
                w.put("ownBuffers", writer.ownBuffers());
            }
            j.put("writer", w);
        }
        if (fallback != null) {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("traps", fallback.traps());
            f.put("accesses", fallback.accesses());
            if (fallback.knowsPuns()) { // the planned punned jumps: written, or kept their int3 (bytes changed, no stub page)
                f.put("punsWritten", fallback.puns());
                f.put("punsKeptBytes", fallback.punsBytes());
                f.put("punsKeptPage", fallback.punsPage());
            }
            j.put("int3Fallback", f);
        }
        if (ending.exitStatus() != null) j.put("exitStatus", ending.exitStatus());
        if (ending.description() != null) j.put("ending", ending.description());
        if (ending.cutShort() != null) j.put("incomplete", ending.cutShort());
        try {
            new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(json.toFile(), j);
            if (!json.equals(jsonName)) Files.move(json, jsonName, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            String reason = e instanceof FileSystemException f && f.getReason() != null ? f.getReason() : e.getMessage();
            throw new IOException("cannot write the summary to " + jsonName + ": " + reason, e);
        }
    }

    /** The selection's accuracy, for a selective build whose blocks ran at least once; empty otherwise. */
    public Optional<Accuracy> accuracy() {
        if (!selective || weightedRefs == 0) return Optional.empty();
        long refs = 0, ma = 0, aia = 0;
        for (Event.SelectionTotals t : modules) {
            refs += t.references();
            ma += t.ma();
            aia += t.aia();
        }
        return Optional.of(new Accuracy(blockExecutions, (double) weightedMa / weightedRefs, (double) weightedAia / weightedRefs,
                refs == 0 ? 1 : (double) ma / refs, refs == 0 ? 1 : (double) aia / refs));
    }

    /** The table's counts by name, for machine-readable output; {@code lost} comes from the ring header. */
    public Map<String, Long> counts(long lost) {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("memoryRegions", (long) regions.size());
        m.put("loads", loads);
        m.put("stores", stores);
        m.put("blockCopies", copies);
        m.put("blockStores", blockStores);
        m.put("blockFetches", fetches);
        m.put("allocations", allocations);
        m.put("releases", releases);
        m.put("threads", (long) threads.size());
        if (!threadsWithoutCreator.isEmpty()) m.put("threadsWithoutCreator", (long) threadsWithoutCreator.size());
        if (compiledIn) {
            m.put("probes", probes);
            if (computed > 0 || !declinedLoops.isEmpty()) {
                m.put("computed", computed);
                m.put("logged", probes - computed);
            }
        } else {
            m.put("faults", faults);
            m.put("windowsAtRisk", windowsAtRisk);
        }
        m.put("eventsLost", lost);
        accuracy().ifPresent(a -> m.put("blockExecutions", a.blockExecutions()));
        return m;
    }

    /**
     * Prints the table; {@code lost} comes from the ring header (or the .mtr end record), {@code elapsed}
     * from the launcher (null when a saved trace is printed: its run time is unknown).
     */
    public void print(PrintWriter out, long lost, Duration elapsed) {
        out.println("memtrace summary");
        counts(lost).forEach((name, n) -> {
            if (!name.equals("threadsWithoutCreator")) out.printf(Locale.ROOT, "  %-18s %,15d%n", label(name), n);
        });
        accuracy().ifPresent(a -> {
            out.printf(Locale.ROOT, "  %-18s %15.2f %%%n", "accuracy ma", 100 * a.ma());
            out.printf(Locale.ROOT, "  %-18s %15.2f %%%n", "accuracy aia", 100 * a.aia());
            out.printf(Locale.ROOT, "  %-18s %15.2f %%  (the selection over all blocks, as memtrace analyze counts it)%n",
                    "static ma", 100 * a.staticMa());
            out.printf(Locale.ROOT, "  %-18s %15.2f %%%n", "static aia", 100 * a.staticAia());
        });
        if (!declinedLoops.isEmpty()) {
            out.printf(Locale.ROOT, "  %-18s %,15d%n", "loops logged", declinedLoops.values().stream().mapToLong(Long::longValue).sum());
            new java.util.TreeMap<>(declinedLoops).forEach((reason, n) -> out.printf(Locale.ROOT, "    %-16s %,15d  %s%n", "", n, reason));
        }
        if (elapsed != null) out.printf(Locale.ROOT, "  %-18s %,15.3f s%n", "elapsed", elapsed.toNanos() / 1e9);
        if (writer != null && writer.noWriterThread())
            // rewrite mode: no writer thread waits for buffers, each thread encodes and writes what it filled (rt_queue.c)
            out.printf(Locale.ROOT, "  program wrote its trace itself: %,d ms encoding and writing %,d buffers in its own threads"
                    + " (no writer thread in rewrite mode; the last buffers, written at exit, not counted)%n",
                    Math.round(writer.ownNanos() / 1e6), writer.ownBuffers());
        else if (writer != null)
            out.printf(Locale.ROOT, "  program waited for the writer: %,d ms (%,d times no buffer was free, of %,d buffers written before exit)%n",
                    Math.round(writer.waitNanos() / 1e6), writer.waits(), writer.buffers());
        if (!threadsWithoutCreator.isEmpty())
            out.printf(Locale.ROOT, "  %,d of the threads started without the program's pthread_create (libc's own: SIGEV_THREAD timers"
                    + " and the like): recorded from their first probe%n", threadsWithoutCreator.size());
        if (fallback != null)
            out.printf(Locale.ROOT, "  int3 fallback: %,d accesses recorded in %,d traps (instructions no jump could patch)%n",
                    fallback.accesses(), fallback.traps());
        // a probe records no callers: the first executions of a rewrite trampoline or of a memtrace cc probe
        // and fault mode's faults do (docs/stacks.md, "Access stacks")
        if (rewritten && !accessStacks)
            heap.fromProbes("not recorded: --access-stacks records an instruction's first 4 executions'; --mode fault every access's");
        else if (rewritten) heap.fromProbes("recorded for an instruction's first 4 executions only; --mode fault records every access's");
        else if (compiledIn && !accessStacks)
            heap.fromProbes("not recorded: --access-stacks records an instruction's first 4 executions'; a build without"
                    + " memtrace cc under memtrace run --mode fault every access's");
        else if (compiledIn)
            heap.fromProbes("recorded for an instruction's first 4 executions only; a build without memtrace cc under"
                    + " memtrace run --mode fault records every access's");
        heap.print(out, events, atExit);
        if (rewritten)
            out.println("  only rewritten code is traced: ld.so's start-up, memtrace's runtime and the modules the rewrite lines name untraced"
                    + " are not in the trace");
        else if (compiledIn)
            out.println("  only code built with memtrace cc is traced: uninstrumented libraries' own accesses are not in the trace");
        out.flush();
    }

    /** memoryRegions → memory regions: the words the text summary and the report show for a count's key. */
    public static String label(String camel) {
        return camel.replaceAll("([A-Z])", " $1").toLowerCase(Locale.ROOT);
    }
}
