package org.memtrace.rewrite;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A run's modules prepared together ({@link ModuleRewrite#prepare}, {@link ModuleRewrite#prepareLibrary}): on
 * a cold cache each one not planned yet costs seconds of CPU (libc about 5 in the JVM, as much again in
 * {@code as} and {@code ld}), and a second thread plans the next module meanwhile when the machine has a second
 * processor. Each plan depends on its module alone (its own decoder, its own work directory), so the plans are
 * the same byte for byte as one after the other, and the outcomes come back in the order asked.
 */
public final class ModulePlans {
    /** One module to prepare for {@code choice}: the executable ({@code library} false) or a shared library. */
    public record Job(Path module, boolean library, PlanChoice choice) {}

    /** A job's outcome: its plan, or why it has none. */
    public sealed interface Outcome {
        /** The module's plan. */
        record Planned(ModuleRewrite.Prepared prepared) implements Outcome {}

        /** The module or its cached plan could not be read or written. */
        record Unreadable(IOException why) implements Outcome {}

        /** The module cannot be rewritten (its code, its format). */
        record Refused(RewriteException why) implements Outcome {}
    }

    /** The heap below which modules are planned one at a time (the JVM's default is a quarter of the memory). */
    private static final long TWO_PLANS_HEAP = 3L << 30;

    private ModulePlans() {}

    /**
     * The outcomes of {@code jobs}, in their order, from the plans in {@code cache}. An unchecked exception or
     * error of a job (a bug, Zydis missing) is thrown here, in the caller's thread.
     */
    public static List<Outcome> prepare(List<Job> jobs, Path cache) {
        Outcome[] outcomes = new Outcome[jobs.size()];
        Throwable[] thrown = new Throwable[jobs.size()];
        Worker worker = new Worker(jobs, cache, outcomes, thrown);
        // a warm start (every plan cached) reads a few files per module: no thread for that; and two plans at once
        // hold two modules' decoded code (libc's about 0.6 GB, python3's more): only with the heap for both
        Thread helper = null;
        Runtime runtime = Runtime.getRuntime();
        if (jobs.size() > 1 && runtime.availableProcessors() > 1 && runtime.maxMemory() >= TWO_PLANS_HEAP)
            helper = Thread.ofPlatform().name("memtrace-planner").start(worker);
        worker.run();
        if (helper != null) {
            try {
                helper.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the modules were planned", e);
            }
        }
        for (Throwable t : thrown) {
            if (t instanceof RuntimeException r) throw r;
            if (t instanceof Error e) throw e;
        }
        return List.of(outcomes);
    }

    /** Takes the next job not taken yet until none is left; each thread that runs it plans one module at a time. */
    private static final class Worker implements Runnable {
        private final List<Job> jobs;
        private final Path cache;
        private final Outcome[] outcomes;
        private final Throwable[] thrown;
        private final AtomicInteger next = new AtomicInteger();

        Worker(List<Job> jobs, Path cache, Outcome[] outcomes, Throwable[] thrown) {
            this.jobs = List.copyOf(jobs);
            this.cache = cache;
            this.outcomes = outcomes;
            this.thrown = thrown;
        }

        @Override
        public void run() {
            for (int i = next.getAndIncrement(); i < jobs.size(); i = next.getAndIncrement()) {
                Job job = jobs.get(i);
                try {
                    outcomes[i] = new Outcome.Planned(job.library() ? ModuleRewrite.prepareLibrary(job.module(), cache, job.choice())
                            : ModuleRewrite.prepare(job.module(), cache, job.choice()));
                } catch (IOException e) {
                    outcomes[i] = new Outcome.Unreadable(e);
                } catch (RewriteException e) {
                    outcomes[i] = new Outcome.Refused(e);
                } catch (RuntimeException | Error e) {
                    thrown[i] = e;
                }
            }
        }
    }
}
