package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every bug class of {@code memtrace cc --check} on src/test/resources/c/check/cases.c, built -O0 and -O2:
 * the bad run stops with exactly the expected report (kind, object, offset, distance, allocation, free and
 * access lines, function) and status 1 (23 for a leak); its good twin runs silently to the end.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckCasesTest {
    Path dir;
    Path source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "cases.c");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "cases-O0", "cases.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "cases-O2", "cases.c");
        cxxSource = CheckBuilds.fixture(dir, "cases.cc");
        CheckBuilds.build(dir, true, true, "-O0", "-g", "-o", "cxx-O0", "cases.cc");
        CheckBuilds.build(dir, true, true, "-O2", "-g", "-o", "cxx-O2", "cases.cc");
    }

    Path cxxSource;

    @ParameterizedTest
    @ValueSource(strings = {"O0", "O2"})
    void cxxMismatchesOverflowsAndUseAfterDeleteAreReported(String level) throws Exception {
        Map<String, String> e = new LinkedHashMap<>();
        e.put("malloc_delete", "allocator mismatch: delete of <malloc0002@malloc_delete\\(int, int\\)\\+\\d+>\\+0 \\(a block of 64 bytes, "
                + "allocated at A, from malloc\\), at .*");
        e.put("array_delete", "allocator mismatch: delete of <new\\[\\]0002@array_delete\\(int, int\\)\\+\\d+>\\+0 \\(a block of 64 bytes, "
                + "allocated at A, from new\\[\\]\\), at .*");
        e.put("new_overflow", "heap overflow: <new\\[\\]0002@new_overflow\\(int, int\\)\\+\\d+>\\+64 \\(a block of 64 bytes, allocated at A\\) "
                + "written 4 bytes, 0 bytes past its end, at B \\(new_overflow\\(int, int\\)\\+\\d+\\)");
        e.put("use_after_delete", "use after free: <freed:0003@use_after_delete\\(int, int\\)\\+\\d+>\\+0 \\(a block of 16 bytes, allocated at A, "
                + "freed at F\\) read 8 bytes, at B \\(use_after_delete\\(int, int\\)\\+\\d+\\)");
        // blocks libstdc++ allocates or frees for the program are named by the program's call into it, and the call
        // the program made (docs/check.md, "Sites in the user's code")
        String vector = "std::vector<int, std::allocator<int> >::vector\\(unsigned long, std::allocator<int> const&\\)";
        e.put("vector_overflow", "heap overflow: <new0002@vector_overflow\\(int, int\\)\\+\\d+>\\+64 \\(a block of 64 bytes, allocated at A, "
                + "through " + vector + "\\) written 4 bytes, 0 bytes past its end, at B \\(vector_overflow\\(int, int\\)\\+\\d+\\)");
        e.put("string_overflow", "heap overflow: <new\\d+@string_overflow\\(int, int\\)\\+\\d+>\\+37 \\(a block of 37 bytes, allocated at A, "
                + "through std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string<.+>\\(.+\\)\\) "
                + "written 1 byte, 0 bytes past its end, at B \\(string_overflow\\(int, int\\)\\+\\d+\\)");
        e.put("unique_ptr_uaf", "use after free: <freed:\\d+@unique_ptr_uaf\\(int, int\\)\\+\\d+>\\+0 \\(a block of 64 bytes, allocated at A, "
                + "through std::make_unique<int \\[\\]>\\(unsigned long\\), freed at F, through std::unique_ptr<int \\[\\], "
                + "std::default_delete<int \\[\\]> >::reset\\(.*\\)\\) read 4 bytes, at B \\(unique_ptr_uaf\\(int, int\\)\\+\\d+\\)");
        e.put("vector_stale", "use after free: <freed:\\d+@vector_stale\\(int, int\\)\\+\\d+>\\+0 \\(a block of 64 bytes, allocated at A, "
                + "through " + vector + ", freed at F, through std::vector<int, std::allocator<int> >::push_back\\(int&&\\)\\) "
                + "read 4 bytes, at B \\(vector_stale\\(int, int\\)\\+\\d+\\)");
        for (var c : e.entrySet()) {
            String want = c.getValue();
            for (String k : new String[] {"ALLOC", "FREE", "BAD"}) {
                String mark = k + ":" + c.getKey();
                if (want.contains("at " + k.charAt(0) + " ") || want.contains("at " + k.charAt(0) + ",") || want.contains("at " + k.charAt(0) + "\\")) {
                    want = want.replace("at " + k.charAt(0), "at " + Pattern.quote("cases.cc:" + CheckBuilds.line(cxxSource, mark)));
                }
            }
            CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), "./cxx-" + level, c.getKey(), "bad");
            assertThat(bad.stderr().lines().findFirst().orElse("")).as(level + " " + c.getKey())
                    .matches("memtrace: " + want + ", thread \\d+");
            assertThat(bad.status()).isEqualTo(1);
            CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), "./cxx-" + level, c.getKey(), "good");
            assertThat(good.stderr()).as(level + " twin of " + c.getKey()).isEmpty();
            assertThat(good.stdout()).isEqualTo("done\n");
            assertThat(good.status()).isZero();
        }
    }

    private String at(String key) throws Exception {
        return "cases.c:" + CheckBuilds.line(source, key + ":" + currentCase);
    }

    private String currentCase;

    /** The report's expected text per case, with A/F/B for the ALLOC/FREE/BAD lines, as a regex. */
    private Map<String, String> expected() throws Exception {
        Map<String, String> e = new LinkedHashMap<>();
        e.put("heap_overflow", "heap overflow: <malloc0001@heap_overflow\\+\\d+>\\+16 \\(a block of 16 bytes, allocated at A\\) "
                + "written 1 byte, 0 bytes past its end, at B \\(heap_overflow\\+\\d+\\)");
        e.put("heap_underflow", "heap underflow: <malloc0001@heap_underflow\\+\\d+>-8 \\(a block of 128 bytes, allocated at A\\) "
                + "read 8 bytes, 8 bytes before its start, at B \\(heap_underflow\\+\\d+\\)");
        e.put("use_after_free", "use after free: <freed:0001@use_after_free\\+\\d+>\\+8 \\(a block of 64 bytes, allocated at A, "
                + "freed at F\\) read 4 bytes, at B \\(use_after_free\\+\\d+\\)");
        e.put("reused_after_free", "use after free: <freed:0001@reused_after_free\\+\\d+>\\+4 \\(a block of 64 bytes, allocated at A, "
                + "freed at F\\) read 4 bytes, at B \\(reused_after_free\\+\\d+\\)");
        e.put("recycled_after_free", "use after free: <freed:\\d+@recycled_after_free\\+\\d+>\\+4 \\(a block of 64 bytes, "
                + "allocated at A, freed at F\\) read 4 bytes, at B \\(recycled_after_free\\+\\d+\\)");
        e.put("double_free", "double free: free of <freed:0001@double_free\\+\\d+>\\+0 \\(a block of 16 bytes, allocated at A, "
                + "freed at F\\), at B \\(double_free\\+\\d+\\)");
        e.put("free_stack", "invalid free: free of <stack:local@free_stack>\\+0 \\(a variable of 32 bytes, declared at line \\d+ "
                + "of free_stack\\), at B \\(free_stack\\+\\d+\\)");
        e.put("free_global", "invalid free: free of table\\+0 \\(a global of 40 bytes, defined at cases.c:12\\), at B \\(free_global\\+\\d+\\)");
        e.put("free_middle", "invalid free: free of <malloc0001@free_middle\\+\\d+>\\+8 \\(a block of 16 bytes, allocated at A\\), "
                + "at B \\(free_middle\\+\\d+\\)");
        e.put("stack_overflow", "stack overflow: <stack:buf@stack_overflow>\\+16 \\(a variable of 16 bytes, declared at line \\d+ of "
                + "stack_overflow\\) written 1 byte, 0 bytes past its end, at B \\(stack_overflow\\+\\d+\\)");
        e.put("global_overflow", "global overflow: table\\+40 \\(a global of 40 bytes, defined at cases.c:12\\) written 4 bytes, "
                + "0 bytes past its end, at B \\(global_overflow\\+\\d+\\)");
        e.put("memcpy_overflow", "heap overflow: <malloc0001@memcpy_overflow\\+\\d+>\\+16 \\(a block of 16 bytes, allocated at A\\) "
                + "written 17 bytes by memcpy, 0 bytes past its end, at B \\(memcpy_overflow\\+\\d+\\)");
        e.put("strcpy_overflow", "heap overflow: <malloc0001@strcpy_overflow\\+\\d+>\\+16 \\(a block of 16 bytes, allocated at A\\) "
                + "written 17 bytes by strcpy, 0 bytes past its end, at B \\(strcpy_overflow\\+\\d+\\)");
        e.put("leak", "leak: <malloc0001@leak\\+\\d+> \\(a block of 16 bytes, allocated at A\\) unreachable at exit");
        e.put("loop_overflow", "heap overflow: <malloc0001@loop_overflow\\+\\d+>\\+64 \\(a block of 64 bytes, allocated at A\\) "
                + "written 4 bytes( by the loop)?, 0 bytes past its end, at B \\(loop_overflow\\+\\d+\\)");
        e.put("struct_fields", "heap overflow: <malloc0001@struct_fields\\+\\d+>\\+24 \\(a block of 24 bytes, allocated at A\\) "
                + "read 8 bytes, 0 bytes past its end, at cases.c:" + CheckBuilds.line(source, "BAD:fields") + " \\(fields\\+\\d+\\)");
        return e;
    }

    @ParameterizedTest
    @ValueSource(strings = {"O0", "O2"})
    void everyBugIsReportedExactlyAndEveryTwinIsSilent(String level) throws Exception {
        for (var c : expected().entrySet()) {
            currentCase = c.getKey();
            String want = c.getValue();
            if (want.contains("at A")) want = want.replace("at A", "at " + Pattern.quote(at("ALLOC")));
            if (want.contains("at F")) want = want.replace("at F", "at " + Pattern.quote(at("FREE")));
            if (want.contains("at B")) want = want.replace("at B", "at " + Pattern.quote(at("BAD")));
            String binary = "./cases-" + level;
            CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), binary, c.getKey(), "bad");
            String first = bad.stderr().lines().findFirst().orElse("");
            assertThat(first).as(level + " " + c.getKey()).matches("memtrace: " + want + "(, thread \\d+)?");
            assertThat(bad.status()).as(c.getKey()).isEqualTo(c.getKey().equals("leak") ? 23 : 1);
            if (c.getKey().equals("loop_overflow") && level.equals("O2")) assertThat(first).contains("by the loop");
            CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), binary, c.getKey(), "good");
            assertThat(good.stderr()).as(level + " twin of " + c.getKey()).isEmpty();
            assertThat(good.status()).isZero();
            assertThat(good.stdout()).isEqualTo("done\n");
        }
    }
}
