package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The sites a report names for a block's allocating and freeing calls (docs/check.md, "Reports"): a function
 * and, with -g, file:line, in {@code memtrace cc --check} builds and under {@code memtrace run --check} alike,
 * where ASan names "make where_sites.c:11" and "drop where_sites.c:18" (checked by hand: gcc -fsanitize=address
 * -O0 -g, valgrind --leak-check=full). A binary nobody rebuilt has no call-site table: its static helpers are
 * named from its .symtab (they were {@code where_sites-plain+4521}), lines from its DWARF line table; a shared
 * library's static helpers from the library's own .symtab.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WhereSitesTest {
    Path dir, source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "where_sites.c");
        CheckBuilds.fixture(dir, "where_lib.c");
        CheckBuilds.fixture(dir, "where_lib_main.c");
        gcc("-O0", "-g", "-o", "plain", "where_sites.c");
        gcc("-O0", "-o", "plain-nog", "where_sites.c");
        gcc("-O0", "-g", "-shared", "-fPIC", "-o", "libwhere.so", "where_lib.c");
        gcc("-O0", "-g", "-o", "lib_main", "where_lib_main.c", "-L.", "-lwhere", "-Wl,-rpath,$ORIGIN");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "checked", "where_sites.c");
        CheckBuilds.build(dir, false, true, "-O0", "-o", "checked-nog", "where_sites.c");
    }

    private void gcc(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("gcc"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
    }

    /** The first line of each case's report, built with -g (either mode: the sites are the same). */
    private static final Map<String, String> WITH_LINES = Map.of(
            "uaf", "use after free: <freed:0001@make+N>+1 (a block of 16 bytes, allocated at where_sites.c:{MAKE}, "
                    + "freed at where_sites.c:{DROP}) read 1 byte, at where_sites.c:{UAF} (use_after_free+N)",
            "overflow", "heap overflow: <malloc0001@make+N>+16 (a block of 16 bytes, allocated at where_sites.c:{MAKE}) "
                    + "written 1 byte, 0 bytes past its end, at where_sites.c:{OVERFLOW} (overflow+N)",
            "double", "double free: free of <freed:0001@make+N>+0 (a block of 16 bytes, allocated at where_sites.c:{MAKE}, "
                    + "freed at where_sites.c:{DROP}), at where_sites.c:{DROP} (drop+N)",
            "invalid", "invalid free: free of <malloc0001@make+N>+1 (a block of 16 bytes, allocated at where_sites.c:{MAKE}), "
                    + "at where_sites.c:{DROP} (drop+N)");

    /** The same without -g: every site function+offset, never module+offset. */
    private static final Map<String, String> NO_LINES = Map.of(
            "uaf", "use after free: <freed:0001@make+N>+1 (a block of 16 bytes, allocated at make+N, freed at drop+N) "
                    + "read 1 byte, at use_after_free+N",
            "overflow", "heap overflow: <malloc0001@make+N>+16 (a block of 16 bytes, allocated at make+N) written 1 byte, "
                    + "0 bytes past its end, at overflow+N",
            "double", "double free: free of <freed:0001@make+N>+0 (a block of 16 bytes, allocated at make+N, freed at drop+N), "
                    + "at drop+N",
            "invalid", "invalid free: free of <malloc0001@make+N>+1 (a block of 16 bytes, allocated at make+N), at drop+N");

    /** run --check's frames under the line (-O0 -g: the frame-pointer walk up to main). */
    private static final Map<String, List<String>> FRAMES = Map.of(
            "uaf", List.of("#0 where_sites.c:{UAF} (use_after_free+N) in use_after_free", "#1 where_sites.c:{CALL_UAF} (main+N) in main"),
            "overflow", List.of("#0 where_sites.c:{OVERFLOW} (overflow+N) in overflow",
                    "#1 where_sites.c:{CALL_OVERFLOW} (main+N) in main"),
            "double", List.of("#0 where_sites.c:{DROP} (drop+N) in drop", "#1 where_sites.c:{DOUBLE} (double_free+N) in double_free",
                    "#2 where_sites.c:{CALL_DOUBLE} (main+N) in main"),
            "invalid", List.of("#0 where_sites.c:{DROP} (drop+N) in drop", "#1 where_sites.c:{INVALID} (invalid_free+N) in invalid_free",
                    "#2 where_sites.c:{CALL_INVALID} (main+N) in main"));

    private String line(String report) throws Exception {
        return CheckBuilds.reportPattern(source, "memtrace: " + report) + ", thread \\d+";
    }

    private List<String> frames(String c) throws Exception {
        List<String> want = new ArrayList<>();
        for (String f : FRAMES.get(c)) want.add(CheckBuilds.reportPattern(source, "    " + f));
        return want;
    }

    private static void matchAll(List<String> got, List<String> patterns, String all) {
        assertThat(got).as(all).hasSameSizeAs(patterns);
        for (int i = 0; i < got.size(); i++) assertThat(got.get(i)).as(all).matches(patterns.get(i));
    }

    @ParameterizedTest
    @CsvSource({"uaf", "overflow", "double", "invalid"})
    void aCheckedBuildNamesTheHelpersThatAllocatedAndFreed(String c) throws Exception {
        CheckBuilds.Run g = CheckBuilds.run(dir, Map.of(), "./checked", c);
        assertThat(g.status()).as(g.stderr()).isEqualTo(1);
        matchAll(g.stderr().lines().toList(), List.of(line(WITH_LINES.get(c))), g.stderr());
        CheckBuilds.Run nog = CheckBuilds.run(dir, Map.of(), "./checked-nog", c);
        assertThat(nog.status()).as(nog.stderr()).isEqualTo(1);
        matchAll(nog.stderr().lines().toList(), List.of(line(NO_LINES.get(c))), nog.stderr());
    }

    @ParameterizedTest
    @CsvSource({"uaf", "overflow", "double", "invalid"})
    void runCheckNamesThemAsTheCheckedBuildDoes(String c) throws Exception {
        CheckBuilds.Run g = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./plain", c);
        assertThat(g.status()).as(g.stderr()).isEqualTo(1);
        List<String> want = new ArrayList<>(List.of(line(WITH_LINES.get(c))));
        want.addAll(frames(c));
        matchAll(g.stderr().lines().toList(), want, g.stderr());
        // without -g the rewrite run's frame walk has no table, so the report is its line alone
        CheckBuilds.Run nog = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./plain-nog", c);
        assertThat(nog.status()).as(nog.stderr()).isEqualTo(1);
        matchAll(nog.stderr().lines().toList(), List.of(line(NO_LINES.get(c))), nog.stderr());
    }

    @Test
    void aLeakNamesItsAllocatingHelper() throws Exception {
        CheckBuilds.Run g = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./plain", "leak");
        assertThat(g.status()).as(g.stderr()).isEqualTo(23);
        matchAll(g.stderr().lines().toList(), List.of(
                CheckBuilds.reportPattern(source, "memtrace: leak: <malloc0001@make+N> (a block of 16 bytes, allocated at "
                        + "where_sites.c:{MAKE}) unreachable at exit"),
                "memtrace: leaks: 1 block, 16 bytes, from 1 call"), g.stderr());
        CheckBuilds.Run nog = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./plain-nog", "leak");
        assertThat(nog.status()).as(nog.stderr()).isEqualTo(23);
        matchAll(nog.stderr().lines().toList(), List.of(
                "memtrace: leak: <malloc0001@make\\+\\d+> \\(a block of 16 bytes, allocated at make\\+\\d+\\) unreachable at exit",
                "memtrace: leaks: 1 block, 16 bytes, from 1 call"), nog.stderr());
    }

    /** The JSON record's sites carry the same: code function+offset, line from DWARF. */
    @Test
    void theJsonSitesAreNamedAlike() throws Exception {
        Path json = dir.resolve("uaf.json");
        CheckBuilds.Run g = CheckBuilds.runCheck(dir, List.of(), Map.of("MEMTRACE_CHECK_JSON", json.toString()), "./plain", "uaf");
        assertThat(g.status()).as(g.stderr()).isEqualTo(1);
        JsonNode n = new ObjectMapper().readTree(Files.readString(json).lines().findFirst().orElseThrow());
        JsonNode o = n.get("object");
        assertThat(o.get("allocated").get("code").asText()).matches("make\\+\\d+");
        assertThat(o.get("allocated").get("line").asText()).isEqualTo("where_sites.c:" + CheckBuilds.line(source, "MAKE"));
        assertThat(o.get("freed").get("code").asText()).matches("drop\\+\\d+");
        assertThat(o.get("freed").get("line").asText()).isEqualTo("where_sites.c:" + CheckBuilds.line(source, "DROP"));
        assertThat(n.get("at").get("code").asText()).matches("use_after_free\\+\\d+");
        assertThat(n.get("at").get("line").asText()).isEqualTo("where_sites.c:" + CheckBuilds.line(source, "UAF"));
    }

    /** A shared library's static helpers, which only its .symtab names (ASan: "get where_lib.c:9"). */
    @Test
    void aLibrarysStaticHelpersAreNamedByItsSymtab() throws Exception {
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./lib_main");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        Path main = dir.resolve("where_lib_main.c");
        matchAll(r.stderr().lines().toList(), List.of(CheckBuilds.reportPattern(main, "memtrace: use after free: <freed:0001@get+N>+1 "
                + "(a block of 16 bytes, allocated at get+N, freed at put+N) read 1 byte, at where_lib_main.c:{LIB_UAF} (main+N)")
                + ", thread \\d+"), r.stderr());
    }
}
