package org.memtrace.instrument;

import org.memtrace.format.SiteFormat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Instrumented programs behave as the plain ones do, and the stub runtime receives exactly the records the
 * contract promises for small fixtures.
 */
class RewriterRunTest {
    @TempDir
    Path dir;

    private static final CcOptions FULL = CcOptions.DEFAULTS;

    @ParameterizedTest
    @ValueSource(strings = {"-O0", "-O2"})
    void globalLoopLoadsEveryElementAtItsAddress(String opt) throws Exception {
        List<String> flags = List.of(opt, "-no-pie");
        Path exe = Instrumented.program(dir, "rw_loop.c", "loop", FULL, flags);
        Path plain = Instrumented.plain(dir, "rw_loop.c", "loop_plain", flags);
        Instrumented.Run run = Instrumented.run(exe, Map.of());
        Instrumented.Run reference = Instrumented.run(plain, Map.of());
        assertThat(run.status()).isEqualTo(3).isEqualTo(reference.status());
        assertThat(firstFields(run.stdout(), 3)).isEqualTo(firstFields(reference.stdout(), 3)).isEqualTo("36 37 7");

        long table = Instrumented.symbol(exe, "table");
        long[] sum = Instrumented.functions(exe).get("sum");
        List<Instrumented.Record> loads = Instrumented.in(run.records(), sum).stream()
                .filter(r -> r.w0() >= table && r.w0() < table + 32).toList();
        if (opt.equals("-O0")) {
            assertThat(loads).hasSize(8);
            for (int i = 0; i < 8; i++) {
                assertThat(loads.get(i).w0()).isEqualTo(table + 4L * i);
                assertThat(loads.get(i).kind()).isEqualTo(SiteFormat.LOAD);
                assertThat(loads.get(i).size()).isEqualTo(4);
            }
        } else {
            // The optimizer may unroll or vectorize: the loads still cover the table exactly once, in order.
            long next = table;
            for (Instrumented.Record r : loads) {
                assertThat(r.kind()).isEqualTo(SiteFormat.LOAD);
                assertThat(r.w0()).isEqualTo(next);
                next += r.size();
            }
            assertThat(next).isEqualTo(table + 32);
        }

        // The TLS variable: the record's address is the one the program printed for &tv.
        long tv = Long.parseUnsignedLong(run.stdout().strip().split(" ")[4].substring(2), 16);
        List<Instrumented.Record> inTls = Instrumented.in(run.records(), Instrumented.functions(exe).get("tls"));
        assertThat(inTls).anySatisfy(r -> {
            assertThat(r.w0()).isEqualTo(tv);
            assertThat(r.kind()).isEqualTo(SiteFormat.LOAD);
            assertThat(r.size()).isEqualTo(4);
        });
    }

    @Test
    void callPushPopAndRetRecordTheirStackSlotsAtO0() throws Exception {
        List<String> flags = List.of("-O0", "-no-pie");
        Path exe = Instrumented.program(dir, "rw_loop.c", "loop", FULL, flags);
        Instrumented.Run run = Instrumented.run(exe, Map.of());
        Map<String, long[]> f = Instrumented.functions(exe);
        List<Instrumented.Record> records = run.records();
        // The call of leaf in main, then leaf's own records up to its ret.
        int call = -1;
        for (int i = 0; i + 1 < records.size(); i++) {
            if (inside(records.get(i), f.get("main")) && inside(records.get(i + 1), f.get("leaf"))) {
                call = i;
                break;
            }
        }
        assertThat(call).as("main's call of leaf").isNotNegative();
        int ret = call + 1;
        while (inside(records.get(ret + 1), f.get("leaf"))) ret++;
        Instrumented.Record callSlot = records.get(call);
        Instrumented.Record push = records.get(call + 1);
        Instrumented.Record pop = records.get(ret - 1);
        Instrumented.Record retSlot = records.get(ret);
        long slot = callSlot.w0();
        assertThat(List.of(callSlot.kind(), callSlot.size(), callSlot.flags() & SiteFormat.FLAG_IMPLICIT_STACK))
                .containsExactly(SiteFormat.STORE, 8, 1);
        assertThat(List.of(push.kind(), push.size(), push.flags() & 1)).containsExactly(SiteFormat.STORE, 8, 1);
        assertThat(push.w0()).isEqualTo(slot - 8);
        assertThat(List.of(pop.kind(), pop.size(), pop.flags() & 1)).containsExactly(SiteFormat.LOAD, 8, 1);
        assertThat(pop.w0()).isEqualTo(slot - 8);
        assertThat(List.of(retSlot.kind(), retSlot.size(), retSlot.flags() & 1)).containsExactly(SiteFormat.LOAD, 8, 1);
        assertThat(retSlot.w0()).isEqualTo(slot);
    }

    @Test
    void repStringInstructionsRecordPointersAndCount() throws Exception {
        List<String> flags = List.of("-Os", "-no-pie");
        Path exe = Instrumented.program(dir, "rw_rep.c", "rep", FULL, flags);
        Instrumented.Run run = Instrumented.run(exe, Map.of());
        assertThat(run.status()).isEqualTo(3);
        long g1 = Instrumented.symbol(exe, "g1");
        long g2 = Instrumented.symbol(exe, "g2");
        List<Instrumented.Record> clear = Instrumented.in(run.records(), Instrumented.functions(exe).get("clear"))
                .stream().filter(r -> r.kind() >= SiteFormat.REP_DESTINATION).toList();
        assertThat(clear).extracting(Instrumented.Record::kind, Instrumented.Record::size, Instrumented.Record::w0)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(SiteFormat.REP_DESTINATION, 4, g1),
                        org.assertj.core.groups.Tuple.tuple(SiteFormat.REP_COUNT, 4, 100L));
        List<Instrumented.Record> copy = Instrumented.in(run.records(), Instrumented.functions(exe).get("copy"))
                .stream().filter(r -> r.kind() >= SiteFormat.REP_DESTINATION).toList();
        assertThat(copy).extracting(Instrumented.Record::kind, Instrumented.Record::w0)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(SiteFormat.REP_DESTINATION, g1),
                        org.assertj.core.groups.Tuple.tuple(SiteFormat.REP_SOURCE, g2),
                        org.assertj.core.groups.Tuple.tuple(SiteFormat.REP_COUNT, 100L));
    }

    @ParameterizedTest
    @ValueSource(strings = {"-O0", "-O2"})
    void threadedProgramBehavesAsThePlainOne(String opt) throws Exception {
        List<String> flags = List.of(opt, "-pthread", "-no-pie");
        Path exe = Instrumented.program(dir, "rw_threads.c", "threads", FULL, flags);
        Path plain = Instrumented.plain(dir, "rw_threads.c", "threads_plain", flags);
        Instrumented.Run run = Instrumented.run(exe, Map.of());
        Instrumented.Run reference = Instrumented.run(plain, Map.of());
        assertThat(run.status()).isZero();
        assertThat(run.stdout()).isEqualTo(reference.stdout());
        long table = Instrumented.symbol(exe, "table");
        long[] work = Instrumented.functions(exe).get("work");
        // Every thread loads the 1000 elements of the table: 4000 loads of it in work, whatever the threads' order.
        long bytes = Instrumented.in(run.records(), work).stream()
                .filter(r -> r.kind() == SiteFormat.LOAD && r.w0() >= table && r.w0() < table + 4000)
                .mapToLong(Instrumented.Record::size).sum();
        assertThat(bytes).isEqualTo(4 * 4000);
    }

    @ParameterizedTest
    @ValueSource(strings = {"-O0", "-O2"})
    void sharedLibraryBuiltFromInstrumentedAssemblyWorks(String opt) throws Exception {
        Path s = Instrumented.assembly(dir, "rw_lib.c", "rw_lib", List.of(opt, "-fPIC"));
        Path mt = dir.resolve("rw_lib.mt.s");
        Rewriter.Result r = Instrumented.rewrite(s, mt, FULL);
        assertThat(r.warnings()).isEmpty();
        assertThat(r.sites()).isPositive();
        assertThat(java.nio.file.Files.readString(mt)).as("a shared library's probes find the cursor through the GOT")
                .doesNotContain("@tpoff").doesNotContain("__memtrace_cursor:");
        Path lib = dir.resolve("librw.so");
        org.memtrace.testutil.Gcc.run(List.of("gcc", "-shared", "-fPIC", "-o", lib.toString(), mt.toString()));
        Path plainLib = dir.resolve("plain/librw.so");
        java.nio.file.Files.createDirectories(plainLib.getParent());
        org.memtrace.testutil.Gcc.run(List.of("gcc", opt, "-shared", "-fPIC", "-o", plainLib.toString(),
                Instrumented.fixture(dir, "rw_lib.c").toString()));
        List<String> flags = List.of(opt);
        Path exe = Instrumented.program(dir, "rw_lib_main.c", "libmain", FULL, flags, "-L" + dir, "-lrw");
        Path plain = Instrumented.plain(dir, "rw_lib_main.c", "libmain_plain", flags, "-L" + plainLib.getParent(), "-lrw");
        Instrumented.Run run = Instrumented.run(exe, Map.of("LD_LIBRARY_PATH", dir.toString()));
        Instrumented.Run reference = Instrumented.run(plain, Map.of("LD_LIBRARY_PATH", plainLib.getParent().toString()));
        assertThat(run.status()).isZero();
        assertThat(run.stdout()).isEqualTo(reference.stdout()).isNotBlank();
        assertThat(run.foreignRecords()).as("records of the library's sites").isGreaterThanOrEqualTo(40 * 2);
    }

    @Test
    void noStackLeavesStackAccessesOut() throws Exception {
        List<String> flags = List.of("-O0", "-no-pie");
        CcOptions noStack = CcOptions.parse(List.of("--no-stack"));
        Path exe = Instrumented.program(dir, "rw_loop.c", "loop", noStack, flags);
        Instrumented.Run run = Instrumented.run(exe, Map.of());
        assertThat(run.status()).isEqualTo(3);
        long table = Instrumented.symbol(exe, "table");
        List<Instrumented.Record> sum = Instrumented.in(run.records(), Instrumented.functions(exe).get("sum"));
        assertThat(sum).extracting(Instrumented.Record::w0)
                .containsExactly(table, table + 4, table + 8, table + 12, table + 16, table + 20, table + 24, table + 28);
        assertThat(run.records()).noneMatch(r -> (r.flags() & SiteFormat.FLAG_IMPLICIT_STACK) != 0);
    }

    @Test
    void callFrameInformationFollowsTheProbesMovesOfRsp() throws Exception {
        // leaf is one lea and the ret's probe: the frame grows by 136 + 2 * 8 (an executable's group probe) or
        // 128 + 3 * 8 (the GOT form, which any object may carry) and shrinks back in steps.
        assertThat(leafFrame("loop", true))
                .containsExactly("rsp+8", "rsp+144", "rsp+152", "rsp+160", "rsp+152", "rsp+144", "rsp+8");
        assertThat(leafFrame("loop_got", false))
                .containsExactly("rsp+8", "rsp+136", "rsp+144", "rsp+152", "rsp+160", "rsp+152", "rsp+144", "rsp+136", "rsp+8");
    }

    /** The call frame address rules of rw_loop.c's leaf (-O2 -no-pie), as readelf interprets them. */
    private List<String> leafFrame(String name, boolean forExecutable) throws Exception {
        Path s = Instrumented.assembly(dir, "rw_loop.c", name, List.of("-O2"));
        Path mt = dir.resolve(name + ".mt.s");
        if (forExecutable) Instrumented.rewriteForExecutable(s, mt, FULL);
        else Instrumented.rewrite(s, mt, FULL);
        Path exe = dir.resolve(name);
        org.memtrace.testutil.Gcc.run(List.of("gcc", "-no-pie", "-o", exe.toString(), mt.toString(), Instrumented.stub(dir).toString()));
        long leaf = Instrumented.functions(exe).get("leaf")[0];
        String frames = org.memtrace.testutil.Gcc.run(List.of("readelf", "--debug-dump=frames-interp", exe.toString()));
        String fde = frames.substring(frames.indexOf("pc=%016x".formatted(leaf)));
        return fde.lines().skip(2).takeWhile(l -> !l.isBlank()).map(l -> l.trim().split("\\s+")[1]).toList();
    }

    private static boolean inside(Instrumented.Record r, long[] range) {
        return r.insn() >= range[0] && r.insn() < range[1];
    }

    private static String firstFields(String line, int n) {
        String[] f = line.strip().split(" ");
        return String.join(" ", new ArrayList<>(List.of(f)).subList(0, n));
    }
}
