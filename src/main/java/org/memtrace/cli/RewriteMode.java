package org.memtrace.cli;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.memtrace.launch.InstrumentedRun;
import org.memtrace.launch.TraceOptions;
import org.memtrace.launch.LaunchException;
import org.memtrace.launch.NativeFiles;
import org.memtrace.launch.Target;
import org.memtrace.rewrite.ModuleRewrite;
import org.memtrace.rewrite.RewriteCache;
import org.memtrace.rewrite.RewriteException;
import org.memtrace.x86.ZydisUnavailableException;

/**
 * {@code memtrace run --mode rewrite}: the executable's plan made (or found in the cache) before the
 * program starts, and the environment that makes its runtime apply it (docs/rewriting.md).
 */
record RewriteMode(String program, ModuleRewrite.Prepared prepared, Map<String, String> environment) {
    /** The modes of {@code memtrace run}, spelled as on the command line. */
    enum Mode { fault, rewrite }

    static RewriteMode prepare(Target target) throws LaunchException {
        try {
            ModuleRewrite.Prepared p = ModuleRewrite.prepare(target.traced(), RewriteCache.directory());
            // the runtime puts the user's LD_PRELOAD back (or none) before main: descendants run untraced
            Map<String, String> environment = new HashMap<>();
            String preload = NativeFiles.runtime().toString();
            String theirs = System.getenv("LD_PRELOAD");
            if (theirs != null) {
                environment.put("MEMTRACE_LD_PRELOAD", theirs);
                if (!theirs.isBlank()) preload += ":" + theirs;
            }
            environment.put("LD_PRELOAD", preload);
            environment.put("MEMTRACE_REWRITE_PLAN", p.plan().toString());
            return new RewriteMode(target.traced().toString(), p, Map.copyOf(environment));
        } catch (RewriteException e) {
            throw LaunchException.usage("cannot rewrite " + target.traced() + ": " + e.getMessage());
        } catch (ZydisUnavailableException e) {
            throw LaunchException.environment("cannot rewrite " + target.traced() + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw LaunchException.environment("cannot rewrite " + target.traced() + ": " + e.getMessage(), e);
        }
    }

    /** The recorder of the run: the runtime's, as for a memtrace cc program, preloaded with the plan. */
    InstrumentedRun recorder(TraceOptions options, Consumer<String> problems) {
        return new InstrumentedRun(options, problems, environment);
    }

    /** The summary's line: what was rewritten and what was left untraced, by reason. */
    String counts() {
        String left = prepared.leftByReason();
        return "rewrite: " + prepared.rewritten() + " memory instructions of " + program + " rewritten, " + prepared.left()
                + " left untraced" + (left.isEmpty() ? "" : " (" + left + ")") + "; libraries are not rewritten yet";
    }
}
