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
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * What a checked program says besides its first report: the JSON records (their grammar, and the same facts as
 * the line), continue mode, the summary, options refused in one line, and the comparison with gcc's
 * AddressSanitizer on the same bug cases: every bug ASan reports, memtrace reports with the same kind.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckOutputTest {
    static final List<String> CASES = List.of("heap_overflow", "heap_underflow", "use_after_free", "reused_after_free",
            "double_free", "free_stack", "free_global", "free_middle", "stack_overflow", "global_overflow",
            "memcpy_overflow", "strcpy_overflow", "leak", "loop_overflow", "struct_fields");
    Path dir;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        CheckBuilds.fixture(dir, "cases.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "cases", "cases.c");
    }

    @Test
    void jsonRecordsFollowTheGrammarAndSayWhatTheLineSays() throws Exception {
        for (String c : CASES) {
            Path json = dir.resolve(c + ".json");
            CheckBuilds.Run r = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_JSON", json.toString(), "MEMTRACE_CHECK", "summary"),
                    "./cases", c, "bad");
            List<JsonNode> records = CheckJson.records(Files.readString(json));
            assertThat(records).as(c).hasSizeGreaterThanOrEqualTo(2);
            assertThat(records.getLast().get("kind").asText()).isEqualTo("summary");
            assertThat(records.getLast().get("errors").asInt()).isEqualTo(c.equals("leak") ? 0 : 1);
            assertThat(r.stderr()).contains("memtrace: check summary: ");
        }
        Path json = dir.resolve("overflow.json");
        CheckBuilds.Run r = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_JSON", json.toString()), "./cases", "heap_overflow", "bad");
        JsonNode n = CheckJson.records(Files.readString(json)).getFirst();
        assertThat(n.get("kind").asText()).isEqualTo("heap-overflow");
        assertThat(n.get("access").asText()).isEqualTo("write");
        assertThat(n.get("size").asInt()).isEqualTo(1);
        assertThat(n.get("offset").asInt()).isEqualTo(16);
        assertThat(n.get("distance").asInt()).isZero();
        assertThat(n.get("object").get("size").asInt()).isEqualTo(16);
        assertThat(n.get("object").get("allocated").get("line").asText()).isEqualTo("cases.c:18");
        assertThat(n.get("at").get("line").asText()).isEqualTo("cases.c:19");
        assertThat(r.stderr()).startsWith("memtrace: heap overflow: " + n.get("address").asText() + " (");
        assertThat(r.stderr()).contains("at cases.c:19 (" + n.get("at").get("code").asText() + ")");
    }

    @Test
    void continueModeReportsOnceAndRunsToTheEnd() throws Exception {
        CheckBuilds.Run r = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "continue"), "./cases", "double_free", "bad");
        assertThat(r.stdout()).isEqualTo("done\n");
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines.getFirst()).startsWith("memtrace: double free: free of <freed:0001@double_free+");
        assertThat(lines.get(1)).matches("memtrace: check summary: \\d+ accesses checked by \\d+ checks .*; 1 error");
        assertThat(lines).hasSize(2);
        assertThat(r.status()).isEqualTo(1);
        // a run that found nothing prints nothing the program did not (test suites compare stderr with an empty
        // file); the summary is there when asked for
        CheckBuilds.Run clean = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "continue"), "./cases", "double_free", "good");
        assertThat(clean.stderr()).isEmpty();
        assertThat(clean.stdout()).isEqualTo("done\n");
        assertThat(clean.status()).isZero();
        CheckBuilds.Run asked = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "continue,summary"), "./cases", "double_free", "good");
        assertThat(asked.stderr()).matches("memtrace: check summary: \\d+ accesses checked by \\d+ checks .*; 0 errors\n");
        assertThat(asked.status()).isZero();
        CheckBuilds.Run code = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_EXITCODE", "77"), "./cases", "heap_overflow", "bad");
        assertThat(code.status()).isEqualTo(77);
    }

    @Test
    void badOptionsAreOneLineAndAnExistingJsonFileIsNeverOverwritten() throws Exception {
        CheckBuilds.Run word = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "fast"), "./cases", "heap_overflow", "good");
        assertThat(word.status()).isEqualTo(2);
        assertThat(word.stderr()).isEqualTo("memtrace: check: MEMTRACE_CHECK: unknown word 'fast' (continue, stop, summary, noleaks, mangled, globals, noreturn)\n");
        Path existing = Files.writeString(dir.resolve("keep.json"), "mine\n");
        CheckBuilds.Run json = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_JSON", existing.toString()), "./cases", "heap_overflow", "bad");
        assertThat(json.status()).isEqualTo(2);
        assertThat(json.stderr()).startsWith("memtrace: check: cannot create " + existing + ": File exists (memtrace writes no log over an existing file: name a new one)");
        assertThat(Files.readString(existing)).isEqualTo("mine\n");
        CheckBuilds.Run code = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_EXITCODE", "x"), "./cases", "heap_overflow", "good");
        assertThat(code.status()).isEqualTo(2);
        assertThat(code.stderr()).isEqualTo("memtrace: check: MEMTRACE_CHECK_EXITCODE must be 0..255\n");
    }

    @Test
    void buildsCheckCannotMakeAreRefusedInOneLineAndLeaksCanBeTurnedOff() throws Exception {
        Cli.Result skeleton = Cli.run(dir, "cc", "--check", "--skeleton", "-O2", "-c", "cases.c");
        assertThat(skeleton.status()).isEqualTo(2);
        assertThat(skeleton.stderr().strip()).isEqualTo("memtrace: cc: --check cannot be combined with --skeleton");
        Cli.Result asan = Cli.run(dir, "cc", "--check", "-fsanitize=address", "-c", "cases.c");
        assertThat(asan.status()).isEqualTo(2);
        assertThat(asan.stderr().strip()).isEqualTo("memtrace: cc: -fsanitize=address cannot be combined with --check, "
                + "which lays out memory and checks it itself");
        CheckBuilds.Run quiet = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "noleaks"), "./cases", "leak", "bad");
        assertThat(quiet.stderr()).isEmpty();
        assertThat(quiet.status()).isZero();
    }

    @Test
    void cxxExceptionsAndThreadsRunSilently() throws Exception {
        CheckBuilds.fixture(dir, "throws.cc");
        CheckBuilds.build(dir, true, true, "-O2", "-g", "-pthread", "-o", "throws", "throws.cc");
        CheckBuilds.Run r = CheckBuilds.run(dir, Map.of(), "./throws");
        assertThat(r.stderr()).isEmpty();
        assertThat(r.stdout()).isEqualTo("37 hello world, a long enough string to be on the heap 100 30000\n");
        assertThat(r.status()).isZero();
    }

    /**
     * C++ functions are named as the source spells them (c++filt's spelling, as the rest of memtrace), in the
     * line, the block's name and the JSON; MEMTRACE_CHECK=mangled keeps the symbols' spelling.
     */
    @Test
    void cxxNamesAreDemangled() throws Exception {
        Path source = CheckBuilds.fixture(dir, "demangle.cc");
        CheckBuilds.build(dir, true, true, "-O2", "-g", "-o", "demangle", "demangle.cc");
        int alloc = CheckBuilds.line(source, "ALLOC"), bad = CheckBuilds.line(source, "BAD");
        Path json = dir.resolve("demangle.json");
        CheckBuilds.Run r = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_JSON", json.toString()), "./demangle", "bad");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.stderr()).matches("memtrace: heap overflow: <new\\[\\]0002@Foo::Foo\\(int\\)\\+\\d+>\\+16 \\(a block of 16 bytes, "
                + "allocated at demangle.cc:" + alloc + "\\) written 4 bytes, 0 bytes past its end, at demangle.cc:" + bad
                + " \\(Foo::bar\\(int\\)\\+\\d+\\), thread \\d+\n");
        JsonNode n = CheckJson.records(Files.readString(json)).getFirst();
        assertThat(n.get("at").get("code").asText()).matches("Foo::bar\\(int\\)\\+\\d+");
        assertThat(n.get("object").get("allocated").get("code").asText()).matches("Foo::Foo\\(int\\)\\+\\d+");
        CheckBuilds.Run raw = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "mangled"), "./demangle", "bad");
        assertThat(raw.stderr()).matches("memtrace: heap overflow: <new\\[\\]0002@_ZN3FooC2Ei\\+\\d+>\\+16 .* at demangle.cc:" + bad
                + " \\(_ZN3Foo3barEi\\+\\d+\\), thread \\d+\n");
        CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), "./demangle", "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.stdout()).isEqualTo("done 3\n");
    }

    /**
     * MEMTRACE_CHECK_SARIF: a SARIF 2.1.0 log, whole after every report, one result per report with the rule of
     * its kind, the line as message, the access's file:line and the block's allocation and free sites as related
     * locations (the document validated against the OASIS schema by hand: docs/check.md). An existing file is
     * never overwritten; a silent run leaves a log with no results.
     */
    @Test
    void sarifLogHasOneResultPerReportWithItsSites() throws Exception {
        Path source = CheckBuilds.fixture(dir, "sarif.c");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "sarif", "sarif.c");
        Path log = dir.resolve("bugs.sarif");
        CheckBuilds.Run r = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_SARIF", log.toString(), "MEMTRACE_CHECK", "continue"),
                "./sarif", "bad");
        assertThat(r.status()).isEqualTo(1);
        List<String> lines = r.stderr().lines().toList();
        JsonNode doc = new ObjectMapper().readTree(Files.readString(log));
        assertThat(doc.get("version").asText()).isEqualTo("2.1.0");
        assertThat(doc.get("$schema").asText()).isEqualTo("https://json.schemastore.org/sarif-2.1.0.json");
        assertThat(doc.get("runs")).hasSize(1);
        JsonNode run = doc.get("runs").get(0);
        JsonNode driver = run.get("tool").get("driver");
        assertThat(driver.get("name").asText()).isEqualTo("memtrace");
        List<String> rules = new ArrayList<>();
        driver.get("rules").forEach(x -> rules.add(x.get("id").asText()));
        assertThat(rules).containsExactly("heap-overflow", "heap-underflow", "use-after-free", "stack-overflow", "stack-underflow",
                "stack-use-after-scope", "stack-use-after-return", "global-overflow", "global-underflow", "null-dereference", "wild-access", "double-free",
                "invalid-free", "allocator-mismatch", "overlap", "leak", "intra-object-overflow");
        JsonNode results = run.get("results");
        assertThat(results).hasSize(2);
        String alloc = "sarif.c:" + CheckBuilds.line(source, "ALLOC");
        assertResult(results.get(0), "heap-overflow", 0, lines.get(0), CheckBuilds.line(source, "OVERFLOW"), alloc, null);
        assertResult(results.get(1), "use-after-free", 2, lines.get(1), CheckBuilds.line(source, "UAF"), alloc,
                "sarif.c:" + CheckBuilds.line(source, "FREE"));

        CheckBuilds.Run kept = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_SARIF", log.toString()), "./sarif", "bad");
        assertThat(kept.status()).isEqualTo(2);
        assertThat(kept.stderr()).startsWith("memtrace: check: cannot create " + log + ": File exists (memtrace writes no log over an existing file: name a new one)");
        assertThat(new ObjectMapper().readTree(Files.readString(log)).get("runs").get(0).get("results")).hasSize(2);
        // a log the disk has no room for (a file size limit gives EFBIG as a full disk gives ENOSPC): no empty
        // file that no SARIF reader takes, one line, and the program does not run unchecked-for-nothing
        Path full = dir.resolve("full.sarif");
        CheckBuilds.Run limited = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_SARIF", full.toString()),
                "sh", "-c", "ulimit -f 1; trap '' XFSZ; exec ./sarif bad");
        assertThat(limited.status()).isEqualTo(2);
        assertThat(limited.stderr()).isEqualTo("memtrace: check: cannot create " + full + ": File too large\n");
        assertThat(full).doesNotExist();
        Path quiet = dir.resolve("quiet.sarif");
        CheckBuilds.Run good = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_SARIF", quiet.toString()), "./sarif", "good");
        assertThat(good.status()).isZero();
        assertThat(new ObjectMapper().readTree(Files.readString(quiet)).get("runs").get(0).get("results")).isEmpty();
    }

    /** One result, field by field: every key it has and nothing else. */
    private static void assertResult(JsonNode result, String rule, int index, String line, int at, String allocated, String freed) {
        List<String> keys = new ArrayList<>();
        result.fieldNames().forEachRemaining(keys::add);
        assertThat(keys).containsExactly("ruleId", "ruleIndex", "level", "message", "locations", "relatedLocations");
        assertThat(result.get("ruleId").asText()).isEqualTo(rule);
        assertThat(result.get("ruleIndex").asInt()).isEqualTo(index);
        assertThat(result.get("level").asText()).isEqualTo("error");
        assertThat(result.get("message").get("text").asText()).isEqualTo(line.substring("memtrace: ".length()));
        assertThat(result.get("locations")).hasSize(1);
        assertLocation(result.get("locations").get(0), "sarif.c", at, line.replaceAll(".*\\((main\\+\\d+)\\), thread \\d+$", "$1"));
        JsonNode related = result.get("relatedLocations");
        assertThat(related).hasSize(freed == null ? 1 : 2);
        assertThat(related.get(0).get("id").asInt()).isEqualTo(1);
        assertThat(related.get(0).get("message").get("text").asText()).isEqualTo("allocated");
        assertLocation(related.get(0), "sarif.c", Integer.parseInt(allocated.substring(allocated.indexOf(':') + 1)), null);
        if (freed != null) {
            assertThat(related.get(1).get("id").asInt()).isEqualTo(2);
            assertThat(related.get(1).get("message").get("text").asText()).isEqualTo("freed");
            assertLocation(related.get(1), "sarif.c", Integer.parseInt(freed.substring(freed.indexOf(':') + 1)), null);
        }
    }

    private static void assertLocation(JsonNode location, String uri, int line, String code) {
        JsonNode physical = location.get("physicalLocation");
        assertThat(physical.get("artifactLocation").get("uri").asText()).isEqualTo(uri);
        assertThat(physical.get("artifactLocation").get("uriBaseId").asText()).isEqualTo("%SRCROOT%");
        assertThat(physical.get("region").get("startLine").asInt()).isEqualTo(line);
        assertThat(location.get("logicalLocations")).hasSize(1);
        String name = location.get("logicalLocations").get(0).get("fullyQualifiedName").asText();
        if (code != null) assertThat(name).isEqualTo(code);
        else assertThat(name).matches("main\\+\\d+");
    }

    /** printf's positional arguments are walked by their numbers: %2$s read to its end, %.*2$s to its precision, %1$hn written. */
    @Test
    void positionalPrintfArgumentsAreChecked() throws Exception {
        Path source = CheckBuilds.fixture(dir, "positional.c");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "positional", "positional.c");
        int alloc = CheckBuilds.line(source, "ALLOC");
        Map<String, String> want = Map.of(
                "string", "heap overflow: <malloc0001@unterminated\\+\\d+>\\+16 \\(a block of 16 bytes, allocated at positional.c:" + alloc
                        + "\\) read 17 bytes by printf, 0 bytes past its end",
                "precision", "heap overflow: <malloc0001@unterminated\\+\\d+>\\+16 \\(a block of 16 bytes, allocated at positional.c:" + alloc
                        + "\\) read 17 bytes by printf, 0 bytes past its end",
                "count", "heap overflow: <malloc0001@main\\+\\d+>\\+1 \\(a block of 1 bytes, allocated at positional.c:\\d+\\) "
                        + "written 2 bytes by snprintf, 0 bytes past its end");
        for (var c : want.entrySet()) {
            CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), "./positional", c.getKey(), "bad");
            assertThat(bad.status()).as(c.getKey()).isEqualTo(1);
            assertThat(bad.stderr()).as(c.getKey()).matches("memtrace: " + c.getValue() + ", at positional.c:"
                    + CheckBuilds.line(source, "BAD:" + c.getKey()) + " \\(main\\+\\d+\\), thread \\d+\n");
            CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), "./positional", c.getKey(), "good");
            assertThat(good.stderr()).as(c.getKey()).isEmpty();
            assertThat(good.status()).isZero();
            assertThat(good.stdout()).endsWith("done\n");
        }
    }

    /**
     * With -D_FORTIFY_SOURCE=2, a string or printf function writing past a struct member into the rest of its
     * object (no redzone touched) is an intra-object overflow, named by the object (heap block, stack variable);
     * natively glibc only aborts ("buffer overflow detected"); the twins copy 7 characters and stay silent.
     */
    @Test
    void fieldOverflowsOfFortifiedBuildsAreReported() throws Exception {
        Path source = CheckBuilds.fixture(dir, "field.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-D_FORTIFY_SOURCE=2", "-o", "field", "field.c");
        String tail = " written 11 bytes by %s into a field of 8 bytes, 3 bytes past the field's end, at field.c:%d \\(main\\+\\d+\\), thread \\d+\n";
        Map<String, String> want = Map.of(
                "heap", "<malloc0001@main\\+\\d+>\\+0 \\(a block of 28 bytes, allocated at field.c:" + CheckBuilds.line(source, "ALLOC") + "\\)"
                        + tail.formatted("strcpy", CheckBuilds.line(source, "BAD:heap")),
                "stack", "<stack:r@main>\\+0 \\(a variable of 28 bytes, declared at line " + CheckBuilds.line(source, "DECL") + " of main\\)"
                        + tail.formatted("strcpy", CheckBuilds.line(source, "BAD:stack")),
                "sprintf", "<malloc0001@main\\+\\d+>\\+0 \\(a block of 28 bytes, allocated at field.c:\\d+\\)"
                        + tail.formatted("sprintf", CheckBuilds.line(source, "BAD:sprintf")));
        for (var c : want.entrySet()) {
            Path json = dir.resolve("field-" + c.getKey() + ".json");
            CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_JSON", json.toString()), "./field", c.getKey(), "bad");
            assertThat(bad.status()).as(c.getKey()).isEqualTo(1);
            assertThat(bad.stderr()).as(c.getKey()).matches("memtrace: intra-object overflow: " + c.getValue());
            JsonNode n = CheckJson.records(Files.readString(json)).getFirst();
            assertThat(n.get("kind").asText()).isEqualTo("intra-object-overflow");
            assertThat(n.get("field").asInt()).isEqualTo(8);
            assertThat(n.get("object").get("size").asInt()).isEqualTo(28);
            CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), "./field", c.getKey(), "good");
            assertThat(good.stderr()).as(c.getKey()).isEmpty();
            assertThat(good.status()).isZero();
        }
    }

    @Test
    void whatAddressSanitizerFindsMemtraceFindsWithTheSameKind() throws Exception {
        Gcc.run(List.of("gcc", "-O0", "-g", "-fsanitize=address", "-o", dir.resolve("asan").toString(), dir.resolve("cases.c").toString()));
        Map<String, String> kinds = Map.of("heap-buffer-overflow", "heap (overflow|underflow)", "heap-use-after-free", "use after free",
                "attempting double-free", "double free", "not malloc()-ed", "invalid free", "stack-buffer-overflow", "stack overflow",
                "global-buffer-overflow", "global overflow", "detected memory leaks", "leak");
        int found = 0;
        for (String c : CASES) {
            CheckBuilds.Run asan = CheckBuilds.run(dir, Map.of(), "./asan", c, "bad");
            String asanKind = kinds.keySet().stream().filter(asan.stderr()::contains).findFirst().orElse(null);
            if (asanKind == null) continue;
            found++;
            CheckBuilds.Run ours = CheckBuilds.run(dir, Map.of(), "./cases", c, "bad");
            assertThat(ours.stderr()).as(c + ": ASan says " + asanKind).containsPattern("^memtrace: (" + kinds.get(asanKind) + "): ");
        }
        assertThat(found).isEqualTo(CASES.size());
    }
}
