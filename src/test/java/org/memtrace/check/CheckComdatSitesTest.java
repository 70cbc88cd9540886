package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23: a report of an access in a function gcc puts in a comdat group (a template, an in-class method, a
 * lambda in an inline function) names its {@code file:line} like any other, at -O0 and -O2, and so do the
 * allocation and free sites there, in the text, JSON and SARIF: each group carries a site table of its own
 * (CheckSites). Two objects instantiate the same functions (the linker keeps the first one's copies); an
 * unchecked object linked first (its copies kept, the checked ones' tables dropped with them) still links.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckComdatSitesTest {
    private Path dir, source, header;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "comdat_sites.cc");
        header = CheckBuilds.fixture(dir, "comdat_sites.h");
        CheckBuilds.fixture(dir, "comdat_sites2.cc");
        for (String o : new String[] {"-O0", "-O2"})
            CheckBuilds.build(dir, true, true, o, "-g", "-o", "cs" + o, "comdat_sites2.cc", "comdat_sites.cc");
    }

    private void assertReport(String program, String which, String n, String report) throws Exception {
        CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), program, which, n);
        assertThat(bad.status()).as(program + " " + which).isEqualTo(1);
        assertThat(bad.stderr()).as(program + " " + which).matches(pattern(report) + "\\d+\n");
    }

    /** The report as a pattern: each {KEY} the line of its marker in comdat_sites.cc, else in comdat_sites.h. */
    private String pattern(String report) throws Exception {
        Matcher m = Pattern.compile("\\{(\\w+)\\}").matcher(report);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            String key = m.group(1);
            m.appendReplacement(b, Integer.toString(Files.readString(source).contains("/* " + key + " */")
                    ? CheckBuilds.line(source, key) : CheckBuilds.line(header, key)));
        }
        return CheckBuilds.reportPattern(source, m.appendTail(b).toString());
    }

    private static String overflow(String block, String size, String alloc, String access, String at) {
        return "memtrace: heap overflow: <" + block + "@main+N>+" + size + " (a block of " + size + " bytes, allocated at comdat_sites.cc:{"
                + alloc + "}) written " + access + ", 0 bytes past its end, at comdat_sites.h:" + at + ", thread ";
    }

    @Test
    void aTemplateFunctionsAccessIsNamedByItsLine() throws Exception {
        assertReport("./cs-O0", "0", "4", overflow("new[]0001", "16", "new", "4 bytes", "{put} (void put<int>(int*, int)+N)"));
        assertReport("./cs-O2", "0", "4", overflow("new[]0001", "16", "new", "4 bytes", "{put} (void put<int>(int*, int)+N)"));
    }

    @Test
    void anInClassMethodsAccessIsNamedByItsLine() throws Exception {
        assertReport("./cs-O0", "1", "7", overflow("new0002", "6", "newlog", "1 byte", "{add} (ns::log::add(int)+N)"));
        assertReport("./cs-O2", "1", "7", overflow("new0002", "6", "newlog", "1 byte by the loop", "{add} (ns::log::add(int)+N)"));
    }

    @Test
    void aLambdaOfAnInlineFunctionIsNamedByItsLine() throws Exception {
        String lambda = "poke(int*, int)::{lambda(int)#1}::operator()(int) const";
        assertReport("./cs-O0", "2", "4", overflow("new[]0001", "16", "new", "4 bytes", "{lambda} (" + lambda + "+N)"));
        assertReport("./cs-O2", "2", "4", overflow("new[]0001", "16", "new", "4 bytes", "{lambda} (" + lambda + " [clone .isra.0]+N)"));
    }

    /** A block allocated and freed in template functions: both sites by their lines, in the JSON and SARIF too. */
    @Test
    void allocationAndFreeSitesInComdatFunctionsHaveTheirLines() throws Exception {
        for (String program : new String[] {"./cs-O0", "./cs-O2"}) {
            Path json = dir.resolve(program.substring(2) + ".json"), sarif = dir.resolve(program.substring(2) + ".sarif");
            CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_JSON", json.toString(), "MEMTRACE_CHECK_SARIF", sarif.toString()),
                    program, "3", "0");
            assertThat(bad.status()).as(program).isEqualTo(1);
            String report = pattern("memtrace: use after free: <freed:0005@int* make<int>(int)+N>+0 (a block of 8 bytes, "
                    + "allocated at comdat_sites.h:{make}, freed at comdat_sites.h:{drop}) read 4 bytes, at comdat_sites.cc:{use} (main+N), thread ");
            assertThat(bad.stderr()).as(program).matches(report + "\\d+\n");
            JsonNode n = CheckJson.records(Files.readString(json)).getFirst();
            assertThat(n.get("object").get("allocated").get("line").asText()).isEqualTo("comdat_sites.h:" + CheckBuilds.line(header, "make"));
            assertThat(n.get("object").get("freed").get("line").asText()).isEqualTo("comdat_sites.h:" + CheckBuilds.line(header, "drop"));
            assertThat(n.get("object").get("freed").get("code").asText()).startsWith("void drop<int>(int*)+");
            JsonNode result = sarifResult(sarif);
            assertLocation(result.get("locations").get(0), "comdat_sites.cc", CheckBuilds.line(source, "use"));
            assertLocation(result.get("relatedLocations").get(0), "comdat_sites.h", CheckBuilds.line(header, "make"));
            assertLocation(result.get("relatedLocations").get(1), "comdat_sites.h", CheckBuilds.line(header, "drop"));
        }
        // the access of a method in the SARIF: its header and line
        Path sarif = dir.resolve("add.sarif");
        assertThat(CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_SARIF", sarif.toString()), "./cs-O2", "1", "7").status()).isEqualTo(1);
        assertLocation(sarifResult(sarif).get("locations").get(0), "comdat_sites.h", CheckBuilds.line(header, "add"));
    }

    private static JsonNode sarifResult(Path sarif) throws Exception {
        JsonNode results = new ObjectMapper().readTree(Files.readString(sarif)).get("runs").get(0).get("results");
        assertThat(results).hasSize(1);
        return results.get(0);
    }

    private static void assertLocation(JsonNode location, String uri, int line) {
        JsonNode physical = location.get("physicalLocation");
        assertThat(physical.get("artifactLocation").get("uri").asText()).isEqualTo(uri);
        assertThat(physical.get("region").get("startLine").asInt()).isEqualTo(line);
    }

    /** The unchecked object's copies are kept (linked first): the checked object's group tables go with its copies. */
    @Test
    void anUncheckedObjectsCopiesMayWin() throws Exception {
        CheckBuilds.tool(dir, "g++", "-O2", "-g", "-c", "-o", "plain2.o", "comdat_sites2.cc");
        CheckBuilds.build(dir, true, true, "-O2", "-g", "-o", "mixed", "plain2.o", "comdat_sites.cc");
        CheckBuilds.Run ok = CheckBuilds.run(dir, Map.of(), "./mixed", "0", "1");
        assertThat(ok.stderr()).isEmpty();
        assertThat(ok.status()).isZero();
        assertThat(ok.stdout()).isEqualTo("1 - 0\n");
    }
}
