package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Cli;

/**
 * {@code memtrace run --check} (docs/check.md) on binaries built by plain gcc, -O0 and -O2, from the very
 * cases of {@code memtrace cc --check} (cases.c, cases.cc): every heap class is reported with the
 * compiled-in checker's kind, object, offset, distance and access size, in its line format, and with its
 * exit status; every twin runs silently with its own output; threads, continue mode, JSON, real programs.
 * Code is named module+offset here (plain builds have no call-site table, their functions no dynamic symbol).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCheckTest {
    Path dir, source, cxxSource;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "cases.c");
        cxxSource = CheckBuilds.fixture(dir, "cases.cc");
        CheckBuilds.fixture(dir, "run_threads.c");
        for (String level : List.of("O0", "O2")) {
            gcc("gcc", "-" + level, "-g", "-o", "cases-" + level, "cases.c");
            gcc("g++", "-" + level, "-g", "-o", "cxx-" + level, "cases.cc");
        }
        gcc("gcc", "-O2", "-g", "-pthread", "-o", "threads", "run_threads.c");
        CheckBuilds.fixture(dir, "run_segv.c");
        gcc("gcc", "-O2", "-g", "-o", "segv", "run_segv.c");
    }

    private void gcc(String... args) throws Exception {
        Process p = new ProcessBuilder(args).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
    }

    /** memtrace run --check -- COMMAND in fault mode, with the checker's variables of env only. */
    private CheckBuilds.Run check(Map<String, String> env, String... command) throws Exception {
        return check("fault", env, command);
    }

    /** memtrace run --check --mode MODE -- COMMAND, with the checker's variables of env only. */
    private CheckBuilds.Run check(String mode, Map<String, String> env, String... command) throws Exception {
        return CheckBuilds.runCheck(dir, List.of("--mode", mode), env, command);
    }

    /**
     * The C cases of the heap classes: the report after "memtrace: " as a regex, each site named as a --check build
     * names it (the function from the executable's .symtab, file:line from its DWARF): {A}, {F} and {B} stand for
     * the case's ALLOC, FREE and BAD lines of cases.c. In rewrite mode the check runtime's strcpy wrapper sees the
     * whole copy, as for a --check build.
     */
    private static Map<String, String> heapCases(String mode) {
        Map<String, String> e = new LinkedHashMap<>();
        e.put("heap_overflow", "heap overflow: <malloc0001@heap_overflow\\+\\d+>\\+16 \\(a block of 16 bytes, allocated at {A}\\) "
                + "written 1 byte, 0 bytes past its end, at {B} \\(heap_overflow\\+\\d+\\)");
        e.put("heap_underflow", "heap underflow: <malloc0001@heap_underflow\\+\\d+>-8 \\(a block of 128 bytes, allocated at {A}\\) "
                + "read 8 bytes, 8 bytes before its start, at {B} \\(heap_underflow\\+\\d+\\)");
        e.put("use_after_free", "use after free: <freed:0001@use_after_free\\+\\d+>\\+8 \\(a block of 64 bytes, allocated at {A}, "
                + "freed at {F}\\) read 4 bytes, at {B} \\(use_after_free\\+\\d+\\)");
        e.put("reused_after_free", "use after free: <freed:0001@reused_after_free\\+\\d+>\\+4 \\(a block of 64 bytes, allocated at {A}, "
                + "freed at {F}\\) read 4 bytes, at {B} \\(reused_after_free\\+\\d+\\)");
        e.put("double_free", "double free: free of <freed:0001@double_free\\+\\d+>\\+0 \\(a block of 16 bytes, allocated at {A}, "
                + "freed at {F}\\), at {B} \\(double_free\\+\\d+\\)");
        // check_report.c names a pointer into the freeing thread's stack so, debug info or not
        e.put("free_stack", "invalid free: free of <stack> \\(memory on the stack of thread \\d+\\), at {B} \\(free_stack\\+\\d+\\)");
        // rewrite mode knows the globals' extents from the symbols (check_symglobals.c): the global is named
        e.put("free_global", (mode.equals("rewrite") ? "invalid free: free of table\\+0 \\(a global of 40 bytes\\)"
                : "invalid free: free of 0x[0-9a-f]+ \\(not memory this allocator gave out\\)") + ", at {B} \\(free_global\\+\\d+\\)");
        e.put("free_middle", "invalid free: free of <malloc0001@free_middle\\+\\d+>\\+8 \\(a block of 16 bytes, allocated at {A}\\), "
                + "at {B} \\(free_middle\\+\\d+\\)");
        e.put("memcpy_overflow", "heap overflow: <malloc0001@memcpy_overflow\\+\\d+>\\+16 \\(a block of 16 bytes, allocated at {A}\\) "
                + "written 17 bytes by memcpy, 0 bytes past its end, at {B} \\(memcpy_overflow\\+\\d+\\)");
        // fault mode: libc's strcpy writes its last 16 bytes with one vector store, the access reported
        e.put("strcpy_overflow", "heap overflow: <malloc0001@strcpy_overflow\\+\\d+>\\+16 \\(a block of 16 bytes, allocated at {A}\\) "
                + (mode.equals("rewrite") ? "written 17 bytes by strcpy, 0 bytes past its end, at {B} \\(strcpy_overflow\\+\\d+\\)"
                        : "written \\d+ bytes, 0 bytes past its end, at libc\\.so\\.6\\+\\d+"));
        e.put("leak", "leak: <malloc0001@leak\\+\\d+> \\(a block of 16 bytes, allocated at {A}\\) unreachable at exit");
        e.put("loop_overflow", "heap overflow: <malloc0001@loop_overflow\\+\\d+>\\+64 \\(a block of 64 bytes, allocated at {A}\\) "
                + "written 4 bytes, 0 bytes past its end, at {B} \\(loop_overflow\\+\\d+\\)");
        e.put("struct_fields", "heap overflow: <malloc0001@struct_fields\\+\\d+>\\+24 \\(a block of 24 bytes, allocated at {A}\\) "
                + "read 8 bytes, 0 bytes past its end, at {B:fields} \\(fields\\+\\d+\\)");
        return e;
    }

    /** A case's pattern with {A}, {F}, {B} (or {B:key}) replaced by the lines of its markers in source. */
    private static String sites(Path source, String file, String name, String pattern) throws Exception {
        Matcher m = Pattern.compile("\\{([AFB])(?::(\\w+))?\\}").matcher(pattern);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            String kind = switch (m.group(1)) { case "A" -> "ALLOC"; case "F" -> "FREE"; default -> "BAD"; };
            String key = kind + ":" + (m.group(2) != null ? m.group(2) : name);
            m.appendReplacement(b, Matcher.quoteReplacement(Pattern.quote(file + ":" + CheckBuilds.line(source, key))));
        }
        return m.appendTail(b).toString();
    }

    @ParameterizedTest
    @CsvSource({"O0, fault", "O2, fault", "O0, rewrite", "O2, rewrite"})
    void everyHeapClassIsReportedAsCompiledInAndEveryTwinIsSilent(String level, String mode) throws Exception {
        String binary = "cases-" + level;
        for (var c : heapCases(mode).entrySet()) {
            String want = sites(source, "cases.c", c.getKey(), c.getValue());
            CheckBuilds.Run bad = check(mode, Map.of(), "./" + binary, c.getKey(), "bad");
            String first = bad.stderr().lines().findFirst().orElse("");
            boolean leak = c.getKey().equals("leak");
            assertThat(first).as(level + " " + c.getKey() + "\n" + bad.stderr()).matches("memtrace: " + want + (leak ? "" : ", thread \\d+"));
            assertThat(bad.status()).as(c.getKey()).isEqualTo(leak ? 23 : 1);
            // an error stops the program there; a leak is found after it ended normally
            assertThat(bad.stdout()).isEqualTo(leak ? "done\n" : "");
            if (leak) assertThat(bad.stderr().lines().toList()).element(1).isEqualTo("memtrace: leaks: 1 block, 16 bytes, from 1 call");
            CheckBuilds.Run good = check(mode, Map.of(), "./" + binary, c.getKey(), "good");
            assertThat(good.stderr()).as(level + " twin of " + c.getKey()).isEmpty();
            assertThat(good.stdout()).isEqualTo("done\n");
            assertThat(good.status()).isZero();
        }
    }

    /**
     * In rewrite mode the check runtime counts the block libstdc++ allocates at its start (its exception
     * pool), as a --check build does, so the program's first block is number 2 there.
     */
    @ParameterizedTest
    @CsvSource({"O0, fault", "O2, fault", "O0, rewrite", "O2, rewrite"})
    void cxxMismatchesOverflowsAndUseAfterDeleteAreReported(String level, String mode) throws Exception {
        String binary = "cxx-" + level;
        boolean rw = mode.equals("rewrite");
        String first = rw ? "0002" : "0001", second = rw ? "0003" : "0002";
        Map<String, String> e = new LinkedHashMap<>();
        // at -O2 gcc makes each delete a tail call (jmp): no malloc_delete or array_delete frame is left, the call returns
        // into main, which is where ASan's frame #1 points too
        e.put("malloc_delete", "allocator mismatch: delete of <malloc" + first + "@malloc_delete\\(int, int\\)\\+\\d+>\\+0 \\(a block of "
                + "64 bytes, allocated at {A}, from malloc\\), at "
                + (level.equals("O2") ? "{B:malloc_delete_tail} \\(main\\+\\d+\\)" : "{B} \\(malloc_delete\\(int, int\\)\\+\\d+\\)"));
        e.put("array_delete", "allocator mismatch: delete of <new\\[\\]" + first + "@array_delete\\(int, int\\)\\+\\d+>\\+0 \\(a block of "
                + "64 bytes, allocated at {A}, from new\\[\\]\\), at "
                + (level.equals("O2") ? "{B:array_delete_tail} \\(main\\+\\d+\\)" : "{B} \\(array_delete\\(int, int\\)\\+\\d+\\)"));
        e.put("new_overflow", "heap overflow: <new\\[\\]" + first + "@new_overflow\\(int, int\\)\\+\\d+>\\+64 \\(a block of 64 bytes, "
                + "allocated at {A}\\) written 4 bytes, 0 bytes past its end, at {B} \\(new_overflow\\(int, int\\)\\+\\d+\\)");
        e.put("use_after_delete", "use after free: <freed:" + second + "@use_after_delete\\(int, int\\)\\+\\d+>\\+0 \\(a block of 16 bytes, "
                + "allocated at {A}, freed at {F}\\) read 8 bytes, at {B} \\(use_after_delete\\(int, int\\)\\+\\d+\\)");
        // blocks libstdc++ allocates or frees for the program are named by the program's call into it, and the call it
        // made (docs/check.md, "Sites in the user's code"): found by unwinding where the library's code was called, and
        // from the inlined frames where it was inlined, which a rewrite run cannot read: there (-O2) the line is the
        // installed gcc's header's (its version and line vary with gcc)
        String vector = "through std::vector<int, std::allocator<int> >::vector\\(unsigned long, std::allocator<int> const&\\)";
        String header = "/usr/include/c\\+\\+/\\d+/bits/[a-z_.]+\\.(h|tcc):\\d+";
        boolean inlinedUnread = rw && level.equals("O2");
        e.put("vector_overflow", "heap overflow: <new" + first + "@vector_overflow\\(int, int\\)\\+\\d+>\\+64 \\(a block of 64 bytes, "
                + "allocated at {A}, " + vector + "\\) written 4 bytes, 0 bytes past its end, at {B} \\(vector_overflow\\(int, int\\)\\+\\d+\\)");
        e.put("string_overflow", "heap overflow: <new\\d{4}@string_overflow\\(int, int\\)\\+\\d+>\\+37 \\(a block of 37 bytes, allocated at "
                + (inlinedUnread ? header : "{A}") + ", through std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::"
                + (inlinedUnread ? "_M_construct\\(unsigned long, char\\)" : "basic_string<.+>\\(.+\\)") + "\\) "
                + "written 1 byte, 0 bytes past its end, at {B} \\(string_overflow\\(int, int\\)\\+\\d+\\)");
        e.put("unique_ptr_uaf", "use after free: <freed:\\d{4}@unique_ptr_uaf\\(int, int\\)\\+\\d+>\\+0 \\(a block of 64 bytes, allocated at "
                + (inlinedUnread ? header + ", freed at " + header
                        : "{A}, through std::make_unique<int \\[\\]>\\(unsigned long\\), freed at {F}, through std::unique_ptr<int \\[\\], "
                          + "std::default_delete<int \\[\\]> >::reset\\(.*\\)")
                + "\\) read 4 bytes, at {B} \\(unique_ptr_uaf\\(int, int\\)\\+\\d+\\)");
        e.put("vector_stale", "use after free: <freed:\\d{4}@vector_stale\\(int, int\\)\\+\\d+>\\+0 \\(a block of 64 bytes, allocated at {A}, "
                + vector + ", freed at " + (inlinedUnread ? header + ", through std::vector<int, std::allocator<int> >::_M_realloc_insert<int>\\(.+\\)"
                        : "{F}, through std::vector<int, std::allocator<int> >::push_back\\(int&&\\)")
                + "\\) read 4 bytes, at {B} \\(vector_stale\\(int, int\\)\\+\\d+\\)");
        for (var c : e.entrySet()) {
            CheckBuilds.Run bad = check(mode, Map.of(), "./" + binary, c.getKey(), "bad");
            assertThat(bad.stderr().lines().findFirst().orElse("")).as(level + " " + c.getKey())
                    .matches("memtrace: " + sites(cxxSource, "cases.cc", c.getKey(), c.getValue()) + ", thread \\d+");
            assertThat(bad.status()).isEqualTo(1);
            CheckBuilds.Run good = check(mode, Map.of(), "./" + binary, c.getKey(), "good");
            assertThat(good.stderr()).as(level + " twin of " + c.getKey()).isEmpty();
            assertThat(good.stdout()).isEqualTo("done\n");
            assertThat(good.status()).isZero();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"fault", "rewrite"})
    void threadsAllocatingAtOnceAreCheckedAndTheirOverflowFound(String mode) throws Exception {
        CheckBuilds.Run good = check(mode, Map.of(), "./threads", "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.stdout()).isEqualTo("total 587000\n");
        assertThat(good.status()).isZero();
        CheckBuilds.Run bad = check(mode, Map.of(), "./threads", "bad");
        List<String> lines = bad.stderr().lines().toList();
        Path source = dir.resolve("run_threads.c");
        int alloc = CheckBuilds.line(source, "ALLOC:threads"), at = CheckBuilds.line(source, "BAD:threads");
        assertThat(lines.getFirst()).matches("memtrace: heap overflow: <malloc\\d{4}@work\\+\\d+>\\+40 \\(a block of 40 bytes, "
                + "allocated at run_threads\\.c:" + alloc + "\\) read 4 bytes, 0 bytes past its end, at run_threads\\.c:" + at
                + " \\(work\\+\\d+\\), thread \\d+");
        // fault mode unwinds the access by .eh_frame (docs/stacks.md, "Access stacks"): the thread's function first
        if (mode.equals("fault")) assertThat(lines.get(1)).matches("    #0 run_threads\\.c:" + at + " \\(work\\+\\d+\\) in work");
        else assertThat(lines).hasSize(1);
        assertThat(bad.status()).isEqualTo(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"fault", "rewrite"})
    void continueModeWritesTheCompiledInJsonAndGoesOn(String mode) throws Exception {
        Path json = dir.resolve("report-" + mode + ".json");
        CheckBuilds.Run r = check(mode, Map.of("MEMTRACE_CHECK", "continue", "MEMTRACE_CHECK_JSON", json.toString()),
                "./cases-O2", "use_after_free", "bad");
        assertThat(r.stdout()).isEqualTo("done\n");
        assertThat(r.status()).isEqualTo(1);
        List<JsonNode> records = CheckJson.records(Files.readString(json));
        assertThat(records).hasSize(2);
        JsonNode n = records.getFirst();
        assertThat(n.get("kind").asText()).isEqualTo("use-after-free");
        assertThat(n.get("access").asText()).isEqualTo("read");
        assertThat(n.get("size").asInt()).isEqualTo(4);
        assertThat(n.get("offset").asInt()).isEqualTo(8);
        assertThat(n.get("object").get("size").asInt()).isEqualTo(64);
        assertThat(n.get("object").get("name").asText()).matches("<freed:0001@use_after_free\\+\\d+>");
        assertThat(records.get(1).get("kind").asText()).isEqualTo("summary");
        // the report's frames (fault mode: unwound by .eh_frame, -O2 code included), then the summary
        List<String> lines = r.stderr().lines().toList();
        if (mode.equals("fault")) assertThat(lines.get(1)).matches("    #0 cases\\.c:" + CheckBuilds.line(source, "BAD:use_after_free")
                + " \\(use_after_free\\+\\d+\\) in use_after_free");
        assertThat(lines.stream().filter(l -> !l.startsWith("    #")).toList()).element(1).asString().startsWith("memtrace: check summary: ");
        // its good twin: nothing on stderr, neither the runtime's summary nor memtrace's rewrite counts
        CheckBuilds.Run clean = check(mode, Map.of("MEMTRACE_CHECK", "continue"), "./cases-O2", "use_after_free", "good");
        assertThat(clean.stderr()).isEmpty();
        assertThat(clean.stdout()).isEqualTo("done\n");
        assertThat(clean.status()).isZero();
        // an existing JSON file is never overwritten: one line, status 2
        CheckBuilds.Run again = check(mode, Map.of("MEMTRACE_CHECK_JSON", json.toString()), "./cases-O2", "use_after_free", "good");
        assertThat(again.status()).isEqualTo(2);
        assertThat(again.stderr()).startsWith("memtrace: check: cannot create " + json);
    }

    @ParameterizedTest
    @ValueSource(strings = {"fault", "rewrite"})
    void realProgramsRunSilentlyWithTheirOwnOutput(String mode) throws Exception {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 20000; i++) text.append((i * 7919) % 20011).append(" line of text ").append(i % 97).append('\n');
        Files.writeString(dir.resolve("input.txt"), text);
        Files.deleteIfExists(dir.resolve("input.txt.gz"));
        CheckBuilds.Run gz = check(mode, Map.of(), "gzip", "-6", "-k", "input.txt");
        assertThat(gz.stderr()).isEmpty();
        assertThat(gz.status()).isZero();
        Process native_ = new ProcessBuilder("gzip", "-dc", "input.txt.gz").directory(dir.toFile()).start();
        assertThat(new String(native_.getInputStream().readAllBytes())).isEqualTo(text.toString());
        // sort leaks one block of 24 bytes at exit (valgrind agrees: "definitely lost"); its accesses are clean.
        // Every comparison reads the heap (a fault each): 500 lines keep it to seconds on a loaded machine.
        Files.writeString(dir.resolve("short.txt"), text.toString().lines().limit(500).map(l -> l + "\n").collect(Collectors.joining()));
        CheckBuilds.Run sort = check(mode, Map.of("MEMTRACE_CHECK", "noleaks"), "sort", "-n", "short.txt");
        assertThat(sort.stderr()).isEmpty();
        assertThat(sort.status()).isZero();
        Process sorted = new ProcessBuilder("sort", "-n", "short.txt").directory(dir.toFile()).start();
        assertThat(sort.stdout()).isEqualTo(new String(sorted.getInputStream().readAllBytes()));
    }

    /**
     * Functions with dynamic symbols (-rdynamic) are named as the source spells them, or raw with
     * MEMTRACE_CHECK=mangled; the SARIF log of run --check names the sites by code only.
     */
    @Test
    void cxxNamesOfDynamicSymbolsAreDemangled() throws Exception {
        CheckBuilds.fixture(dir, "demangle.cc");
        gcc("g++", "-O2", "-g", "-rdynamic", "-o", "demangle", "demangle.cc");
        CheckBuilds.Run r = check(Map.of(), "./demangle", "bad");
        assertThat(r.status()).isEqualTo(1);
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines).hasSize(3);
        Path source = dir.resolve("demangle.cc");
        int alloc = CheckBuilds.line(source, "ALLOC"), at = CheckBuilds.line(source, "BAD");
        assertThat(lines.get(0)).matches("memtrace: heap overflow: <new\\[\\]0001@Foo::Foo\\(int\\)\\+(\\d+)>\\+16 \\(a block of 16 bytes, "
                + "allocated at demangle\\.cc:" + alloc + "\\) written 4 bytes, 0 bytes past its end, at demangle\\.cc:" + at
                + " \\(Foo::bar\\(int\\)\\+\\d+\\), thread \\d+");
        assertThat(lines.get(1)).matches("    #0 demangle\\.cc:\\d+ \\(Foo::bar\\(int\\)\\+\\d+\\) in Foo::bar\\(int\\)");
        assertThat(lines.get(2)).matches("    #1 demangle\\.cc:\\d+ \\(main\\+\\d+\\) in main");
        Path log = dir.resolve("demangle.sarif");
        CheckBuilds.Run sarif = check(Map.of("MEMTRACE_CHECK_SARIF", log.toString()), "./demangle", "bad");
        assertThat(sarif.status()).isEqualTo(1);
        JsonNode results = new ObjectMapper().readTree(Files.readString(log)).get("runs").get(0).get("results");
        assertThat(results).hasSize(1);
        JsonNode result = results.get(0);
        assertThat(result.get("ruleId").asText()).isEqualTo("heap-overflow");
        assertThat(result.get("message").get("text").asText()).isEqualTo(sarif.stderr().lines().findFirst().orElseThrow().substring("memtrace: ".length()));
        // no call-site table: file:line from the executable's DWARF line table, the code's name by its .symtab
        assertThat(result.get("locations").get(0).get("physicalLocation").get("region").get("startLine").asInt()).isEqualTo(at);
        assertThat(result.get("locations").get(0).get("logicalLocations").get(0).get("fullyQualifiedName").asText()).matches("Foo::bar\\(int\\)\\+\\d+");
        assertThat(result.get("relatedLocations").get(0).get("logicalLocations").get(0).get("fullyQualifiedName").asText())
                .matches("Foo::Foo\\(int\\)\\+\\d+");
        CheckBuilds.Run raw = check(Map.of("MEMTRACE_CHECK", "mangled"), "./demangle", "bad");
        List<String> rawLines = raw.stderr().lines().toList();
        assertThat(rawLines.getFirst()).matches("memtrace: heap overflow: <new\\[\\]0001@_ZN3FooC2Ei\\+\\d+>\\+16 .* at demangle\\.cc:" + at
                + " \\(_ZN3Foo3barEi\\+\\d+\\), thread \\d+");
        assertThat(rawLines.get(1)).matches("    #0 demangle\\.cc:\\d+ \\(_ZN3Foo3barEi\\+\\d+\\) in _ZN3Foo3barEi");
    }

    /**
     * A fault no check foresaw (run_segv.c), in a program with no SIGSEGV handler: said as ASan says "SEGV on
     * unknown address" (the first 64 KB a null dereference, worded as a check's; anything else a wild access
     * with the kernel's reason), then the program dies of SIGSEGV as natively (status 139, "before" printed,
     * memtrace run's note of the crash). Fault mode decodes the instruction (size, direction, the operand's
     * address even where the kernel gives none); rewrite mode's checks catch the NULL accesses before they
     * happen (a report as compiled-in, status 1), and its runtime's handler says the rest as fault mode does,
     * with the size its own reading of the instruction finds and the moved instruction's own address.
     * A program with its own handler keeps it in fault mode; raise(SIGSEGV) is not a fault.
     */
    @ParameterizedTest
    @ValueSource(strings = {"fault", "rewrite"})
    void faultsNoCheckForesawAreSaidAsAsanSaysThenTheProgramDiesOfThem(String mode) throws Exception {
        boolean rw = mode.equals("rewrite");
        // segv is built -O2 -g: a site is named by its DWARF line, then its function (run_segv.c's line of each case);
        // rewrite mode's handler names an instruction moved into a trampoline by the address its check's words give
        IntFunction<String> here = l -> "run_segv\\.c:" + l + " \\(main\\+\\d+\\)";
        Map<String, String> e = new LinkedHashMap<>();
        e.put("null_write", "null dereference: NULL\\+0 \\(the page at address 0, never mapped\\) written 4 bytes, at " + here.apply(41));
        e.put("null_field", "null dereference: NULL\\+8 \\(the page at address 0, never mapped\\) read 8 bytes, at " + here.apply(42));
        e.put("unmapped", "wild access: 0x500000000000 \\(SEGV on unknown address: unmapped memory\\) written 4 bytes, at " + here.apply(43));
        e.put("read_only", "wild access: 0x[0-9a-f]+ \\(SEGV on unknown address: memory that may not be written\\) written 1 byte, at "
                + here.apply(45));
        // in rewrite mode the check's own shadow read faults first (the shadow of a non-canonical address is one):
        // the access is the one its words name, its address %rax
        e.put("non_canonical", "wild access: 0x8000000000000000 \\(SEGV on unknown address: a non-canonical address\\) read 8 bytes, at "
                + here.apply(46));
        if (!rw) e.put("shadow_gap", "wild access: 0x10000000000 \\(SEGV on unknown address: memtrace's shadow memory\\) written 4 bytes, at " + here.apply(44));
        for (var c : e.entrySet()) {
            CheckBuilds.Run r = check(mode, Map.of(), "./segv", c.getKey());
            List<String> lines = r.stderr().lines().toList();
            assertThat(lines).as(c.getKey() + "\n" + r.stderr()).isNotEmpty();
            assertThat(lines.get(0)).as(c.getKey()).matches("memtrace: " + c.getValue() + ", thread \\d+");
            assertThat(r.stdout()).isEqualTo("before\n");
            boolean checked = rw && c.getKey().startsWith("null_"); // a check's report: the program stops with status 1
            assertThat(r.status()).as(c.getKey()).isEqualTo(checked ? 1 : 139);
            if (!checked) assertThat(lines).as(c.getKey()).hasSize(2).element(1).asString().startsWith("memtrace: the program was killed by SIGSEGV");
        }
        CheckBuilds.Run killed = check(mode, Map.of(), "./segv", "killed");
        assertThat(killed.stderr()).startsWith("memtrace: the program was killed by SIGSEGV").doesNotContain("SEGV on unknown");
        assertThat(killed.status()).isEqualTo(139);
        if (!rw) {
            CheckBuilds.Run handled = check(mode, Map.of(), "./segv", "handled");
            assertThat(handled.stderr()).isEmpty();
            assertThat(handled.stdout()).isEqualTo("before\nhandled\n");
            assertThat(handled.status()).isEqualTo(3);
        }
        CheckBuilds.Run good = check(mode, Map.of(), "./segv", "none");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.stdout()).isEqualTo("before\ndone\n");
        assertThat(good.status()).isZero();
    }

    /**
     * Fault mode's globals with MEMTRACE_CHECK=globals, by the executable's symbols (check_globals.c): an index one past a global array, a
     * memset one byte past a struct, a read before a table (its origin the table's first byte, landing in the
     * global laid out before it), each with its twin silent; and an -O0 stack smash, said at the ret that takes
     * the overwritten return address as a stack overflow of the function's frame (then SIGSEGV, as natively).
     */
    @Test
    void globalsAreCheckedBySymbolExtentsAndASmashedReturnIsAStackOverflow() throws Exception {
        Files.writeString(dir.resolve("globals.c"), """
                #include <stdio.h>
                #include <stdlib.h>
                #include <string.h>
                long before = 7;
                long table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
                int counts[10];
                struct config { int flags; char name[20]; } current;
                __attribute__((noinline)) static void smash(const char *s, size_t n)
                {
                    char buf[16];
                    memcpy(buf, s, n);
                    printf("%c\\n", buf[0]);
                }
                int main(int argc, char **argv)
                {
                    int bad = strcmp(argv[2], "bad") == 0;
                    volatile int k = bad;
                    if (!strcmp(argv[1], "index")) for (int i = 0; i < 10 + k; i++) counts[i] = i;
                    if (!strcmp(argv[1], "memset")) memset(&current, 0, sizeof current + k);
                    if (!strcmp(argv[1], "before")) printf("%ld\\n", table[-k]);
                    if (!strcmp(argv[1], "smash")) { char big[64]; memset(big, 'C', sizeof big); smash(big, bad ? 64 : 16); }
                    printf("done %ld\\n", before);
                    return 0;
                }
                """);
        gcc("gcc", "-O0", "-g", "-o", "globals", "globals.c");
        Map<String, String> e = new LinkedHashMap<>();
        e.put("index", "global overflow: counts\\+40 \\(a global of 40 bytes\\) written 4 bytes, 0 bytes past its end, at globals\\.c:18 \\(main\\+\\d+\\)");
        e.put("memset", "global overflow: current\\+24 \\(a global of 24 bytes\\) written 25 bytes by memset, 0 bytes past its end, at globals\\.c:19 \\(main\\+\\d+\\)");
        e.put("before", "global underflow: table-8 \\(a global of 64 bytes\\) read 8 bytes, 8 bytes before its start, at globals\\.c:20 \\(main\\+\\d+\\)");
        // globals is built -g: its memcpy past buf is caught at the call from DWARF (check_locals.c), before the smash
        e.put("smash", "stack overflow: <stack:buf@smash>\\+16 \\(a variable of 16 bytes, declared at line \\d+ of smash\\) "
                + "written 64 bytes by memcpy, 0 bytes past its end, at globals\\.c:11 \\(smash\\+\\d+\\)");
        for (var c : e.entrySet()) {
            // the globals' checks are asked for (each access to .data/.bss faults); a smash is said without
            Map<String, String> env = c.getKey().equals("smash") ? Map.of() : Map.of("MEMTRACE_CHECK", "globals");
            CheckBuilds.Run bad = check(env, "./globals", c.getKey(), "bad");
            assertThat(bad.stderr().lines().findFirst().orElse("")).as(c.getKey() + "\n" + bad.stderr())
                    .matches("memtrace: " + c.getValue() + ", thread \\d+");
            assertThat(bad.status()).as(c.getKey()).isEqualTo(1);
            CheckBuilds.Run good = check(env, "./globals", c.getKey(), "good");
            assertThat(good.stderr()).as("twin of " + c.getKey()).isEmpty();
            assertThat(good.stdout()).endsWith("done 7\n");
            assertThat(good.status()).isZero();
        }
    }

    /**
     * --stack-depth N prints at most N frames under a report, ASan's way (#0 the report's own site), unwound by
     * .eh_frame and ending at main as allocation stacks do, functions named by the executable's .symtab, lines by
     * its DWARF.
     */
    @Test
    void stackDepthPrintsTheFramesUnderAReport() throws Exception {
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", "fault", "--stack-depth", "3"), Map.of(), "./cases-O0", "loop_overflow", "bad");
        assertThat(r.status()).isEqualTo(1);
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines).as(r.stderr()).hasSize(3);
        String site = "cases.c:" + CheckBuilds.line(source, "BAD:loop_overflow");
        assertThat(lines.get(0)).matches("memtrace: heap overflow: <malloc0001@loop_overflow\\+\\d+>\\+64 .*, at " + Pattern.quote(site)
                + " \\(loop_overflow\\+(\\d+)\\), thread \\d+");
        String at = lines.get(0).replaceAll(".*, at cases\\.c:\\d+ \\((loop_overflow\\+\\d+)\\), thread.*", "$1");
        // file:line from the executable's DWARF line table (cases.c is built -g)
        assertThat(lines.get(1)).isEqualTo("    #0 " + site + " (" + at + ") in loop_overflow");
        assertThat(lines.get(2)).matches("    #1 cases\\.c:\\d+ \\(main\\+\\d+\\) in main");
    }

    /**
     * Rewrite mode says, with the check summary, how many memory instructions of each module are checked and
     * how many could not be patched and stay unchecked, and which modules are left alone (glibc's).
     */
    @Test
    void rewriteModeCountsWhatItChecksWithTheSummary() throws Exception {
        CheckBuilds.Run r = check("rewrite", Map.of("MEMTRACE_CHECK", "summary"), "./cases-O2", "heap_overflow", "good");
        assertThat(r.status()).isZero();
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).startsWith("memtrace: check summary: ");
        assertThat(lines.get(1)).matches("memtrace: check: [1-9]\\d* memory instructions of .*/cases-O2 checked, \\d+ by a punned jump, \\d+ through the int3 fallback, \\d+ left unchecked.*");
        assertThat(lines.get(2)).startsWith("memtrace: check: not rewritten: ").contains("libc.so.6 (glibc's: its functions are checked by what they do)");
        // a program memtrace cc built records: refused in one line, as in fault mode
        assertThat(Cli.run(dir, "cc", "-O2", "-o", "cases-O2.cc", "cases.c").status()).isZero();
        Cli.Result cc = Cli.run(dir, "run", "--check", "--mode", "rewrite", "--", "./cases-O2.cc", "leak", "good");
        assertThat(cc.status()).isEqualTo(2);
        assertThat(cc.stderr()).isEqualTo("memtrace: --check needs a program memtrace cc did not build (its probes record, they do not "
                + "check); build it with memtrace cc --check instead\n");
    }
}
