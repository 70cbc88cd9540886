package org.memtrace.bench;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import org.memtrace.rewrite.ModuleRewrite;

/**
 * Plans modules into a cache directory of the caller's, one after the other, and prints each one's wall and
 * JVM CPU seconds (the planner's as, ld and strip not included: time the whole process for them). Used by
 * bench/rewrite-plan.sh to plan the same modules with two builds and compare the plans byte for byte.
 *
 * <pre>java -cp CLASSES:TEST-CLASSES org.memtrace.bench.PlanModules CACHE-DIR MODULE...</pre>
 */
public final class PlanModules {
    private PlanModules() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: PlanModules CACHE-DIR MODULE...");
            System.exit(2);
        }
        Path cache = Files.createDirectories(Path.of(args[0]));
        var os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        for (int i = 1; i < args.length; i++) {
            long wall = System.nanoTime(), cpu = os.getProcessCpuTime();
            ModuleRewrite.Prepared p = ModuleRewrite.prepare(Path.of(args[i]), cache);
            System.out.printf("%s: %d memory instructions rewritten; wall %.2f s, JVM CPU %.2f s%n", args[i], p.rewritten(),
                    (System.nanoTime() - wall) / 1e9, (os.getProcessCpuTime() - cpu) / 1e9);
        }
    }
}
