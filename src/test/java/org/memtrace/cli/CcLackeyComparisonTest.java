package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.LackeyLog;
import org.memtrace.testutil.TraceFile;

/**
 * Full mode of {@code memtrace cc} against Valgrind's Lackey, an independent reference: a real multi-file
 * program (three units, one of them in an {@code ar} library) is built with plain gcc and with
 * {@code memtrace cc}; Lackey runs the plain build, memtrace the instrumented one. Per source line of the
 * program's own code, stack included, both count the same loads and the same stores. Lines, not
 * addresses, because the probes move the code; the compiler's output is the same in both builds, so a line
 * holds the same instructions.
 */
class CcLackeyComparisonTest {
    private static final List<String> SOURCES = List.of("wf.h", "wf_main.c", "wf_table.c", "wf_sort.c");

    @TempDir Path dir;

    record Counts(Map<String, Long> loads, Map<String, Long> stores) {
        Counts() { this(new TreeMap<>(), new TreeMap<>()); }
    }

    @ParameterizedTest
    @ValueSource(strings = {"-O0", "-O2"})
    void loadsAndStoresPerSourceLineAgreeWithLackey(String level) throws Exception {
        for (String s : SOURCES) copy("wordfreq/" + s, s);
        Path plain = build(List.of("gcc"), level, "plain");
        Path traced = build(Cli.command("cc"), level, "traced");
        agree(plain, traced, "/wf_");
    }

    /**
     * Allocator-heavy code (issue 26: a held-out program of malloc, calloc, realloc, mmap, mremap,
     * posix_memalign and a read after free had one load too many in main at -O0).
     */
    @ParameterizedTest
    @ValueSource(strings = {"-O0", "-O2"})
    void allocatorHeavyCodeAgreesWithLackeyPerSourceLine(String level) throws Exception {
        copy("lackey_alloc.c", "lackey_alloc.c");
        List<Path> built = new ArrayList<>();
        for (var cc : List.of(List.of("gcc"), Cli.command("cc"))) {
            Path out = dir.resolve(built.isEmpty() ? "plain" : "traced");
            Files.createDirectories(out);
            run(cc, List.of(level, "-g", "-no-pie"), List.of("-o", out.resolve("alloc").toString(), dir.resolve("lackey_alloc.c").toString()));
            built.add(out.resolve("alloc"));
        }
        agree(built.get(0), built.get(1), "/lackey_alloc.c");
    }

    /** Lackey on the plain build against memtrace on the traced one, per line of the functions whose source path contains {@code own}. */
    private void agree(Path plain, Path traced, String own) throws Exception {
        String plainOut = Gcc.run(List.of(plain.toString()));
        String tracedOut = Gcc.run(List.of(traced.toString()));
        assertThat(tracedOut).as("the program's output does not change").isEqualTo(plainOut);

        Path trace = dir.resolve("traced.trace");
        var r = Cli.run(dir, "run", "--addresses", "raw", "-q", "-o", trace.toString(), "--", traced.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        List<long[]> tracedRanges = functionRanges(traced, own);
        List<Long> ips = new ArrayList<>();
        List<Character> kinds = new ArrayList<>();
        for (var l : TraceFile.read(trace).lines()) {
            if (!l.access() || !inside(tracedRanges, l.number(2))) continue;
            ips.add(l.number(2));
            kinds.add(l.type());
        }
        Counts memtrace = perLine(traced, ips, kinds);

        Path log = dir.resolve("lackey.log");
        Gcc.run(List.of("valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file=" + log, plain.toString()));
        List<long[]> plainRanges = functionRanges(plain, own);
        ips.clear();
        kinds.clear();
        LackeyLog.forEachAccess(log, (ip, kind, address) -> {
            if (inside(plainRanges, ip)) {
                ips.add(ip);
                kinds.add(kind);
            }
        });
        Counts reference = perLine(plain, ips, kinds);

        assertThat(reference.loads()).as("Lackey saw no loads: parsing failed").isNotEmpty();
        assertThat(memtrace.loads()).isEqualTo(reference.loads());
        assertThat(memtrace.stores()).isEqualTo(reference.stores());
    }

    private Path build(List<String> cc, String level, String name) throws Exception {
        Path out = dir.resolve(name);
        Files.createDirectories(out);
        List<String> flags = List.of(level, "-g", "-no-pie", "-fno-inline-functions-called-once");
        run(cc, flags, List.of("-c", dir.resolve("wf_sort.c").toString(), "-o", out.resolve("wf_sort.o").toString()));
        Gcc.run(List.of("ar", "rcs", out.resolve("libwfsort.a").toString(), out.resolve("wf_sort.o").toString()));
        Path prog = out.resolve("wf");
        run(cc, flags, List.of("-o", prog.toString(), dir.resolve("wf_main.c").toString(), dir.resolve("wf_table.c").toString(),
                "-L" + out, "-lwfsort"));
        return prog;
    }

    private static void run(List<String> cc, List<String> flags, List<String> args) throws Exception {
        List<String> command = new ArrayList<>(cc);
        command.addAll(flags);
        command.addAll(args);
        Gcc.run(command);
    }

    /** Counts per {@code file:line} (addr2line on the binary the addresses belong to). */
    private static Counts perLine(Path binary, List<Long> ips, List<Character> kinds) throws Exception {
        Map<Long, String> lines = new HashMap<>();
        List<Long> distinct = ips.stream().distinct().toList();
        List<String> command = new ArrayList<>(List.of("addr2line", "-e", binary.toString()));
        distinct.forEach(a -> command.add(Long.toHexString(a)));
        String[] out = Gcc.run(command).split("\n");
        for (int i = 0; i < distinct.size(); i++) {
            String where = out[i].trim();
            // "file:line (discriminator n)": the discriminator is not a line
            int space = where.indexOf(' ');
            lines.put(distinct.get(i), Path.of(space < 0 ? where : where.substring(0, space)).getFileName().toString());
        }
        Counts c = new Counts();
        for (int i = 0; i < ips.size(); i++)
            (kinds.get(i) == 'L' ? c.loads() : c.stores()).merge(lines.get(ips.get(i)), 1L, Long::sum);
        return c;
    }

    private static boolean inside(List<long[]> ranges, long ip) {
        for (long[] r : ranges) if (ip >= r[0] && ip < r[1]) return true;
        return false;
    }

    /** [start, end) of the program's own functions: the text symbols defined in the fixture's sources. */
    private static List<long[]> functionRanges(Path prog, String own) throws Exception {
        String nm = Gcc.run(List.of("nm", "-S", "-l", "--defined-only", prog.toString()));
        List<long[]> ranges = nm.lines().map(l -> l.split("\\s+"))
                .filter(f -> f.length >= 5 && (f[2].equals("T") || f[2].equals("t")) && f[4].contains(own))
                .map(f -> {
                    long start = Long.parseUnsignedLong(f[0], 16);
                    return new long[] {start, start + Long.parseUnsignedLong(f[1], 16)};
                }).toList();
        assertThat(ranges).as("functions of the fixture in %s", prog).hasSizeGreaterThan(1);
        return ranges;
    }

    private void copy(String source, String as) throws IOException {
        try (InputStream in = CcLackeyComparisonTest.class.getResourceAsStream("/c/" + source)) {
            if (in == null) throw new IOException("no fixture " + source);
            Files.copy(in, dir.resolve(as));
        }
    }
}
