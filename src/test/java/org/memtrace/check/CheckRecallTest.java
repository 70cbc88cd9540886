package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Gcc;

/**
 * Recall of {@code memtrace cc --check} on the bug shapes of the public suites it is judged on (Juliet
 * CWE-121/122/124/126/127/415/416/476/590/761/762/401, AddressSanitizer's own tests): the C cases of
 * src/test/resources/c/check/recall.c and the C++ ones of recall.cc, each built -O0 and -O2 -g. Every bad run
 * stops with exactly the expected first report and status 1 (23 for a leak); every good twin prints "done",
 * reports nothing and exits 0.
 *
 * <p>Expected reports are templates: literal text but for {@code {n}} (a number: code offsets, lines of
 * allocation and declaration), {@code {BAD}} (file:line of the case's {@code BAD:name} marker) and
 * {@code {a|b}} (where -O0 and -O2 builds differ, e.g. gcc turning sprintf("%s") into strcpy).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckRecallTest {
    static final String C_CASES = """
            calloc_overflow | heap overflow: <calloc0002@calloc_overflow+{n}>+64 (a block of 64 bytes, allocated at recall.c:{n}) read 4 bytes, 0 bytes past its end, at {BAD} (calloc_overflow+{n})
            realloc_overflow | heap overflow: <realloc0003@realloc_overflow+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) written 1 byte, 0 bytes past its end, at {BAD} (realloc_overflow+{n})
            realloc_shrunk | heap overflow: <realloc0003@realloc_shrunk+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) written 1 byte, 0 bytes past its end, at {BAD} (realloc_shrunk+{n})
            aligned_overflow | heap overflow: <malloc0002@aligned_overflow+{n}>+64 (a block of 64 bytes, allocated at recall.c:{n}) written 1 byte, 0 bytes past its end, at {BAD} (aligned_overflow+{n})
            posix_memalign_overflow | heap overflow: <malloc0002@posix_memalign_overflow+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) read 1 byte, 0 bytes past its end, at {BAD} (posix_memalign_overflow+{n})
            memalign_overflow | heap overflow: <malloc0002@memalign_overflow+{n}>+19 (a block of 19 bytes, allocated at recall.c:{n}) written 1 byte, 0 bytes past its end, at {BAD} (memalign_overflow+{n})
            valloc_overflow | heap overflow: <malloc0002@valloc_overflow+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) written 1 byte, 0 bytes past its end, at {BAD} (valloc_overflow+{n})
            strdup_overflow | heap overflow: <malloc0002@strdup_overflow+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) read 1 byte, 0 bytes past its end, at {BAD} (strdup_overflow+{n})
            strndup_overflow | heap overflow: <malloc0002@strndup_overflow+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) written 1 byte, 0 bytes past its end, at {BAD} (strndup_overflow+{n})
            large_underflow | heap underflow: <malloc0002@large_underflow+{n}>-4000 (a block of 1048576 bytes, allocated at recall.c:{n}) read 1 byte, 4000 bytes before its start, at {BAD} (large_underflow+{n})
            large_overflow | heap overflow: <malloc0002@large_overflow+{n}>+1051591 (a block of 1048592 bytes, allocated at recall.c:{n}) written 1 byte, 2999 bytes past its end, at {BAD} (large_overflow+{n})
            memset_overflow | heap overflow: <malloc0002@memset_overflow+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) written 17 bytes by memset, 0 bytes past its end, at {BAD} (memset_overflow+{n})
            memmove_overflow | heap overflow: <malloc0002@memmove_overflow+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) written 20 bytes by {memmove|memcpy}, 0 bytes past its end, at {BAD} (memmove_overflow+{n})
            memcpy_overread | heap overflow: <malloc0002@memcpy_overread+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) read 24 bytes by memcpy, 0 bytes past its end, at {BAD} (memcpy_overread+{n})
            strncpy_overflow | heap overflow: <malloc0002@strncpy_overflow+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) written 17 bytes by strncpy, 0 bytes past its end, at {BAD} (strncpy_overflow+{n})
            strcat_overflow | heap overflow: <malloc0002@strcat_overflow+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) written 15 bytes by {strcat|strcpy}, 0 bytes past its end, at {BAD} (strcat_overflow+{n})
            strncat_overflow | heap overflow: <malloc0002@strncat_overflow+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) written 17 bytes by strncat, 0 bytes past its end, at {BAD} (strncat_overflow+{n})
            strlen_overread | heap overflow: <malloc0002@strlen_overread+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) read 17 bytes by strlen, 0 bytes past its end, at {BAD} (strlen_overread+{n})
            strcpy_overread | heap overflow: <malloc0002@strcpy_overread+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) read 17 bytes by strcpy, 0 bytes past its end, at {BAD} (strcpy_overread+{n})
            printf_overread | heap overflow: <malloc0002@printf_overread+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) read 17 bytes by fprintf, 0 bytes past its end, at {BAD} (printf_overread+{n})
            puts_overread | heap overflow: <malloc0002@puts_overread+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) read 17 bytes by fputs, 0 bytes past its end, at {BAD} (puts_overread+{n})
            snprintf_overflow | stack overflow: <stack:dest@snprintf_overflow>+16 (a variable of 16 bytes, declared at line {n} of snprintf_overflow) written 24 bytes by snprintf, 0 bytes past its end, at {BAD} (snprintf_overflow+{n})
            sprintf_overflow | heap overflow: <malloc0002@sprintf_overflow+{n}>+16 (a block of 16 bytes, allocated at recall.c:{n}) written 17 bytes by {sprintf|strcpy}, 0 bytes past its end, at {BAD} (sprintf_overflow+{n})
            strcpy_underread | heap underflow: <malloc0002@strcpy_underread+{n}>-8 (a block of 16 bytes, allocated at recall.c:{n}) read 1 byte by strcpy, 8 bytes before its start, at {BAD} (strcpy_underread+{n})
            strncpy_underread | heap underflow: <malloc0002@strncpy_underread+{n}>-8 (a block of 16 bytes, allocated at recall.c:{n}) read 1 byte by strncpy, 8 bytes before its start, at {BAD} (strncpy_underread+{n})
            memcpy_underwrite | stack underflow: <stack:buf@memcpy_underwrite>-8 (a variable of 32 bytes, declared at line {n} of memcpy_underwrite) written 16 bytes by memcpy, 8 bytes before its start, at {BAD} (memcpy_underwrite+{n})
            wcscpy_overflow | heap overflow: <malloc0002@wcscpy_overflow+{n}>+64 (a block of 64 bytes, allocated at recall.c:{n}) written 68 bytes by wcscpy, 0 bytes past its end, at {BAD} (wcscpy_overflow+{n})
            wcslen_overread | heap overflow: <malloc0002@wcslen_overread+{n}>+64 (a block of 64 bytes, allocated at recall.c:{n}) read 68 bytes by wcslen, 0 bytes past its end, at {BAD} (wcslen_overread+{n})
            wmemset_overflow | heap overflow: <malloc0002@wmemset_overflow+{n}>+64 (a block of 64 bytes, allocated at recall.c:{n}) written 68 bytes by wmemset, 0 bytes past its end, at {BAD} (wmemset_overflow+{n})
            wcsncpy_overflow | heap overflow: <malloc0002@wcsncpy_overflow+{n}>+64 (a block of 64 bytes, allocated at recall.c:{n}) written 68 bytes by wcsncpy, 0 bytes past its end, at {BAD} (wcsncpy_overflow+{n})
            wcscat_overflow | heap overflow: <malloc0002@wcscat_overflow+{n}>+64 (a block of 64 bytes, allocated at recall.c:{n}) written 60 bytes by wcscat, 0 bytes past its end, at {BAD} (wcscat_overflow+{n})
            stack_loop_overflow | stack overflow: <stack:buf@stack_loop_overflow>+40 (a variable of 40 bytes, declared at line {n} of stack_loop_overflow) written 4 bytes, 0 bytes past its end, at {BAD} (stack_loop_overflow+{n})
            stack_underwrite | stack underflow: <stack:buf@stack_underwrite>-8 (a variable of 64 bytes, declared at line {n} of stack_underwrite) written 8 bytes, 8 bytes before its start, at {BAD} (stack_underwrite+{n})
            stack_struct_overflow | stack overflow: <stack:f@stack_struct_overflow>+44 (a variable of 44 bytes, declared at line {n} of stack_struct_overflow) written 4 bytes, 0 bytes past its end, at {BAD} (stack_struct_overflow+{n})
            stack_memcpy_overflow | stack overflow: <stack:dest@stack_memcpy_overflow>+50 (a variable of 50 bytes, declared at line {n} of stack_memcpy_overflow) written 100 bytes by memcpy, 0 bytes past its end, at {BAD} (stack_memcpy_overflow+{n})
            stack_callee_overflow | stack overflow: <stack:buf@stack_callee_overflow>+24 (a variable of 24 bytes, declared at line {n} of stack_callee_overflow) written 1 byte{| by the loop}, 0 bytes past its end, at {BAD} (fill+{n})
            alloca_overflow | stack overflow: <stack:alloca>+16 (an alloca of 16 bytes) written 1 byte, 0 bytes past its end, at {BAD} (alloca_overflow+{n})
            global_read_overflow | global overflow: garr+32 (a global of 32 bytes, defined at recall.c:{n}) read 4 bytes, 0 bytes past its end, at {BAD} (global_read_overflow+{n})
            global_struct_overflow | global overflow: gframe+44 (a global of 44 bytes, defined at recall.c:{n}) written 4 bytes, 0 bytes past its end, at {BAD} (global_struct_overflow+{n})
            static_overflow | global overflow: sbuf+32 (a global of 32 bytes, defined at recall.c:{n}) read 1 byte, 0 bytes past its end, at {BAD} (static_overflow+{n})
            global_underflow | global underflow: garr-4 (a global of 32 bytes, defined at recall.c:{n}) read 4 bytes, 4 bytes before its start, at {BAD} (global_underflow+{n})
            global_memcpy_overflow | global overflow: garr+32 (a global of 32 bytes, defined at recall.c:{n}) written 33 bytes by memcpy, 0 bytes past its end, at {BAD} (global_memcpy_overflow+{n})
            use_after_scope | stack use after scope: <stack:local@use_after_scope>+4 (a variable of 16 bytes, declared at line {n} of use_after_scope) read 4 bytes, at {BAD} (use_after_scope+{n})
            use_after_return | stack use after return: <stack:local@keep_local>+8 (a variable of 32 bytes, declared at line {n} of keep_local) read 4 bytes, at {BAD} (use_after_return+{n})
            use_after_realloc | use after free: <freed:0002@use_after_realloc+{n}>+0 (a block of 16 bytes, allocated at recall.c:{n}, freed at recall.c:{n}) read 1 byte, at {BAD} (use_after_realloc+{n})
            use_after_free_memcpy | use after free: <freed:0002@use_after_free_memcpy+{n}>+0 (a block of 16 bytes, allocated at recall.c:{n}, freed at recall.c:{n}) read 16 bytes by memcpy, at {BAD} (use_after_free_memcpy+{n})
            use_after_free_write | use after free: <freed:0002@use_after_free_write+{n}>+64 (a block of 128 bytes, allocated at recall.c:{n}, freed at recall.c:{n}) written 8 bytes, at {BAD} (use_after_free_write+{n})
            use_after_free_strlen | use after free: <freed:0002@use_after_free_strlen+{n}>+0 (a block of 17 bytes, allocated at recall.c:{n}, freed at recall.c:{n}) read 17 bytes by strlen, at {BAD} (use_after_free_strlen+{n})
            use_after_free_reused | use after free: <freed:0002@use_after_free_reused+{n}>+0 (a block of 16 bytes, allocated at recall.c:{n}, freed at recall.c:{n}) read 1 byte, at {BAD} (use_after_free_reused+{n})
            double_free_realloc | double free: free of <freed:0002@double_free_realloc+{n}>+0 (a block of 16 bytes, allocated at recall.c:{n}, freed at recall.c:{n}), at {BAD} (double_free_realloc+{n})
            double_free_loop | double free: free of <freed:0002@double_free_loop+{n}>+0 (a block of 16 bytes, allocated at recall.c:{n}, freed at recall.c:{n}), at {BAD} (double_free_loop+{n})
            written_then_freed | heap overflow: <malloc0002@written_then_freed+{n}>+8 (a block of 8 bytes, allocated at recall.c:{n}) written 1 byte{| by the loop}, 0 bytes past its end, at {BAD} (written_then_freed+{n})
            double_free_unused | double free: free of <freed:0002@double_free_unused+{n}>+0 (a block of 8 bytes, allocated at recall.c:{n}, freed at recall.c:{n}), at {BAD} (double_free_unused+{n})
            free_alloca | invalid free: free of <stack:alloca>+0 (an alloca of 16 bytes), at {BAD} (free_alloca+{n})
            free_static_local | invalid free: free of local+0 (a global of 64 bytes, defined at recall.c:{n}), at {BAD} (free_static_local+{n})
            free_struct_stack | invalid free: free of <stack:f@free_struct_stack>+0 (a variable of 44 bytes, declared at line {n} of free_struct_stack), at {BAD} (free_struct_stack+{n})
            free_string_literal | invalid free: free of "a literal"+0 (a string literal of 10 bytes), at {BAD} (free_string_literal+{n})
            free_after_increment | invalid free: free of <malloc0002@free_after_increment+{n}>+3 (a block of 16 bytes, allocated at recall.c:{n}), at {BAD} (free_after_increment+{n})
            null_read | null dereference: NULL+4 (the page at address 0, never mapped) read 4 bytes, at {BAD} (null_read+{n})
            null_write | null dereference: NULL+0 (the page at address 0, never mapped) written 4 bytes, at {BAD} (null_write+{n})
            strlen_null | null dereference: NULL+0 (the page at address 0, never mapped) read 1 byte{| by strlen}, at {BAD} (strlen_null+{n})
            wprintf_after_free | use after free: <freed:0002@wprintf_after_free+{n}>+0 (a block of 64 bytes, allocated at recall.c:{n}, freed at recall.c:{n}) read 4 bytes by fwprintf, at {BAD} (wprintf_after_free+{n})
            swprintf_overflow | stack overflow: <stack:dest@swprintf_overflow>+64 (a variable of 64 bytes, declared at line {n} of swprintf_overflow) written 96 bytes by swprintf, 0 bytes past its end, at {BAD} (swprintf_overflow+{n})
            leak_calloc | leak: <calloc0002@leak_calloc+{n}> (a block of 16 bytes, allocated at recall.c:{n}) unreachable at exit
            leak_strdup | leak: <malloc0002@leak_strdup+{n}> (a block of 17 bytes, allocated at recall.c:{n}) unreachable at exit
            leak_realloc | leak: <realloc0003@leak_realloc+{n}> (a block of 32 bytes, allocated at recall.c:{n}) unreachable at exit
            leak_list | leak: <malloc0002@leak_list+{n}> (a block of 16 bytes, allocated at recall.c:{n}) unreachable at exit, with 15 more blocks from the same call, 256 bytes in all
            leak_interior | leak: <malloc0002@leak_interior+{n}> (a block of 16 bytes, allocated at recall.c:{n}) unreachable at exit
            leak_tls | leak: <malloc0002@leak_tls+{n}> (a block of 16 bytes, allocated at recall.c:{n}) unreachable at exit
            leak_written_only | leak: <malloc0002@leak_written_only+{n}> (a block of 16 bytes, allocated at recall.c:{n}) unreachable at exit
            strcat_overlap | overlapping copy: {strcat|strcpy} of 3 bytes from <malloc0002@strcat_overlap+{n}>+1 to <malloc0002@strcat_overlap+{n}>+{0|3}, at {BAD} (strcat_overlap+{n})
            """;

    static final String CXX_CASES = """
            new_free | allocator mismatch: free of <new0002@new_free(int, int)+{n}>+0 (a block of 4 bytes, allocated at recall.cc:{n}, from new), at {BAD} (new_free(int, int)+{n})
            new_array_free | allocator mismatch: free of <new[]0002@new_array_free(int, int)+{n}>+0 (a block of 16 bytes, allocated at recall.cc:{n}, from new[]), at {BAD} (new_array_free(int, int)+{n})
            new_delete_array | allocator mismatch: delete[] of <new0002@new_delete_array(int, int)+{n}>+0 (a block of 8 bytes, allocated at recall.cc:{n}, from new), at {BAD} (new_delete_array(int, int)+{n})
            malloc_delete_array | allocator mismatch: delete[] of <malloc0002@malloc_delete_array(int, int)+{n}>+0 (a block of 16 bytes, allocated at recall.cc:{n}, from malloc), at {BAD} (malloc_delete_array(int, int)+{n})
            strdup_delete | allocator mismatch: delete[] of <malloc0002@strdup_delete(int, int)+{n}>+0 (a block of 9 bytes, allocated at recall.cc:{n}, from malloc), at {BAD} (strdup_delete(int, int)+{n})
            realloc_delete | allocator mismatch: delete of <realloc0002@realloc_delete(int, int)+{n}>+0 (a block of 16 bytes, allocated at recall.cc:{n}, from malloc), at {BAD} (realloc_delete(int, int)+{n})
            double_delete | double free: delete of <freed:0002@double_delete(int, int)+{n}>+0 (a block of 24 bytes, allocated at recall.cc:{n}, freed at recall.cc:{n}), at {BAD} (double_delete(int, int)+{n})
            double_delete_array | double free: delete[] of <freed:0002@double_delete_array(int, int)+{n}>+0 (a block of 64 bytes, allocated at recall.cc:{n}, freed at recall.cc:{n}), at {BAD} (double_delete_array(int, int)+{n})
            delete_stack | invalid free: delete of <stack:local@delete_stack(int, int)>+0 (a variable of 24 bytes, declared at line {n} of delete_stack(int, int)), at {BAD} (delete_stack(int, int)+{n})
            delete_array_static | invalid free: delete[] of table+0 (a global of 64 bytes, defined at recall.cc:{n}), at {BAD} (delete_array_static(int, int)+{n})
            delete_array_alloca | invalid free: delete[] of <stack:alloca>+0 (an alloca of 16 bytes), at {BAD} (delete_array_alloca(int, int)+{n})
            delete_middle | invalid free: delete[] of <new[]0002@delete_middle(int, int)+{n}>+4 (a block of 64 bytes, allocated at recall.cc:{n}), at {BAD} (delete_middle(int, int)+{n})
            new_array_underflow | heap underflow: <new[]0002@new_array_underflow(int, int)+{n}>-4 (a block of 64 bytes, allocated at recall.cc:{n}) read 4 bytes, 4 bytes before its start, at {BAD} (new_array_underflow(int, int)+{n})
            object_memcpy_overflow | heap overflow: <new0002@object_memcpy_overflow(int, int)+{n}>+24 (a block of 24 bytes, allocated at recall.cc:{n}) written 17 bytes by memcpy, 0 bytes past its end, at {BAD} (object_memcpy_overflow(int, int)+{n})
            use_after_delete_array | use after free: <freed:0002@use_after_delete_array(int, int)+{n}>+8 (a block of 128 bytes, allocated at recall.cc:{n}, freed at recall.cc:{n}) read 8 bytes, at {BAD} (use_after_delete_array(int, int)+{n})
            string_strcpy_overflow | heap overflow: <new[]0003@string_strcpy_overflow(int, int)+{n}>+16 (a block of 16 bytes, allocated at recall.cc:{n}) written 17 bytes by strcpy, 0 bytes past its end, at {BAD} (string_strcpy_overflow(int, int)+{n})
            leak_new | leak: <new0002@leak_new(int, int)+{n}> (a block of 24 bytes, allocated at recall.cc:{n}) unreachable at exit
            leak_new_array | leak: <new[]0002@leak_new_array(int, int)+{n}> (a block of 64 bytes, allocated at recall.cc:{n}) unreachable at exit
            """;

    Path dir;
    Path cSource;
    Path cxxSource;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        cSource = CheckBuilds.fixture(dir, "recall.c");
        cxxSource = CheckBuilds.fixture(dir, "recall.cc");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "c-O0", "recall.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "c-O2", "recall.c");
        CheckBuilds.build(dir, true, true, "-O0", "-g", "-o", "cxx-O0", "recall.cc");
        CheckBuilds.build(dir, true, true, "-O2", "-g", "-o", "cxx-O2", "recall.cc");
    }

    @ParameterizedTest
    @ValueSource(strings = {"O0", "O2"})
    void everyCBugIsReportedWithItsKindAndEveryTwinIsSilent(String level) throws Exception {
        check("./c-" + level, cSource, C_CASES, level);
    }

    @ParameterizedTest
    @ValueSource(strings = {"O0", "O2"})
    void everyCxxBugIsReportedWithItsKindAndEveryTwinIsSilent(String level) throws Exception {
        check("./cxx-" + level, cxxSource, CXX_CASES, level);
    }

    /** The first global of each section of the only object: before the as step's guards, nothing was a redzone there. */
    static final String FIRST_GLOBALS = """
            bss_first_underflow | global underflow: ring-4 (a global of 32 bytes, defined at first_global.c:{n}) written 4 bytes, 4 bytes before its start, at {BAD} (bss_first_underflow+{n})
            data_first_underflow | global underflow: table-4 (a global of 16 bytes, defined at first_global.c:{n}) read 4 bytes, 4 bytes before its start, at {BAD} (data_first_underflow+{n})
            rodata_first_underflow | global underflow: limits-4 (a global of 16 bytes, defined at first_global.c:{n}) read 4 bytes, 4 bytes before its start, at {BAD} (rodata_first_underflow+{n})
            """;

    @ParameterizedTest
    @ValueSource(strings = {"O0", "O2"})
    void anUnderflowOfTheFirstGlobalOfASectionIsReported(String level) throws Exception {
        Path source = Files.exists(dir.resolve("first_global.c")) ? dir.resolve("first_global.c") : CheckBuilds.fixture(dir, "first_global.c");
        CheckBuilds.build(dir, false, true, "-" + level, "-g", "-o", "first-" + level, "first_global.c");
        check("./first-" + level, source, FIRST_GLOBALS, level);
    }

    /** The cases whose fortified build (-D_FORTIFY_SOURCE=2 -O2) calls glibc's _chk functions instead of the plain ones. */
    static final List<String> FORTIFIED = List.of("strncpy_overflow", "strcpy_overread", "printf_overread", "snprintf_overflow",
            "strcpy_underread", "strncpy_underread", "wprintf_after_free", "swprintf_overflow");

    /**
     * _FORTIFY_SOURCE=2: the program calls __strcpy_chk, __fprintf_chk, __snprintf_chk, __swprintf_chk, ...; each
     * is checked as its plain form and reported by that form's name at the caller's line, with the very report of
     * the plain build; every other case still finds its kind; every twin is silent.
     */
    @Test
    void fortifiedBuildsAreCheckedAsThePlainOnes() throws Exception {
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-D_FORTIFY_SOURCE=2", "-o", "c-fortify", "recall.c");
        Process nm = new ProcessBuilder("nm", "-D", dir.resolve("c-fortify").toString()).start();
        String symbols = new String(nm.getInputStream().readAllBytes());
        assertThat(nm.waitFor()).isZero();
        for (String f : List.of("__strcpy_chk", "__strncpy_chk", "__fprintf_chk", "__snprintf_chk", "__fwprintf_chk", "__swprintf_chk")) {
            assertThat(symbols).containsPattern(" U " + f + "(@|\n)");
        }
        Map<String, String> all = parse(C_CASES);
        Map<String, String> fortified = new LinkedHashMap<>();
        FORTIFIED.forEach(c -> fortified.put(c, all.get(c)));
        check("./c-fortify", cSource, fortified, "fortify", false);
        List<String> failures = new ArrayList<>();
        for (var c : all.entrySet()) {
            String kind = c.getValue().substring(0, c.getValue().indexOf(':'));
            CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), "./c-fortify", c.getKey(), "bad");
            if (!bad.stderr().startsWith("memtrace: " + kind + ": ")) failures.add(c.getKey() + ": " + bad.stderr());
            CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), "./c-fortify", c.getKey(), "good");
            if (!good.stderr().isEmpty() || good.status() != 0) failures.add("twin of " + c.getKey() + ": " + good.stderr());
        }
        assertThat(failures).isEmpty();
    }

    /** ASan's words for a bug (gcc 12's libasan), and the kinds memtrace reports for them. */
    static final Map<String, String> ASAN_KINDS = Map.ofEntries(
            Map.entry("heap-buffer-overflow", "heap (overflow|underflow)"), Map.entry("heap-use-after-free", "use after free"),
            Map.entry("attempting double-free", "double free"), Map.entry("not malloc()-ed", "invalid free"),
            Map.entry("alloc-dealloc-mismatch", "allocator mismatch"), Map.entry("stack-buffer-overflow", "stack overflow"),
            Map.entry("stack-buffer-underflow", "stack underflow"), Map.entry("dynamic-stack-buffer-overflow", "stack overflow"),
            Map.entry("stack-use-after-scope", "stack use after scope"),
            Map.entry("global-buffer-overflow", "global (overflow|underflow)"), Map.entry("SEGV on unknown address 0x0000000000", "null dereference"),
            Map.entry("detected memory leaks", "leak"), Map.entry("strcat-param-overlap", "overlapping copy"));

    /**
     * gcc -fsanitize=address -O0 on the same programs: every bug ASan reports (all but the wcscpy, wcsncpy,
     * wmemset and swprintf overflows and the use after free by fwprintf, which its libasan does not intercept,
     * a free of a string literal, which it reports as a SEGV in free, and the use after return, its fake stacks being
     * off by default), memtrace reports with the
     * corresponding kind; and more.
     */
    @Test
    void whatAddressSanitizerFindsMemtraceFindsWithTheSameKind() throws Exception {
        Gcc.run(List.of("gcc", "-O0", "-g", "-fsanitize=address", "-o", dir.resolve("c-asan").toString(), cSource.toString()));
        Gcc.run(List.of("g++", "-O0", "-g", "-fsanitize=address", "-o", dir.resolve("cxx-asan").toString(), cxxSource.toString()));
        int asanFound = 0, oursFound = 0, cases = 0;
        List<String> failures = new ArrayList<>();
        for (String lang : List.of("c", "cxx")) {
            for (String c : parse(lang.equals("c") ? C_CASES : CXX_CASES).keySet()) {
                cases++;
                CheckBuilds.Run asan = CheckBuilds.run(dir, Map.of(), "./" + lang + "-asan", c, "bad");
                CheckBuilds.Run ours = CheckBuilds.run(dir, Map.of(), "./" + lang + "-O0", c, "bad");
                if (ours.stderr().startsWith("memtrace: ")) oursFound++;
                String asanKind = ASAN_KINDS.keySet().stream().filter(asan.stderr()::contains).findFirst().orElse(null);
                if (asanKind == null) continue;
                asanFound++;
                if (!Pattern.compile("^memtrace: (" + ASAN_KINDS.get(asanKind) + "): ").matcher(ours.stderr()).find()) {
                    failures.add(c + ": ASan says " + asanKind + ", memtrace " + ours.stderr().lines().findFirst().orElse(""));
                }
            }
        }
        assertThat(failures).isEmpty();
        assertThat(oursFound).isEqualTo(cases);
        assertThat(asanFound).isEqualTo(cases - 7);
    }

    /** The JSON record of every bug, by the grammar of docs/check.md, and its kind as the line's. */
    @Test
    void everyReportHasAValidJsonRecord() throws Exception {
        for (String lang : List.of("c", "cxx")) {
            for (String c : parse(lang.equals("c") ? C_CASES : CXX_CASES).keySet()) {
                Path json = dir.resolve(lang + "-" + c + ".json");
                CheckBuilds.Run r = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_JSON", json.toString()), "./" + lang + "-O0", c, "bad");
                List<JsonNode> records = CheckJson.records(Files.readString(json));
                assertThat(records).as(c).isNotEmpty();
                String kind = records.getFirst().get("kind").asText().replace('-', ' ');
                String line = r.stderr().lines().findFirst().orElse("").replace("overlapping copy", "overlap");
                assertThat(line).as(c).startsWith("memtrace: " + kind + ": ");
            }
        }
    }

    @Test
    void templatesBecomeRegexes() {
        assertThat(regex("a+{n} by {x|y}, at {BAD}", "f.c:3")).isEqualTo("\\Qa+\\E\\d+\\Q by \\E(\\Qx\\E|\\Qy\\E)\\Q, at \\E\\Qf.c:3\\E\\Q\\E");
    }

    private void check(String binary, Path source, String table, String level) throws Exception {
        check(binary, source, parse(table), level, true);
    }

    private void check(String binary, Path source, Map<String, String> cases, String level, boolean every) throws Exception {
        CheckBuilds.Run list = CheckBuilds.run(dir, Map.of(), binary, "list");
        if (every) {
            assertThat(list.stdout().lines().toList()).as("every case of the program has an expected report")
                    .containsExactlyElementsOf(cases.keySet());
        }
        String file = source.getFileName().toString();
        List<String> failures = new ArrayList<>();
        for (var c : cases.entrySet()) {
            String name = c.getKey();
            boolean leak = name.startsWith("leak");
            String want = "memtrace: " + regex(c.getValue(), leak ? "" : file + ":" + CheckBuilds.line(source, "BAD:" + name))
                    + (leak ? "" : ", thread \\d+");
            CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), binary, name, "bad");
            String first = bad.stderr().lines().findFirst().orElse("");
            if (!first.matches(want) || bad.status() != (leak ? 23 : 1)) {
                failures.add(level + " " + name + ": status " + bad.status() + ", got\n  " + first + "\nwanted\n  " + want);
            }
            CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), binary, name, "good");
            if (!good.stderr().isEmpty() || good.status() != 0 || !good.stdout().equals("done\n")) {
                failures.add(level + " twin of " + name + ": status " + good.status() + ", " + good.stdout() + good.stderr());
            }
        }
        assertThat(failures).isEmpty();
    }

    /** A case table: NAME | expected report, one per line. */
    static Map<String, String> parse(String table) {
        Map<String, String> cases = new LinkedHashMap<>();
        for (String line : table.strip().split("\n")) {
            int bar = line.indexOf(" | ");
            cases.put(line.substring(0, bar).strip(), line.substring(bar + 3).strip());
        }
        return cases;
    }

    private static final Pattern TOKEN = Pattern.compile("\\{([^}]*)\\}");

    /** The template as a regex: {n} a number, {BAD} the marker's file:line, {a|b} either, the rest literal. */
    static String regex(String template, String bad) {
        StringBuilder out = new StringBuilder();
        Matcher m = TOKEN.matcher(template);
        int last = 0;
        while (m.find()) {
            out.append(Pattern.quote(template.substring(last, m.start())));
            String t = m.group(1);
            if (t.equals("n")) {
                out.append("\\d+");
            } else if (t.equals("BAD")) {
                out.append(Pattern.quote(bad));
            } else {
                List<String> alts = new ArrayList<>();
                for (String a : t.split("\\|", -1)) alts.add(Pattern.quote(a));
                out.append("(").append(String.join("|", alts)).append(")");
            }
            last = m.end();
        }
        return out.append(Pattern.quote(template.substring(last))).toString();
    }
}
