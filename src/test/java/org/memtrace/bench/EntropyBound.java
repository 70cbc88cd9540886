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
 * records of each chunk come on top of it. Accesses are counted as the summary counts loads and stores (a
 * read-modify-write instruction is both). Prints one line:
 * {@code accesses N file-bytes B file-B/access X bound-B/access Y address-B/access A site-B/access S}.
 *
 * <p>A measurement tool, not part of the product jar (it lives with the tests, like {@link ReplaySpeed}).
 * Usage: {@code java --enable-native-access=ALL-UNNAMED -cp target/memtrace.jar:target/test-classes
 * org.memtrace.bench.EntropyBound FILE.mtr}.
 */
public final class EntropyBound {
    private EntropyBound() {
    }

    /**
     * Counts of (context, value) pairs in one open-addressed table of primitives: a context is a site's number
     * (its own differences, or which site follows it), a value a difference or a site's number. sqlite3's 542 M
     * accesses did not finish in 50 min with a boxed map per context (about 100 bytes and three allocations a
     * distinct value, the heap full); here 20 bytes a slot and no allocation but the table's growth.
     */
    static final class PairCounts {
        private int[] context = new int[1 << 16];
        private long[] value = new long[1 << 16], count = new long[1 << 16];
        private int size;

        PairCounts() {
            java.util.Arrays.fill(context, -1);
        }

        void add(int c, long v) {
            int mask = context.length - 1;
            for (int i = slot(c, v, mask); ; i = (i + 1) & mask) {
                if (context[i] == c && value[i] == v) {
                    count[i]++;
                    return;
                }
                if (context[i] < 0) {
                    context[i] = c;
                    value[i] = v;
                    count[i] = 1;
                    if (++size * 2 > context.length) grow();
                    return;
                }
            }
        }

        private static int slot(int c, long v, int mask) {
            long h = (v + c * 0x9E3779B97F4A7C15L) * 0xBF58476D1CE4E5B9L;
            return (int) (h ^ (h >>> 31)) & mask;
        }

        private void grow() {
            int[] oc = context;
            long[] ov = value, on = count;
            context = new int[oc.length * 2];
            value = new long[oc.length * 2];
            count = new long[oc.length * 2];
            java.util.Arrays.fill(context, -1);
            int mask = context.length - 1;
            for (int j = 0; j < oc.length; j++) {
                if (oc[j] < 0) continue;
                int i = slot(oc[j], ov[j], mask);
                while (context[i] >= 0) i = (i + 1) & mask;
                context[i] = oc[j];
                value[i] = ov[j];
                count[i] = on[j];
            }
        }

        /** Σ c·log2(n/c) over the pairs, n the count of the pair's context ({@code totals[context]}), in bits. */
        double bits(long[] totals) {
            double b = 0;
            for (int i = 0; i < context.length; i++)
                if (context[i] >= 0) b += count[i] * (Math.log((double) totals[context[i]] / count[i]) / Math.log(2));
            return b;
        }
    }

    /** One thread's sites by address (open addressing: few thousand), numbered from a count all threads share. */
    private static final class ThreadSites {
        long[] ips = new long[256];
        int[] ids = new int[256];
        int size;
        int previous; // the number of the thread's last site, at first its own "before the first access"

        int id(long ip, Model m) {
            int mask = ips.length - 1;
            for (int i = (int) ((ip * 0x9E3779B97F4A7C15L) >>> 40) & mask; ; i = (i + 1) & mask) {
                if (ids[i] != 0 && ips[i] == ip) return ids[i];
                if (ids[i] == 0) {
                    int id = m.newSite();
                    ips[i] = ip;
                    ids[i] = id;
                    if (++size * 2 > ips.length) grow();
                    return id;
                }
            }
        }

        private void grow() {
            long[] oi = ips;
            int[] od = ids;
            ips = new long[oi.length * 2];
            ids = new int[oi.length * 2];
            int mask = ips.length - 1;
            for (int j = 0; j < oi.length; j++) {
                if (od[j] == 0) continue;
                int i = (int) ((oi[j] * 0x9E3779B97F4A7C15L) >>> 40) & mask;
                while (ids[i] != 0) i = (i + 1) & mask;
                ips[i] = oi[j];
                ids[i] = od[j];
            }
        }
    }

    /**
     * The model of the class comment over a stream of accesses. Each thread's sites are contexts of their own
     * (the same instruction in two threads is two), and so is each thread's "before its first access".
     */
    static final class Model implements MtrReader.Accesses {
        private final Map<Integer, ThreadSites> threads = new HashMap<>();
        private final PairCounts deltas = new PairCounts(), next = new PairCounts();
        private long[] last = new long[1024], siteCount = new long[1024], successorCount = new long[1024];
        private int sites = 1; // 0 is no site: ThreadSites' empty slot
        private int lastTid = -1;
        private ThreadSites thread;
        long accesses;

        private int newSite() {
            if (sites == last.length) {
                last = java.util.Arrays.copyOf(last, sites * 2);
                siteCount = java.util.Arrays.copyOf(siteCount, sites * 2);
                successorCount = java.util.Arrays.copyOf(successorCount, sites * 2);
            }
            return sites++;
        }

        @Override
        public void access(int tid, long address, Event.ProbeSite site) {
            // A read-modify-write record is a load and a store, as the summary counts it (bench/corpus.sh's
            // accesses column and bytes per access divide by its loads + stores): counted once, the bound of
            // zstd -19's trace was per 69.83 M accesses where its summary said 70.16 M. The store's address is
            // the load's and its site the same instruction: no news, so no bits beyond the load's.
            accesses += site.kind() == Event.ProbeKind.MODIFY ? 2 : 1;
            if (tid != lastTid) {
                thread = threads.computeIfAbsent(tid, k -> {
                    ThreadSites t = new ThreadSites();
                    t.previous = newSite();
                    return t;
                });
                lastTid = tid;
            }
            int id = thread.id(site.ip(), this);
            deltas.add(id, address - last[id]);
            siteCount[id]++;
            last[id] = address;
            next.add(thread.previous, id);
            successorCount[thread.previous]++;
            thread.previous = id;
        }

        /** The address part, in bits. */
        double addressBits() {
            return deltas.bits(siteCount);
        }

        /** The site part, in bits. */
        double siteBits() {
            return next.bits(successorCount);
        }

        /** The line {@link #main} prints for a trace file of {@code bytes} bytes. */
        String figures(long bytes) {
            double address = addressBits(), site = siteBits();
            long n = Math.max(1, accesses);
            return String.format(java.util.Locale.ROOT,
                    "accesses %d file-bytes %d file-B/access %.4f bound-B/access %.4f address-B/access %.4f site-B/access %.4f",
                    accesses, bytes, (double) bytes / n, (address + site) / 8 / n, address / 8 / n, site / 8 / n);
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
        System.out.println(model.figures(Files.size(path)));
    }
}
