package org.memtrace.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.memtrace.event.Event;
import org.memtrace.mtr.MtrFile;
import org.memtrace.mtr.MtrFormatException;
import org.memtrace.mtr.MtrReader;

/**
 * The entropy figure of bench/cc.sh: how many bytes per access a trace's accesses carry under a simple
 * per-site model, against how many its {@code .mtr} file spends. Two parts, each an empirical (zero-order)
 * entropy summed over its contexts, {@code Σ c·log2(n/c)} over the values' counts {@code c} out of {@code n}:
 * <ul>
 * <li><b>address</b>: per thread and site, the differences of its addresses (each to the same site's previous
 * one, the first to 0) — a random index into an array costs its own bits, a constant stride nothing;
 * <li><b>site</b>: per thread and previous site, which site comes next — a loop's fixed order costs nothing.
 * </ul>
 * Their sum, per access, is the bound printed. It is what a coder that knows each site's difference
 * distribution (and nothing else) needs; a model of more context (a stride that changes by rows, a
 * pointer loaded by an earlier site) can go below it, and the file's events, chunk headers and the first
 * records of each chunk come on top of it. Prints one line:
 * {@code accesses N file-bytes B file-B/access X bound-B/access Y address-B/access A site-B/access S}.
 *
 * <p>A measurement tool, not part of the product jar (it lives with the tests, like {@link ReplaySpeed}).
 * Usage: {@code java --enable-native-access=ALL-UNNAMED -cp target/memtrace.jar:target/test-classes
 * org.memtrace.bench.EntropyBound FILE.mtr}.
 */
public final class EntropyBound {
    private EntropyBound() {
    }

    /** Counts of values: a hash map of boxed longs, enough for the few thousand distinct values a site shows. */
    private static final class Histogram {
        final Map<Long, long[]> counts = new HashMap<>();
        long n;

        void add(long v) {
            counts.computeIfAbsent(v, k -> new long[1])[0]++;
            n++;
        }

        /** Σ c·log2(n/c), in bits. */
        double bits() {
            double b = 0;
            for (long[] c : counts.values()) b += c[0] * (Math.log((double) n / c[0]) / Math.log(2));
            return b;
        }
    }

    /** One thread's state: each site's last address and difference histogram, each site's successors. */
    private static final class ThreadModel {
        final Map<Long, long[]> last = new HashMap<>();        // by the site's address
        final Map<Long, Histogram> deltas = new HashMap<>();
        final Map<Long, Histogram> next = new HashMap<>();     // by the previous site's address (0 before the first)
        long previous;
    }

    private static final class Model implements MtrReader.Accesses {
        final Map<Integer, ThreadModel> threads = new HashMap<>();
        long accesses;

        @Override
        public void access(int tid, long address, Event.ProbeSite site) {
            accesses++;
            ThreadModel t = threads.computeIfAbsent(tid, k -> new ThreadModel());
            long ip = site.ip();
            long[] last = t.last.computeIfAbsent(ip, k -> new long[1]);
            t.deltas.computeIfAbsent(ip, k -> new Histogram()).add(address - last[0]);
            last[0] = address;
            t.next.computeIfAbsent(t.previous, k -> new Histogram()).add(ip);
            t.previous = ip;
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: EntropyBound FILE.mtr");
            System.exit(2);
        }
        Path path = Path.of(args[0]);
        Model model = new Model();
        try (MtrFile file = MtrFile.open(path)) {
            MtrReader.read(file, e -> { }, model);
        } catch (MtrFormatException e) {
            System.err.println("memtrace: " + args[0] + ": " + e.getMessage());
            System.exit(1);
            return;
        }
        double address = 0, site = 0;
        for (ThreadModel t : model.threads.values()) {
            for (Histogram h : t.deltas.values()) address += h.bits();
            for (Histogram h : t.next.values()) site += h.bits();
        }
        long n = Math.max(1, model.accesses), bytes = Files.size(path);
        System.out.printf(java.util.Locale.ROOT,
                "accesses %d file-bytes %d file-B/access %.4f bound-B/access %.4f address-B/access %.4f site-B/access %.4f%n",
                model.accesses, bytes, (double) bytes / n, (address + site) / 8 / n, address / 8 / n, site / 8 / n);
    }
}
