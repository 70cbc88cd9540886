package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * A full build records a {@code @GOTPCREL} load exactly where the linked code still loads: a PIE taking the
 * addresses of libc functions and a {@code -fPIC} library reading a variable of another library load their GOT
 * slots, as Lackey sees on the plain build; the address of a function of the same program, relaxed into a
 * {@code lea}, records nothing; {@code analyze} still finds the site table to be the selection. Likewise a
 * {@code -fno-plt} call or tail call through a GOT slot: its read is recorded where the linker kept it.
 */
class GotLoadTest {
    private static final List<String> PROGRAM = List.of("addr_printf", "addr_qsort", "addr_local");
    private static final List<String> LIBRARY = List.of("read_counter", "addr_qsort_lib");

    @TempDir Path dir;

    @Test
    void gotLoadsAreRecordedWhereTheLinkKeptThem() throws Exception {
        for (String c : List.of("got_main.c", "got_other.c", "got_lib.c", "got_var.c")) copy(c);
        String rpath = "-Wl,-rpath," + dir;
        Gcc.run(List.of("gcc", "-O2", "-shared", "-fPIC", "-o", path("libgotvar.so"), path("got_var.c")));
        build("cc", "-O2", "-shared", "-fPIC", "-o", "libgotmt.so", "got_lib.c", "-L.", "-lgotvar", rpath);
        build("cc", "-O2", "-o", "main", "got_main.c", "got_other.c", "-L.", "-lgotmt", "-lgotvar", rpath);
        Map<String, long[]> ours = traced("main", PROGRAM, LIBRARY);
        for (String file : List.of("main", "libgotmt.so")) {
            Cli.Result analyzed = Cli.run(dir, "analyze", file);
            assertThat(analyzed.stdout()).as(file + ": " + analyzed.stderr())
                    .containsPattern("site table: \\d+ instrumented instructions .*exactly the selected ones");
        }

        Gcc.run(List.of("gcc", "-O2", "-shared", "-fPIC", "-o", path("libgotplain.so"), path("got_lib.c"), "-L" + dir,
                "-lgotvar", rpath));
        Gcc.run(List.of("gcc", "-O2", "-o", path("plain"), path("got_main.c"), path("got_other.c"), "-L" + dir,
                "-lgotplain", "-lgotvar", rpath));
        Map<String, long[]> lackey = lackey();

        // per call (three calls each): the GOT slot and the return address; addr_local's slot was relaxed away
        assertThat(ours.get("addr_printf")[2]).as("GOT loads of addr_printf").isEqualTo(3);
        assertThat(ours.get("addr_qsort_lib")[2]).as("GOT loads of addr_qsort_lib").isEqualTo(3);
        assertThat(ours.get("read_counter")[2]).as("GOT and variable loads of read_counter").isEqualTo(6);
        assertThat(ours.get("addr_local")[2]).as("loads of addr_local off the stack").isZero();
        for (String f : PROGRAM) {
            assertThat(new long[] {ours.get(f)[0], ours.get(f)[1]}).as("loads and stores of " + f).containsExactly(lackey.get(f));
        }
        for (String f : LIBRARY) {
            assertThat(new long[] {ours.get(f)[0], ours.get(f)[1]}).as("loads and stores of " + f).containsExactly(lackey.get(f));
        }
    }

    @Test
    void noPltCallsReadTheirSlotWhereTheLinkKeptIt() throws Exception {
        for (String c : List.of("got_noplt.c", "got_other.c")) copy(c);
        List<String> functions = List.of("call_libc", "tail_libc", "call_local");
        build("cc", "-O2", "-fno-plt", "-o", "noplt", "got_noplt.c", "got_other.c");
        Map<String, long[]> ours = traced("noplt", functions, List.of());
        Cli.Result analyzed = Cli.run(dir, "analyze", "noplt");
        assertThat(analyzed.stdout()).as(analyzed.stderr())
                .containsPattern("site table: \\d+ instrumented instructions .*exactly the selected ones");

        Gcc.run(List.of("gcc", "-O2", "-fno-plt", "-o", path("plain"), path("got_noplt.c"), path("got_other.c")));
        Path log = dir.resolve("lackey.log");
        String out = Gcc.run(List.of("valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file=" + log, path("plain"), "where"));
        Map<String, long[]> lackey = lackeyCounts(log, placed(Path.of(path("plain")), functions, "call_libc", out.lines().findFirst().orElseThrow()));

        // per call (three each): strlen's slot; call_local's slot was relaxed into a direct call
        assertThat(ours.get("call_libc")[2]).as("GOT loads of call_libc").isEqualTo(3);
        assertThat(ours.get("tail_libc")[2]).as("GOT loads of tail_libc").isEqualTo(3);
        assertThat(ours.get("call_local")[2]).as("loads of call_local off the stack").isZero();
        for (String f : functions) {
            assertThat(new long[] {ours.get(f)[0], ours.get(f)[1]}).as("loads and stores of " + f).containsExactly(lackey.get(f));
        }
    }

    private void build(String... args) throws Exception {
        Cli.Result r = Cli.run(dir, args);
        assertThat(r.status()).as(r.stderr()).isZero();
    }

    private String path(String name) {
        return dir.resolve(name).toString();
    }

    /** Loads, stores and loads off the stack per function of the trace the cc-built {@code program} writes. */
    private Map<String, long[]> traced(String program, List<String> functions, List<String> more) throws Exception {
        Path mtr = dir.resolve(program + ".mtr");
        Gcc.run(List.of(path(program)), Map.of("MEMTRACE_OUT", mtr.toString()));
        Cli.Result printed = Cli.run(dir, "print", "-q", "-o", path(program + ".txt"), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        Map<String, long[]> result = new TreeMap<>();
        functions.forEach(f -> result.put(f, new long[3]));
        more.forEach(f -> result.put(f, new long[3]));
        for (TraceFile.Line l : TraceFile.read(dir.resolve(program + ".txt")).lines()) {
            if (!l.access()) continue;
            String where = l.field(2);
            long[] counts = result.get(where.substring(0, where.indexOf('+')));
            if (counts == null) continue;
            counts[l.type() == 'L' ? 0 : 1]++;
            if (l.type() == 'L' && !l.field(1).equals("[stack]")) counts[2]++;
        }
        return result;
    }

    /** Lackey's loads and stores per function of the plain program and library. */
    private Map<String, long[]> lackey() throws Exception {
        Path log = dir.resolve("lackey.log");
        String out = Gcc.run(List.of("env", "LD_BIND_NOW=1", "valgrind", "--tool=lackey", "--trace-mem=yes",
                "--log-file=" + log, path("plain"), "where"));
        List<String> where = out.lines().limit(2).toList();
        Map<String, long[]> ranges = new TreeMap<>();
        ranges.putAll(placed(Path.of(path("plain")), PROGRAM, "addr_printf", where.get(0)));
        ranges.putAll(placed(Path.of(path("libgotplain.so")), LIBRARY, "read_counter", where.get(1)));
        return lackeyCounts(log, ranges);
    }

    /** Lackey's loads and stores of {@code log} per function, by the run-time {@code ranges} of their code. */
    private static Map<String, long[]> lackeyCounts(Path log, Map<String, long[]> ranges) throws Exception {
        Map<String, long[]> result = new TreeMap<>();
        ranges.keySet().forEach(f -> result.put(f, new long[2]));
        LackeyLog.forEachAccess(log, (ip, kind, address) -> ranges.forEach((f, r) -> {
            if (ip >= r[0] && ip < r[1]) result.get(f)[kind == 'L' ? 0 : 1]++;
        }));
        return result;
    }

    /** The run-time ranges of {@code functions} of {@code code}, placed by where {@code anchor} was ({@code 0x…}). */
    private static Map<String, long[]> placed(Path code, List<String> functions, String anchor, String at) throws Exception {
        Map<String, long[]> ranges = FunctionRanges.named(code, functions);
        long bias = Long.parseUnsignedLong(at.substring(2), 16) - ranges.get(anchor)[0];
        ranges.values().forEach(r -> {
            r[0] += bias;
            r[1] += bias;
        });
        return ranges;
    }

    private void copy(String source) throws IOException {
        try (InputStream in = GotLoadTest.class.getResourceAsStream("/c/" + source)) {
            if (in == null) throw new IOException("no fixture " + source);
            Files.copy(in, dir.resolve(source));
        }
    }
}
