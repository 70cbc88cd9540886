package org.memtrace.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.memtrace.analysis.Summary;
import org.memtrace.event.Event;
import org.memtrace.launch.Checkpoints;
import org.memtrace.launch.InstrumentedRun;
import org.memtrace.launch.TraceOptions;
import org.memtrace.launch.LaunchException;
import org.memtrace.launch.NativeFiles;
import org.memtrace.launch.Target;
import org.memtrace.rewrite.DlopenPlanner;
import org.memtrace.rewrite.FrameTable;
import org.memtrace.rewrite.LoadedLibraries;
import org.memtrace.rewrite.ModulePlans;
import org.memtrace.rewrite.ModuleRewrite;
import org.memtrace.rewrite.Probes;
import org.memtrace.rewrite.RewriteCache;
import org.memtrace.rewrite.RewriteException;
import org.memtrace.rewrite.PlanChoice;
import org.memtrace.x86.ZydisUnavailableException;

/**
 * {@code memtrace run --mode rewrite}: the plans of the executable and of every library it loads at start
 * made (or found in the cache) before the program starts, and the environment that makes its runtime
 * apply them (docs/rewriting.md). A library that cannot be planned is excluded and counted, never fatal;
 * the executable must be. Libraries opened later by dlopen are planned while the program runs, when its
 * runtime asks ({@link DlopenPlanner}), and reported with the others. {@code unplanned}: the libraries among
 * the excluded whose plan failed (a check run says each: their accesses go unchecked).
 */
record RewriteMode(String program, ModuleRewrite.Prepared prepared, List<Library> libraries, List<String> excluded,
                   List<String> unplanned, Map<String, String> environment, DlopenPlanner dlopen, Probes probes) implements AutoCloseable {
    /** The modes of {@code memtrace run}, spelled as on the command line. */
    enum Mode { fault, rewrite }

    /** A library planned for rewriting. */
    record Library(Path path, ModuleRewrite.Prepared prepared) {}

    static RewriteMode prepare(Target target) throws LaunchException { return prepare(target, PlanChoice.TRACE); }

    /**
     * The same, every module's plan made for {@code choice}: tracing only what its selection chooses
     * ({@code --omega}), or with trampolines that check ({@code memtrace run --check}, docs/check.md) or check
     * and record ({@code --check -o}). A check preloads the check runtime before the tracing runtime (its
     * allocator and libc wrappers are the ones the program calls; the tracing runtime applies the plans), and
     * glibc's libraries are left as they are (their functions are checked by the check runtime's wrappers).
     */
    static RewriteMode prepare(Target target, PlanChoice choice) throws LaunchException {
        return prepare(target, choice, null);
    }

    /**
     * The same, for {@code memtrace run} without {@code --mode}: when the executable cannot be rewritten (no
     * plan for it: trampolines out of reach, not assembled), the cache cannot be used or (a check) the processor
     * has no BMI2, null after one line to {@code fallback}, and the run goes to fault mode, which needs none of
     * them (and, for {@code --check}, checks there: the caller turns fault mode's checks on). With
     * {@code fallback} null that is an error (asked for, the mode must not quietly change).
     */
    static RewriteMode prepare(Target target, PlanChoice choice, Consumer<String> fallback) throws LaunchException {
        Probes probes = choice.probes();
        if (probes != Probes.RECORD && !bmi2()) {
            if (fallback != null) {
                fallback.accept(faultInstead(target, "this processor has no BMI2, which the checks' shifts need", probes));
                return null;
            }
            throw LaunchException.usage("--check --mode rewrite needs a processor with BMI2 (its checks shift with shrx, which leaves "
                    + "the flags alone); use --mode fault");
        }
        try {
            Path cache = RewriteCache.directory();
            List<Library> libraries = new ArrayList<>();
            List<String> excluded = new ArrayList<>(), unplanned = new ArrayList<>();
            LoadedLibraries loaded;
            try {
                loaded = LoadedLibraries.of(target.traced());
            } catch (IOException | RewriteException e) {
                ModuleRewrite.prepare(target.traced(), cache, choice); // why the executable cannot be rewritten says more, if it cannot
                throw e;
            }
            Checkpoints.mark("rewrite: libraries listed");
            excluded.add(NativeFiles.runtime().getFileName() + " (memtrace's runtime)");
            if (probes != Probes.RECORD) excluded.add(NativeFiles.checkRuntime().getFileName() + " (memtrace's check runtime)");
            // the loader too: its plan is applied with the others, so ld.so's code after start-up (lazy binding,
            // dlopen, TLS, exit's destructors) is traced; what it runs before the runtime's constructor is not
            List<Path> planned = new ArrayList<>(loaded.libraries());
            if (loaded.loader() != null) planned.add(loaded.loader());
            // the executable first, then the libraries; planned two at a time when they are not cached
            List<ModulePlans.Job> jobs = new ArrayList<>(List.of(new ModulePlans.Job(target.traced(), false, choice)));
            // glibc's libraries are not checked: left alone (the exception says why), or (--check -o) only recorded
            List<Path> libs = new ArrayList<>();
            for (Path lib : planned) {
                try {
                    jobs.add(new ModulePlans.Job(lib, true, choice.forLibrary(lib)));
                    libs.add(lib);
                } catch (RewriteException e) {
                    excluded.add(lib.getFileName() + " (" + e.getMessage() + ")");
                }
            }
            List<ModulePlans.Outcome> outcomes = ModulePlans.prepare(jobs, cache);
            ModuleRewrite.Prepared p = switch (outcomes.getFirst()) {
                case ModulePlans.Outcome.Planned exe -> exe.prepared();
                case ModulePlans.Outcome.Refused refused -> throw refused.why();
                case ModulePlans.Outcome.Unreadable unreadable -> throw unreadable.why();
            };
            List<String> plans = new ArrayList<>(List.of(p.plan().toString()));
            for (int i = 0; i < libs.size(); i++) {
                // a library that cannot be planned is left out of the rewrite (and said so), the run goes on
                String why = switch (outcomes.get(i + 1)) {
                    case ModulePlans.Outcome.Planned lib -> {
                        libraries.add(new Library(libs.get(i), lib.prepared()));
                        plans.add(lib.prepared().plan().toString());
                        yield null;
                    }
                    case ModulePlans.Outcome.Refused refused -> refused.why().getMessage();
                    case ModulePlans.Outcome.Unreadable unreadable -> unreadable.why().getMessage();
                };
                if (why != null) {
                    String entry = libs.get(i).getFileName() + " (" + why + ")";
                    excluded.add(entry);
                    unplanned.add(entry);
                }
            }
            Checkpoints.mark("rewrite: the modules' plans");
            // the runtime puts the user's LD_PRELOAD back (or none) before main: descendants run untraced
            Map<String, String> environment = new HashMap<>();
            String preload = (probes == Probes.RECORD ? "" : NativeFiles.checkRuntime() + ":") + NativeFiles.runtime();
            String theirs = System.getenv("LD_PRELOAD");
            if (theirs != null) {
                environment.put("MEMTRACE_LD_PRELOAD", theirs);
                if (!theirs.isBlank()) preload += ":" + theirs;
            }
            environment.put("LD_PRELOAD", preload);
            environment.put("MEMTRACE_REWRITE_PLAN", String.join(":", plans));
            // last: nothing below can fail and leave the socket behind
            DlopenPlanner dlopen = DlopenPlanner.start(cache, choice);
            environment.put("MEMTRACE_REWRITE_SOCKET", dlopen.socket().toString());
            Checkpoints.mark("rewrite: dlopen planner listening");
            return new RewriteMode(target.traced().toString(), p, List.copyOf(libraries), List.copyOf(excluded), List.copyOf(unplanned), Map.copyOf(environment), dlopen, probes);
        } catch (RewriteException e) {
            if (fallback == null) throw LaunchException.usage("cannot rewrite " + target.traced() + ": " + e.getMessage());
            fallback.accept(faultInstead(target, e.getMessage(), probes));
            return null;
        } catch (ZydisUnavailableException e) {
            // fault mode decodes with Zydis too: no way round it
            throw LaunchException.environment("cannot rewrite " + target.traced() + ": " + e.getMessage(), e);
        } catch (IOException e) {
            if (fallback == null) throw LaunchException.environment("cannot rewrite " + target.traced() + ": " + e.getMessage(), e);
            fallback.accept(faultInstead(target, e.getMessage(), probes));
            return null;
        }
    }

    private static String faultInstead(Target target, String why, Probes probes) {
        return "cannot rewrite " + target.traced() + " (" + why + "); " + (probes == Probes.RECORD ? "tracing" : "checking")
                + " it by page faults instead (--mode fault)";
    }

    /** Whether the processor has BMI2 (Haswell and later), as /proc/cpuinfo says; true when it cannot be read. */
    private static boolean bmi2() {
        try {
            String info = java.nio.file.Files.readString(Path.of("/proc/cpuinfo"));
            return !info.contains("flags") || java.util.regex.Pattern.compile("^flags\\s*:.*\\bbmi2\\b", java.util.regex.Pattern.MULTILINE).matcher(info).find();
        } catch (IOException | RuntimeException e) {
            return true;
        }
    }

    /**
     * The recorder of the run: the runtime's, as for a memtrace cc program, preloaded with the plans; with
     * {@code accessStacks} it arms the trampolines for access stacks (agent/rewrite/rw_arm.c).
     */
    InstrumentedRun recorder(TraceOptions options, boolean accessStacks, Consumer<String> problems) {
        Map<String, String> env = new HashMap<>(environment);
        if (accessStacks) env.put("MEMTRACE_ACCESS_STACKS", "1");
        if (probes == Probes.RECORD) return new InstrumentedRun(options, problems, env, null);
        // a cold plan made the table from the DWARF it read; a warm one reads it now
        return new InstrumentedRun(options, problems, env, () -> prepared.frames().orElseGet(() -> FrameTable.of(Path.of(program))));
    }

    /**
     * The summary's lines: what was rewritten and left untraced, by reason, in the executable and each library;
     * what the runtime made of the planned punned jumps, as the run's {@code fallback} record says (its
     * MT_FALLBACK: written, or kept their int3 and why); the code the program made at run time ({@code generatedCode}:
     * executable anonymous mappings and their bytes), which no plan covers; what was excluded.
     */
    List<String> counts(Optional<Event.Fallback> fallback, Set<String> reported, Summary.GeneratedCode generated, boolean cut) {
        List<String> lines = new ArrayList<>(), unapplied = new ArrayList<>();
        lines.add(line(program, prepared, reported, unapplied, cut));
        for (Library l : libraries) lines.add(line(l.path().toString(), l.prepared(), reported, unapplied, cut));
        DlopenPlanner.Summary opened = dlopen.summary();
        lines.addAll(opened.rewritten());
        fallback.filter(f -> f.knowsPuns() && f.puns() + f.punsBytes() + f.punsPage() > 0).ifPresent(f -> {
            long kept = f.punsBytes() + f.punsPage();
            List<String> why = new ArrayList<>();
            if (f.punsBytes() > 0) why.add(f.punsBytes() + " bytes not as planned");
            if (f.punsPage() > 0) why.add(f.punsPage() + " no stub page");
            lines.add(kind() + "punned jumps at run time: " + f.puns() + " written, " + kept
                    + " kept their int3" + (why.isEmpty() ? "" : " (" + String.join(", ", why) + ")"));
        });
        if (generated.mappings() > 0) // a JIT's code: no plan can have covered it, and it runs as it was written
            lines.add(kind() + String.format(java.util.Locale.ROOT,
                    "code made at run time is not rewritten: %,d executable %s the program mapped (%,d bytes) ran %s", generated.mappings(),
                    generated.mappings() == 1 ? "mapping" : "mappings", generated.bytes(), notReached()));
        List<String> left = new ArrayList<>(excluded);
        left.addAll(unapplied);
        left.addAll(opened.left());
        lines.add(kind() + "not rewritten: " + String.join(", ", left) + "; " + left.size() + (left.size() == 1 ? " module" : " modules")
                + " " + notReached());
        return lines;
    }

    /** The dlopen planner's socket closed and removed. */
    @Override
    public void close() {
        dlopen.close();
    }

    /**
     * A start-up module's line. Its plan was applied when the trace reports its trampoline file as a module;
     * a plan the runtime refused (no room within 2 GB, other bytes: its own line on stderr says which) left the
     * module untraced, which the line says instead of the planner's counts, and {@code unapplied} gets its name.
     */
    private String line(String module, ModuleRewrite.Prepared p, Set<String> reported, List<String> unapplied, boolean cut) {
        // a trace cut short (the program killed before its runtime wrote its buffers) says nothing of whether a
        // plan was applied
        if (p.rewritten() > 0 && !cut && !reported.contains(p.trampolines().toString())) {
            unapplied.add(Path.of(module).getFileName() + " (its plan not applied at run time)");
            return kind() + module + ": its plan was not applied at run time (the runtime's line above says why); " + notReached();
        }
        return probes == Probes.CHECK ? kind() + p.counted(module, "checked", "unchecked") : kind() + p.counted(module);
    }

    /** The summary lines' prefix: what the trampolines do. */
    private String kind() { return probes == Probes.CHECK ? "check: " : "rewrite: "; }

    /** What code the trampolines do not reach is left: unchecked, or untraced. */
    private String notReached() { return probes == Probes.CHECK ? "unchecked" : "untraced"; }
}
