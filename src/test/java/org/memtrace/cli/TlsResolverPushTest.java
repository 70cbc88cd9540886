package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.FunctionRanges;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.LackeyLog;
import org.memtrace.testutil.TraceFile;

/**
 * The push of a {@code call __tls_get_addr} (general- and local-dynamic TLS, {@code -fPIC}) is recorded
 * exactly where the call survives the link: in a shared library every function's loads and stores, stack
 * included, equal Lackey's; the same object linked into an executable, where the linker relaxes the call
 * away, records no push (its stores equal Lackey's).
 */
class TlsResolverPushTest {
    private static final List<String> LIBRARY = List.of("get_gd", "bump_ld");

    @TempDir Path dir;

    @Test
    void aSharedLibrarysResolverPushesAreThoseLackeySees() throws Exception {
        copy("tls_lib.c");
        copy("tls_main.c");
        build("cc", "-O2", "-shared", "-fPIC", "-o", "libtlsmt.so", "tls_lib.c");
        build("cc", "-O2", "-o", "main", "tls_main.c", "-L.", "-ltlsmt", "-Wl,-rpath," + dir);
        Map<String, long[]> ours = traced("main");
        Cli.Result analyzed = Cli.run(dir, "analyze", "libtlsmt.so");
        assertThat(analyzed.stdout()).as(analyzed.stderr()).containsPattern("site table: \\d+ instrumented instructions .*exactly the selected ones");

        Gcc.run(List.of("gcc", "-O2", "-shared", "-fPIC", "-o", dir.resolve("libtlsplain.so").toString(), dir.resolve("tls_lib.c").toString()));
        Gcc.run(List.of("gcc", "-O2", "-o", dir.resolve("plain").toString(), dir.resolve("tls_main.c").toString(),
                "-L" + dir, "-ltlsplain", "-Wl,-rpath," + dir));
        Map<String, long[]> lackey = lackey("plain", dir.resolve("libtlsplain.so"));

        for (String f : LIBRARY) {
            assertThat(lackey.get(f)[1]).as("Lackey saw the pushes of the calls in " + f).isGreaterThanOrEqualTo(4);
            assertThat(ours.get(f)).as("loads and stores of " + f).containsExactly(lackey.get(f));
        }
    }

    @Test
    void theSameObjectInAnExecutableRecordsNoPush() throws Exception {
        copy("tls_lib.c");
        copy("tls_main.c");
        build("cc", "-O2", "-fPIC", "-c", "-o", "tls_lib.o", "tls_lib.c");
        build("cc", "-O2", "-o", "main", "tls_main.c", "tls_lib.o");
        Map<String, long[]> ours = traced("main");
        Gcc.run(List.of("gcc", "-O2", "-fPIC", "-c", "-o", dir.resolve("plain_lib.o").toString(), dir.resolve("tls_lib.c").toString()));
        Gcc.run(List.of("gcc", "-O2", "-o", dir.resolve("plain").toString(), dir.resolve("tls_main.c").toString(),
                dir.resolve("plain_lib.o").toString()));
        Map<String, long[]> lackey = lackey("plain", dir.resolve("plain"));
        for (String f : LIBRARY) {
            // the relaxed sequence reads the thread pointer at %fs:0, which no probe records (docs/compiled-in.md)
            assertThat(ours.get(f)[1]).as("stores of " + f).isEqualTo(lackey.get(f)[1]).isPositive();
        }
    }

    private void build(String... args) throws Exception {
        Cli.Result r = Cli.run(dir, args);
        assertThat(r.status()).as(r.stderr()).isZero();
    }

    /** Loads and stores per function of the trace {@code program} writes, from {@code memtrace print}. */
    private Map<String, long[]> traced(String program) throws Exception {
        Path mtr = dir.resolve(program + ".mtr");
        Gcc.run(List.of(dir.resolve(program).toString()), Map.of("MEMTRACE_OUT", mtr.toString()));
        Cli.Result printed = Cli.run(dir, "print", "-q", "-o", dir.resolve(program + ".txt").toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        Map<String, long[]> result = new TreeMap<>();
        LIBRARY.forEach(f -> result.put(f, new long[2]));
        for (TraceFile.Line l : TraceFile.read(dir.resolve(program + ".txt")).lines()) {
            if (!l.access()) continue;
            String where = l.field(2);
            long[] counts = result.get(where.substring(0, where.indexOf('+')));
            if (counts != null) counts[l.type() == 'L' ? 0 : 1]++;
        }
        return result;
    }

    /** Lackey's loads and stores per function of {@code code} (the library, or the program itself), run on {@code program}. */
    private Map<String, long[]> lackey(String program, Path code) throws Exception {
        Path log = dir.resolve("lackey.log");
        String out = Gcc.run(List.of("env", "LD_BIND_NOW=1", "valgrind", "--tool=lackey", "--trace-mem=yes",
                "--log-file=" + log, dir.resolve(program).toString(), "where"));
        long where = Long.parseUnsignedLong(out.lines().findFirst().orElseThrow().substring(2), 16);
        Map<String, long[]> ranges = FunctionRanges.named(code, LIBRARY);
        long bias = where - ranges.get("get_gd")[0];
        Map<String, long[]> result = new TreeMap<>();
        LIBRARY.forEach(f -> result.put(f, new long[2]));
        LackeyLog.forEachAccess(log, (ip, kind, address) -> ranges.forEach((f, r) -> {
            if (ip - bias >= r[0] && ip - bias < r[1]) result.get(f)[kind == 'L' ? 0 : 1]++;
        }));
        return result;
    }

    private void copy(String source) throws IOException {
        try (InputStream in = TlsResolverPushTest.class.getResourceAsStream("/c/" + source)) {
            if (in == null) throw new IOException("no fixture " + source);
            Files.copy(in, dir.resolve(source));
        }
    }
}
