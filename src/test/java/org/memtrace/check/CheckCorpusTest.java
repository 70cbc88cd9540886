package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Cli;

/**
 * The bug corpus of src/test/resources/c/check/corpus (docs/check.md, "The corpus"): small programs in the style
 * of the public suites (Juliet's bad()/good() pairs, each case its own translation unit with its own globals,
 * linked with a driver and an io helper as Juliet's are), C and C++, built once per level (-O0 -g, -O2 -g) as one
 * program per language. Under {@code memtrace cc --check} every bad case stops with exactly the expected first
 * report (kind, object, offset, distance, access, line) and status 1 (23 for a leak); under
 * {@code memtrace run --check} on the plain gcc build, every heap-class case gives its kind and object. Every
 * twin is silent, exits 0 and prints what the plain build prints: under cc --check one run per twin, under
 * run --check all twins of a build in one run ({@code corpus all good}). bench/check-corpus.sh runs the same
 * corpus under ASan and memcheck too and counts (bench/results/check-corpus.md).
 *
 * <p>Templates as CheckRecallTest's: {@code {n}} a number, {@code {BAD}} the file:line of the case's
 * {@code / * BAD * /} marker, {@code {a|b}} where -O0 and -O2 differ (gcc inlines helpers at -O2), and here
 * {@code {M}} the module (run --check names code module+offset).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckCorpusTest {
    /** cc --check: the first report of each C case. */
    static final String C_CHECK = """
            double_free_alias | double free: free of <freed:0001@{run|double_free_alias_bad}+{n}>+0 (a block of 80 bytes, allocated at double_free_alias.c:{n}, freed at double_free_alias.c:{n}), at {BAD} ({run|double_free_alias_bad}+{n})
            double_free_error_path | double free: free of <freed:0001@parse+{n}>+0 (a block of 9 bytes, allocated at double_free_error_path.c:{n}, freed at double_free_error_path.c:{n}), at {BAD} (parse+{n})
            double_free_simple | double free: free of <freed:0001@double_free_simple_bad+{n}>+0 (a block of 100 bytes, allocated at double_free_simple.c:{n}, freed at double_free_simple.c:{n}), at {BAD} (double_free_simple_bad+{n})
            free_alloca | invalid free: free of <stack:alloca>+0 (an alloca of 64 bytes), at {BAD} (run+{n})
            free_global_array | invalid free: free of slots+0 (a global of 128 bytes, defined at free_global_array.c:{n}), at {BAD} ({run|free_global_array_bad}+{n})
            free_middle | invalid free: free of <malloc0001@run+{n}>+3 (a block of 32 bytes, allocated at free_middle.c:{n}), at {BAD} (run+{n})
            free_stack_array | invalid free: free of <stack:dataBuffer@{run|free_stack_array_bad}>+0 (a variable of 100 bytes, declared at line {n} of {run|free_stack_array_bad}), at {BAD} ({run|free_stack_array_bad}+{n})
            free_string_literal | invalid free: free of "anonymous-user"+0 (a string literal of 15 bytes), at {BAD} ({run|free_string_literal_bad}+{n})
            global_loop_overflow | global overflow: global_counts+40 (a global of 40 bytes, defined at global_loop_overflow.c:{n}) written 4 bytes{| by the loop}, 0 bytes past its end, at {BAD} ({fill|global_loop_overflow_bad}+{n})
            global_memset_overflow | global overflow: current+24 (a global of 24 bytes, defined at global_memset_overflow.c:{n}) written 25 bytes by memset, 0 bytes past its end, at {BAD} ({clear|global_memset_overflow_bad}+{n})
            global_static_local | global overflow: history+64 (a global of 64 bytes, defined at global_static_local.c:{n}) read 2 bytes{| by the loop}, 0 bytes past its end, at {BAD} ({sum|global_static_local_bad}+{n})
            global_strcpy_overflow | global overflow: name_buffer+16 (a global of 16 bytes, defined at global_strcpy_overflow.c:{n}) written 21 bytes by strcpy, 0 bytes past its end, at {BAD} (global_strcpy_overflow_bad+{n})
            global_underread | global underflow: level_table-8 (a global of 64 bytes, defined at global_underread.c:{n}) read 8 bytes, 8 bytes before its start, at {BAD} ({show|global_underread_bad}+{n})
            heap_loop_overflow | heap overflow: <malloc0001@heap_loop_overflow_bad+{n}>+40 (a block of 40 bytes, allocated at heap_loop_overflow.c:{n}) written 4 bytes, 0 bytes past its end, at {BAD} (heap_loop_overflow_bad+{n})
            heap_memcpy_overflow | heap overflow: <malloc0001@heap_memcpy_overflow_bad+{n}>+50 (a block of 50 bytes, allocated at heap_memcpy_overflow.c:{n}) written 100 bytes, 0 bytes past its end, at {BAD} (heap_memcpy_overflow_bad+{n})
            heap_overread | heap overflow: <malloc0001@heap_overread_bad+{n}>+50 (a block of 50 bytes, allocated at heap_overread.c:{n}) read 99 bytes by memcpy, 0 bytes past its end, at {BAD} (heap_overread_bad+{n})
            heap_ptr_walk | heap overflow: <malloc0001@heap_ptr_walk_bad+{n}>+50 (a block of 50 bytes, allocated at heap_ptr_walk.c:{n}) written 1 byte{| by the loop}, 0 bytes past its end, at {BAD} (heap_ptr_walk_bad+{n})
            heap_sizeof_pointer | heap overflow: <malloc0001@{fill|heap_sizeof_pointer_bad}+{n}>+10{|..+39} (a block of 10 bytes, allocated at heap_sizeof_pointer.c:{n}) written 4 bytes{| at a time by the loop}, 0{|..29} bytes past its end, at {BAD} ({fill|heap_sizeof_pointer_bad}+{n})
            heap_snprintf_size | heap overflow: <malloc0001@format+{n}>+20 (a block of 20 bytes, allocated at heap_snprintf_size.c:{n}) written 100 bytes by snprintf, 0 bytes past its end, at {BAD} (format+{n})
            heap_sprintf_overflow | heap overflow: <malloc0001@heap_sprintf_overflow_bad+{n}>+16 (a block of 16 bytes, allocated at heap_sprintf_overflow.c:{n}) written 22 bytes by sprintf, 0 bytes past its end, at {BAD} (heap_sprintf_overflow_bad+{n})
            heap_strcat_overflow | heap overflow: <malloc0001@{append|heap_strcat_overflow_bad}+{n}>+50 (a block of 50 bytes, allocated at heap_strcat_overflow.c:{n}) written 100 bytes by strcat, 0 bytes past its end, at {BAD} ({append|heap_strcat_overflow_bad}+{n})
            heap_strcpy_nul | heap overflow: <malloc0001@heap_strcpy_nul_bad+{n}>+10 (a block of 10 bytes, allocated at heap_strcpy_nul.c:{n}) written 11 bytes by strcpy, 0 bytes past its end, at {BAD} (heap_strcpy_nul_bad+{n})
            heap_strncpy_overflow | heap overflow: <malloc0001@heap_strncpy_overflow_bad+{n}>+50 (a block of 50 bytes, allocated at heap_strncpy_overflow.c:{n}) written 100 bytes by strncpy, 0 bytes past its end, at {BAD} (heap_strncpy_overflow_bad+{n})
            heap_struct_array | heap overflow: <malloc0001@{fill|heap_struct_array_bad}+{n}>+80{|..+87} (a block of 80 bytes, allocated at heap_struct_array.c:{n}) written 4 bytes{| by the loop| at a time by the loop}, {0|0..7} bytes past its end, at {BAD} ({fill|heap_struct_array_bad}+{n})
            heap_underread | heap underflow: <malloc0001@read_at+{n}>-8 (a block of 100 bytes, allocated at heap_underread.c:{n}) read 100 bytes, 8 bytes before its start, at {BAD} (read_at+{n})
            heap_underwrite | heap underflow: <malloc0001@{write_at|heap_underwrite_bad}+{n}>-8 (a block of 100 bytes, allocated at heap_underwrite.c:{n}) written 1 byte, 8 bytes before its start, at {BAD} ({write_at|heap_underwrite_bad}+{n})
            heap_wcsncpy_overflow | heap overflow: <malloc0001@copy+{n}>+200 (a block of 200 bytes, allocated at heap_wcsncpy_overflow.c:{n}) written 396 bytes by wcsncpy, 0 bytes past its end, at {BAD} (copy+{n})
            leak_early_return | leak: <malloc0001@{parse|leak_early_return_bad}+{n}> (a block of 6 bytes, allocated at leak_early_return.c:{n}) unreachable at exit
            leak_list | leak: <malloc0001@run+{n}> (a block of 16 bytes, allocated at leak_list.c:{n}) unreachable at exit, with 2 more blocks from the same call, 48 bytes in all
            leak_lost_pointer | leak: <malloc0001@run+{n}> (a block of 100 bytes, allocated at leak_lost_pointer.c:{n}) unreachable at exit
            null_check_after | null dereference: NULL+0 (the page at address 0, never mapped) written 4 bytes, at {BAD} ({run|null_check_after_bad}+{n})
            null_strlen | null dereference: NULL+0 (the page at address 0, never mapped) read 1 byte by strlen, at {BAD} (null_strlen_bad+{n})
            null_struct_field | null dereference: NULL+8 (the page at address 0, never mapped) read 8 bytes, at {BAD} ({show|null_struct_field_bad.cold}+{n})
            realloc_shrink | heap overflow: <realloc0002@shrink+{n}>+16 (a block of 16 bytes, allocated at realloc_shrink.c:{n}) written 64 bytes by memset, 0 bytes past its end, at {BAD} (shrink+{n})
            stack_alloca_overflow | stack overflow: <stack:alloca>+50 (an alloca of 50 bytes) written 100 bytes, 0 bytes past its end, at {BAD} (copy+{n})
            stack_index_overflow | stack overflow: <stack:buffer@{put|stack_index_overflow_bad}>+40 (a variable of 40 bytes, declared at line {n} of {put|stack_index_overflow_bad}) written 4 bytes, 0 bytes past its end, at {BAD} ({put|stack_index_overflow_bad}+{n})
            stack_loop_overflow | stack overflow: <stack:buffer@{fill|stack_loop_overflow_bad}>+40 (a variable of 40 bytes, declared at line {n} of {fill|stack_loop_overflow_bad}) written 4 bytes, 0 bytes past its end, at {BAD} ({fill|stack_loop_overflow_bad}+{n})
            stack_memcpy_overflow | stack overflow: <stack:dataBuffer@stack_memcpy_overflow_bad>+50 (a variable of 50 bytes, declared at line {n} of stack_memcpy_overflow_bad) written 100 bytes, 0 bytes past its end, at {BAD} (stack_memcpy_overflow_bad+{n})
            stack_overread | stack overflow: <stack:source@{copy|stack_overread_bad}>+50 (a variable of 50 bytes, declared at line {n} of {copy|stack_overread_bad}) read 99 bytes by memcpy, 0 bytes past its end, at {BAD} ({copy|stack_overread_bad}+{n})
            stack_sprintf_overflow | stack overflow: <stack:line@stack_sprintf_overflow_bad>+8 (a variable of 8 bytes, declared at line {n} of stack_sprintf_overflow_bad) written 15 bytes by sprintf, 0 bytes past its end, at {BAD} (stack_sprintf_overflow_bad+{n})
            stack_strcpy_overflow | stack overflow: <stack:dest@stack_strcpy_overflow_bad>+10 (a variable of 10 bytes, declared at line {n} of stack_strcpy_overflow_bad) written 11 bytes by strcpy, 0 bytes past its end, at {BAD} (stack_strcpy_overflow_bad+{n})
            stack_strncat_overflow | stack overflow: <stack:dest@stack_strncat_overflow_bad>+50 (a variable of 50 bytes, declared at line {n} of stack_strncat_overflow_bad) written 100 bytes by strncat, 0 bytes past its end, at {BAD} (stack_strncat_overflow_bad+{n})
            stack_struct_field | stack overflow: <stack:r@{fill|stack_struct_field_bad}>+36 (a variable of 36 bytes, declared at line {n} of {fill|stack_struct_field_bad}) written 4 bytes{| by the loop}, 0 bytes past its end, at {BAD} ({fill|stack_struct_field_bad}+{n})
            stack_underread | stack underflow: <stack:table@lookup>-4 (a variable of 64 bytes, declared at line {n} of lookup) read 4 bytes, 4 bytes before its start, at {BAD} (lookup+{n})
            stack_underwrite | stack underflow: <stack:dataBuffer@{write_at|stack_underwrite_bad}>-8 (a variable of 100 bytes, declared at line {n} of {write_at|stack_underwrite_bad}) written 100 bytes by strcpy, 8 bytes before its start, at {BAD} ({write_at|stack_underwrite_bad}+{n})
            stack_use_after_return@O0 | stack use after return: <stack:local@make>+8 (a variable of 16 bytes, declared at line {n} of make) read 4 bytes, at {BAD} (use+{n})
            stack_use_after_return@O2 | stack use after scope: <stack:local@use>+8 (a variable of 16 bytes, declared at line {n} of use) read 4 bytes, at {BAD} (use+{n})
            stack_use_after_scope | stack use after scope: <stack:inner@{scope|stack_use_after_scope_bad}>+12 (a variable of 32 bytes, declared at line {n} of {scope|stack_use_after_scope_bad}) read 4 bytes, at {BAD} ({scope|stack_use_after_scope_bad}+{n})
            stack_vla_aligned | stack overflow: <stack:alloca>+32 (an alloca of 32 bytes) written 4 bytes, 0 bytes past its end, at {BAD} ({fill|stack_vla_aligned_bad}+{n})
            stack_vla_overflow | stack overflow: <stack:alloca>+48 (an alloca of 48 bytes) written 4 bytes, 0 bytes past its end, at {BAD} ({fill|stack_vla_overflow_bad}+{n})
            uaf_alias_write | use after free: <freed:0001@run+{n}>+8 (a block of 16 bytes, allocated at uaf_alias_write.c:{n}, freed at uaf_alias_write.c:{n}) read 8 bytes, at {BAD} (run+{n})
            uaf_list_next | use after free: <freed:0005@{build|uaf_list_next_bad}+{n}>+0 (a block of 16 bytes, allocated at uaf_list_next.c:{n}, freed at uaf_list_next.c:{n}) read 8 bytes, at {BAD} (uaf_list_next_bad+{n})
            uaf_memcpy | use after free: <freed:0001@run+{n}>+0 (a block of 64 bytes, allocated at uaf_memcpy.c:{n}, freed at uaf_memcpy.c:{n}) read 64 bytes, at {BAD} (run+{n})
            uaf_printf | use after free: <freed:0001@uaf_printf_bad+{n}>+0 (a block of 32 bytes, allocated at uaf_printf.c:{n}, freed at uaf_printf.c:{n}) read 1 byte by printf, at {BAD} (uaf_printf_bad+{n})
            uaf_read | use after free: <freed:0001@uaf_read_bad+{n}>+0 (a block of 400 bytes, allocated at uaf_read.c:{n}, freed at uaf_read.c:{n}) read 4 bytes, at {BAD} (uaf_read_bad+{n})
            uaf_realloc_stale | use after free: <freed:0001@grow+{n}>+4 (a block of 16 bytes, allocated at uaf_realloc_stale.c:{n}, freed at uaf_realloc_stale.c:{n}) read 4 bytes, at {BAD} (grow+{n})
            """;

    /** cc --check: the first report of each C++ case. */
    static final String CXX_CHECK = """
            cxx_delete_stack | invalid free: delete of <stack:local@cxx_delete_stack::run(bool)>+0 (a variable of 16 bytes, declared at line {n} of cxx_delete_stack::run(bool)), at {BAD} (cxx_delete_stack::run(bool)+{n})
            cxx_delete_static | invalid free: delete[] of names+0 (a global of 64 bytes, defined at cxx_delete_static.cc:{n}), at {BAD} (cxx_delete_static::run(bool)+{n})
            cxx_double_delete | double free: delete[] of <freed:0002@{cxx_double_delete::text::text|cxx_double_delete::run}({char const*|bool})+{n}>+0 (a block of 7 bytes, allocated at cxx_double_delete.cc:{n}, freed at cxx_double_delete.cc:{n}), at {BAD} ({cxx_double_delete::text::~text|cxx_double_delete::run}({|bool})+{n})
            cxx_leak_member | leak: <new[]{0003|0002}@{cxx_leak_member::holder::holder|cxx_leak_member::run}({unsigned long|bool})+{n}> (a block of 64 bytes, allocated at cxx_leak_member.cc:{n}) unreachable at exit
            cxx_malloc_delete | allocator mismatch: delete[] of <malloc0002@cxx_malloc_delete::bad()+{n}>+0 (a block of 100 bytes, allocated at cxx_malloc_delete.cc:{n}, from malloc), at {BAD} (cxx_malloc_delete::bad()+{n})
            cxx_new_array_delete | allocator mismatch: delete of <new[]0002@cxx_new_array_delete::bad()+{n}>+0 (a block of 80 bytes, allocated at cxx_new_array_delete.cc:{n}, from new[]), at {BAD} (cxx_new_array_delete::bad()+{n})
            cxx_new_array_overflow | heap overflow: <new[]0002@cxx_new_array_overflow::fill(unsigned long, unsigned long)+{n}>+40 (a block of 40 bytes, allocated at cxx_new_array_overflow.cc:{n}) written 2 bytes{| by the loop}, 0 bytes past its end, at {BAD} (cxx_new_array_overflow::fill(unsigned long, unsigned long)+{n})
            cxx_new_delete_array | allocator mismatch: delete[] of <new0002@cxx_new_delete_array::bad()+{n}>+0 (a block of 4 bytes, allocated at cxx_new_delete_array.cc:{n}, from new), at {BAD} (cxx_new_delete_array::bad()+{n})
            cxx_new_free | allocator mismatch: free of <new0002@cxx_new_free::bad()+{n}>+0 (a block of 16 bytes, allocated at cxx_new_free.cc:{n}, from new), at {BAD} (cxx_new_free::bad()+{n})
            cxx_stack_array_member | stack overflow: <stack:p@{cxx_stack_array_member::fill|cxx_stack_array_member::bad}({unsigned long|})>+20{|..+24} (a variable of 20 bytes, declared at line {n} of {cxx_stack_array_member::fill|cxx_stack_array_member::bad}({unsigned long|})) written 1 byte{| at a time by the loop}, 0{|..4} bytes past its end, at {BAD} ({cxx_stack_array_member::fill|cxx_stack_array_member::bad}({unsigned long|})+{n})
            cxx_string_copy | heap overflow: <new[]0003@cxx_string_copy::run(unsigned long)+{n}>+23 (a block of 23 bytes, allocated at cxx_string_copy.cc:{n}) written 24 bytes by strcpy, 0 bytes past its end, at {BAD} (cxx_string_copy::run(unsigned long)+{n})
            cxx_uaf_iterator | use after free: <freed:0002@{any}>+0 (a block of 32 bytes, allocated at {any}, freed at {any}) read 8 bytes, at {BAD} (cxx_uaf_iterator::run(bool)+{n})
            cxx_use_after_delete@O0 | use after free: <freed:0002@cxx_use_after_delete::bad()+{n}>+0 (a block of 8 bytes, allocated at cxx_use_after_delete.cc:{n}, freed at cxx_use_after_delete.cc:{n}) read 8 bytes, at {BAD} (cxx_use_after_delete::counter::add(long)+{n})
            cxx_use_after_delete@O2 | -
            cxx_vector_index | heap overflow: <new0002@{any}>+40 (a block of 40 bytes, allocated at {any}) written 4 bytes, 0 bytes past its end, at {BAD} (cxx_vector_index::run(unsigned long)+{n})
            """;

    /**
     * run --check on the plain build: the cases it finds (the others it is not expected to find: docs/check.md).
     * heap_overread at -O2 is gcc's inline `rep movsq` (the whole range it copies is checked: 12 quads); a null
     * dereference is said as ASan says a SEGV, then the program dies of the signal as natively (status 139), as does a
     * ret through a return address an overflow overwrote (-O0's stack smashes); globals by the executable's symbols,
     * asked for with MEMTRACE_CHECK=globals (at -O2 history[32] is read through a loop cursor one past the array, which is not checked);
     * stack variables from the -O0 build's DWARF, by memcpy, strcpy, strncat and sprintf (-O2 keeps no frame pointer: none).
     */
    static final String RUN_CHECK = """
            double_free_alias@O0 | double free: free of <freed:0001@run+{n}>+0 (a block of 80 bytes, allocated at double_free_alias.c:13, freed at double_free_alias.c:8), at double_free_alias.c:17 (run+{n})
            double_free_alias@O2 | double free: free of <freed:0001@double_free_alias_bad+{n}>+0 (a block of 80 bytes, allocated at double_free_alias.c:13, freed at double_free_alias.c:8), at main.c:31 (main+{n})
            double_free_error_path | double free: free of <freed:0001@parse+{n}>+0 (a block of 9 bytes, allocated at double_free_error_path.c:8, freed at double_free_error_path.c:12), at double_free_error_path.c:18 (parse+{n})
            double_free_simple@O0 | double free: free of <freed:0001@double_free_simple_bad+{n}>+0 (a block of 100 bytes, allocated at double_free_simple.c:7, freed at double_free_simple.c:10), at double_free_simple.c:11 (double_free_simple_bad+{n})
            double_free_simple@O2 | double free: free of <freed:0001@double_free_simple_bad+{n}>+0 (a block of 100 bytes, allocated at double_free_simple.c:7, freed at double_free_simple.c:10), at main.c:31 (main+{n})
            free_alloca | invalid free: free of <stack> (memory on the stack of thread {n}), at free_alloca.c:13 (run+{n})
            free_global_array@O0 | invalid free: free of 0x{any} (not memory this allocator gave out), at free_global_array.c:12 (run+{n})
            free_global_array@O2 | invalid free: free of 0x{any} (not memory this allocator gave out), at main.c:31 (main+{n})
            free_middle@O0 | invalid free: free of <malloc0001@run+{n}>+3 (a block of 32 bytes, allocated at free_middle.c:8), at free_middle.c:13 (run+{n})
            free_middle@O2 | invalid free: free of <malloc0001@run+{n}>+3 (a block of 32 bytes, allocated at free_middle.c:8), at main.c:31 (main+{n})
            free_stack_array@O0 | invalid free: free of <stack> (memory on the stack of thread {n}), at free_stack_array.c:13 (run+{n})
            free_stack_array@O2 | invalid free: free of <stack> (memory on the stack of thread {n}), at free_stack_array.c:13 (free_stack_array_bad+{n})
            free_string_literal@O0 | invalid free: free of 0x{any} (not memory this allocator gave out), at free_string_literal.c:16 (run+{n})
            free_string_literal@O2 | invalid free: free of 0x{any} (not memory this allocator gave out), at main.c:31 (main+{n})
            global_loop_overflow@O0 | global overflow: global_counts+40 (a global of 40 bytes) written 4 bytes, 0 bytes past its end, at global_loop_overflow.c:8 (fill+{n})
            global_loop_overflow@O2 | global overflow: global_counts+40 (a global of 40 bytes) written 4 bytes, 0 bytes past its end, at global_loop_overflow.c:8 (global_loop_overflow_bad+{n})
            global_memset_overflow@O0 | global overflow: current+24 (a global of 24 bytes) written 25 bytes by memset, 0 bytes past its end, at global_memset_overflow.c:10 (clear+{n})
            global_memset_overflow@O2 | global overflow: current+24 (a global of 24 bytes) written 25 bytes by memset, 0 bytes past its end, at global_memset_overflow.c:10 (global_memset_overflow_bad+{n})
            global_static_local@O0 | global overflow: history+64 (a global of 64 bytes) read 2 bytes, 0 bytes past its end, at global_static_local.c:9 (sum+{n})
            global_strcpy_overflow | global overflow: name_buffer+16 (a global of 16 bytes) written 16 bytes, 0 bytes past its end, at libc.so.6+{n}
            global_underread@O0 | global underflow: level_table-8 (a global of 64 bytes) read 8 bytes, 8 bytes before its start, at global_underread.c:10 (show+{n})
            global_underread@O2 | global underflow: level_table-8 (a global of 64 bytes) read 8 bytes, 8 bytes before its start, at global_underread.c:10 (global_underread_bad+{n})
            heap_loop_overflow | heap overflow: <malloc0001@heap_loop_overflow_bad+{n}>+40 (a block of 40 bytes, allocated at heap_loop_overflow.c:7) written 4 bytes, 0 bytes past its end, at heap_loop_overflow.c:8 (heap_loop_overflow_bad+{n})
            heap_memcpy_overflow@O0 | heap overflow: <malloc0001@heap_memcpy_overflow_bad+{n}>+50 (a block of 50 bytes, allocated at heap_memcpy_overflow.c:8) written 8 bytes, 0 bytes past its end, at heap_memcpy_overflow.c:12 (heap_memcpy_overflow_bad+{n})
            heap_memcpy_overflow@O2 | heap overflow: <malloc0001@heap_memcpy_overflow_bad+{n}>+50 (a block of 50 bytes, allocated at heap_memcpy_overflow.c:8) written 16 bytes, 0 bytes past its end, at heap_memcpy_overflow.c:12 (heap_memcpy_overflow_bad+{n})
            heap_overread@O0 | heap overflow: <malloc0001@heap_overread_bad+{n}>+50 (a block of 50 bytes, allocated at heap_overread.c:8) read 99 bytes by memcpy, 0 bytes past its end, at heap_overread.c:14 (heap_overread_bad+{n})
            heap_overread@O2 | heap overflow: <malloc0001@heap_overread_bad+{n}>+50 (a block of 50 bytes, allocated at heap_overread.c:8) read 96 bytes, 0 bytes past its end, at heap_overread.c:14 (heap_overread_bad+{n})
            heap_ptr_walk@O0 | heap overflow: <malloc0001@heap_ptr_walk_bad+{n}>+50 (a block of 50 bytes, allocated at heap_ptr_walk.c:8) written 1 byte, 0 bytes past its end, at heap_ptr_walk.c:9 (heap_ptr_walk_bad+{n})
            heap_ptr_walk@O2 | heap overflow: <malloc0001@heap_ptr_walk_bad+{n}>+50 (a block of 50 bytes, allocated at heap_ptr_walk.c:8) written 51 bytes by memset, 0 bytes past its end, at heap_ptr_walk.c:9 (heap_ptr_walk_bad+{n})
            heap_sizeof_pointer@O0 | heap overflow: <malloc0001@fill+{n}>+10 (a block of 10 bytes, allocated at heap_sizeof_pointer.c:7) written 4 bytes, 0 bytes past its end, at heap_sizeof_pointer.c:8 (fill+{n})
            heap_sizeof_pointer@O2 | heap overflow: <malloc0001@heap_sizeof_pointer_bad+{n}>+32 (a block of 10 bytes, allocated at heap_sizeof_pointer.c:7) written 8 bytes, 22 bytes past its end, at heap_sizeof_pointer.c:8 (heap_sizeof_pointer_bad+{n})
            heap_snprintf_size | heap overflow: <malloc0001@format+{n}>+20 (a block of 20 bytes, allocated at heap_snprintf_size.c:9) written 64 bytes, 0 bytes past its end, at libc.so.6+{n}
            heap_sprintf_overflow | heap overflow: <malloc0001@heap_sprintf_overflow_bad+{n}>+16 (a block of 16 bytes, allocated at heap_sprintf_overflow.c:8) written 1 byte, 0 bytes past its end, at _IO_default_xsputn+{n}
            heap_strcat_overflow@O0 | heap overflow: <malloc0001@append+{n}>+50 (a block of 50 bytes, allocated at heap_strcat_overflow.c:8) written 32 bytes, 0 bytes past its end, at libc.so.6+{n}
            heap_strcat_overflow@O2 | heap overflow: <malloc0001@heap_strcat_overflow_bad+{n}>+50 (a block of 50 bytes, allocated at heap_strcat_overflow.c:8) written 32 bytes, 0 bytes past its end, at libc.so.6+{n}
            heap_strcpy_nul | heap overflow: <malloc0001@heap_strcpy_nul_bad+{n}>+10 (a block of 10 bytes, allocated at heap_strcpy_nul.c:10) written 8 bytes, 0 bytes past its end, at libc.so.6+{n}
            heap_strncpy_overflow | heap overflow: <malloc0001@heap_strncpy_overflow_bad+{n}>+50 (a block of 50 bytes, allocated at heap_strncpy_overflow.c:8) written 32 bytes, 0 bytes past its end, at libc.so.6+{n}
            heap_struct_array@O0 | heap overflow: <malloc0001@fill+{n}>+80 (a block of 80 bytes, allocated at heap_struct_array.c:9) written 4 bytes, 0 bytes past its end, at heap_struct_array.c:11 (fill+{n})
            heap_struct_array@O2 | heap overflow: <malloc0001@heap_struct_array_bad+{n}>+80 (a block of 80 bytes, allocated at heap_struct_array.c:9) written 4 bytes, 0 bytes past its end, at heap_struct_array.c:11 (heap_struct_array_bad+{n})
            heap_underread@O0 | heap underflow: <malloc0001@read_at+{n}>-8 (a block of 100 bytes, allocated at heap_underread.c:8) read 8 bytes, 8 bytes before its start, at heap_underread.c:13 (read_at+{n})
            heap_underread@O2 | heap underflow: <malloc0001@read_at+{n}>-8 (a block of 100 bytes, allocated at heap_underread.c:8) read 16 bytes, 8 bytes before its start, at heap_underread.c:13 (read_at+{n})
            heap_underwrite@O0 | heap underflow: <malloc0001@write_at+{n}>-8 (a block of 100 bytes, allocated at heap_underwrite.c:8) written 1 byte, 8 bytes before its start, at heap_underwrite.c:12 (write_at+{n})
            heap_underwrite@O2 | heap underflow: <malloc0001@heap_underwrite_bad+{n}>-8 (a block of 100 bytes, allocated at heap_underwrite.c:8) written 1 byte, 8 bytes before its start, at heap_underwrite.c:12 (heap_underwrite_bad+{n})
            heap_wcsncpy_overflow | heap overflow: <malloc0001@copy+{n}>+200 (a block of 200 bytes, allocated at heap_wcsncpy_overflow.c:8) written 64 bytes, 0 bytes past its end, at libc.so.6+{n}
            leak_early_return | leak: <malloc0001@{any}> (a block of 6 bytes, allocated at {any}) unreachable at exit
            leak_list | leak: <malloc0001@run+{n}> (a block of 16 bytes, allocated at leak_list.c:11) unreachable at exit, with 2 more blocks from the same call, 48 bytes in all
            leak_lost_pointer | leak: <malloc0001@run+{n}> (a block of 100 bytes, allocated at leak_lost_pointer.c:8) unreachable at exit
            null_check_after@O0 | null dereference: NULL+0 (the page at address 0, never mapped) written 4 bytes, at null_check_after.c:8 (run+{n})
            null_check_after@O2 | null dereference: NULL+0 (the page at address 0, never mapped) written 4 bytes, at null_check_after.c:8 (null_check_after_bad+{n})
            null_strlen | null dereference: NULL+0 (the page at address 0, never mapped) read {n} bytes, at libc.so.6+{n}
            null_struct_field@O0 | null dereference: NULL+8 (the page at address 0, never mapped) read 8 bytes, at null_struct_field.c:18 (show+{n})
            null_struct_field@O2 | null dereference: NULL+8 (the page at address 0, never mapped) read 8 bytes, at null_struct_field.c:18 (null_struct_field_bad.cold+{n})
            realloc_shrink | heap overflow: <realloc0002@shrink+{n}>+16 (a block of 16 bytes, allocated at realloc_shrink.c:10) written 64 bytes by memset, 0 bytes past its end, at realloc_shrink.c:11 (shrink+{n})
            uaf_alias_write@O0 | use after free: <freed:0001@run+{n}>+8 (a block of 16 bytes, allocated at uaf_alias_write.c:12, freed at uaf_alias_write.c:8) read 8 bytes, at uaf_alias_write.c:17 (run+{n})
            uaf_alias_write@O2 | use after free: <freed:0001@uaf_alias_write_bad+{n}>+8 (a block of 16 bytes, allocated at uaf_alias_write.c:12, freed at uaf_alias_write.c:8) read 8 bytes, at uaf_alias_write.c:17 (uaf_alias_write_bad+{n})
            uaf_list_next@O0 | use after free: <freed:0005@build+{n}>+0 (a block of 16 bytes, allocated at uaf_list_next.c:11, freed at uaf_list_next.c:25) read 8 bytes, at uaf_list_next.c:23 (uaf_list_next_bad+{n})
            uaf_list_next@O2 | use after free: <freed:0005@uaf_list_next_bad+{n}>+0 (a block of 16 bytes, allocated at uaf_list_next.c:11, freed at uaf_list_next.c:25) read 8 bytes, at uaf_list_next.c:23 (uaf_list_next_bad+{n})
            uaf_memcpy@O0 | use after free: <freed:0001@run+{n}>+0 (a block of 64 bytes, allocated at uaf_memcpy.c:14, freed at uaf_memcpy.c:8) read 8 bytes, at uaf_memcpy.c:18 (run+{n})
            uaf_memcpy@O2 | use after free: <freed:0001@run+{n}>+0 (a block of 64 bytes, allocated at uaf_memcpy.c:14, freed at uaf_memcpy.c:8) read 16 bytes, at uaf_memcpy.c:18 (run+{n})
            uaf_printf | use after free: <freed:0001@uaf_printf_bad+{n}>+0 (a block of 32 bytes, allocated at uaf_printf.c:9, freed at uaf_printf.c:11) read 32 bytes, at libc.so.6+{n}
            uaf_read | use after free: <freed:0001@uaf_read_bad+{n}>+0 (a block of 400 bytes, allocated at uaf_read.c:7, freed at uaf_read.c:9) read 4 bytes, at uaf_read.c:10 (uaf_read_bad+{n})
            uaf_realloc_stale | use after free: <freed:0001@grow+{n}>+4 (a block of 16 bytes, allocated at uaf_realloc_stale.c:7, freed at uaf_realloc_stale.c:10) read 4 bytes, at uaf_realloc_stale.c:12 (grow+{n})
            cxx_delete_stack | invalid free: delete of <stack> (memory on the stack of thread {n}), at cxx_delete_stack.cc:13 (cxx_delete_stack::run(bool)+{n})
            cxx_delete_static@O0 | invalid free: delete[] of 0x{any} (not memory this allocator gave out), at cxx_delete_static.cc:14 (cxx_delete_static::run(bool)+{n})
            cxx_delete_static@O2 | invalid free: delete[] of 0x{any} (not memory this allocator gave out), at main.cc:31 (main+{n})
            cxx_double_delete@O0 | double free: delete[] of <freed:0001@cxx_double_delete::text::text(char const*)+{n}>+0 (a block of 7 bytes, allocated at cxx_double_delete.cc:16, freed at cxx_double_delete.cc:18), at cxx_double_delete.cc:18 (cxx_double_delete::text::~text()+{n})
            cxx_double_delete@O2 | double free: delete[] of <freed:0001@cxx_double_delete::run(bool)+{n}>+0 (a block of 7 bytes, allocated at cxx_double_delete.cc:16, freed at cxx_double_delete.cc:18), at main.cc:31 (main+{n})
            cxx_leak_member@O0 | leak: <new[]0002@cxx_leak_member::holder::holder(unsigned long)+{n}> (a block of 64 bytes, allocated at cxx_leak_member.cc:10) unreachable at exit
            cxx_leak_member@O2 | leak: <new[]0001@cxx_leak_member::run(bool)+{n}> (a block of 64 bytes, allocated at cxx_leak_member.cc:10) unreachable at exit
            cxx_malloc_delete@O0 | allocator mismatch: delete[] of <malloc0001@cxx_malloc_delete::bad()+{n}>+0 (a block of 100 bytes, allocated at cxx_malloc_delete.cc:9, from malloc), at cxx_malloc_delete.cc:12 (cxx_malloc_delete::bad()+{n})
            cxx_malloc_delete@O2 | allocator mismatch: delete[] of <malloc0001@cxx_malloc_delete::bad()+{n}>+0 (a block of 100 bytes, allocated at cxx_malloc_delete.cc:9, from malloc), at main.cc:31 (main+{n})
            cxx_new_array_delete@O0 | allocator mismatch: delete of <new[]0001@cxx_new_array_delete::bad()+{n}>+0 (a block of 80 bytes, allocated at cxx_new_array_delete.cc:7, from new[]), at cxx_new_array_delete.cc:10 (cxx_new_array_delete::bad()+{n})
            cxx_new_array_delete@O2 | allocator mismatch: delete of <new[]0001@cxx_new_array_delete::bad()+{n}>+0 (a block of 80 bytes, allocated at cxx_new_array_delete.cc:7, from new[]), at main.cc:31 (main+{n})
            cxx_new_array_overflow | heap overflow: <new[]0001@cxx_new_array_overflow::fill(unsigned long, unsigned long)+{n}>+40 (a block of 40 bytes, allocated at cxx_new_array_overflow.cc:7) written 2 bytes, 0 bytes past its end, at cxx_new_array_overflow.cc:8 (cxx_new_array_overflow::fill(unsigned long, unsigned long)+{n})
            cxx_new_delete_array@O0 | allocator mismatch: delete[] of <new0001@cxx_new_delete_array::bad()+{n}>+0 (a block of 4 bytes, allocated at cxx_new_delete_array.cc:7, from new), at cxx_new_delete_array.cc:9 (cxx_new_delete_array::bad()+{n})
            cxx_new_delete_array@O2 | allocator mismatch: delete[] of <new0001@cxx_new_delete_array::bad()+{n}>+0 (a block of 4 bytes, allocated at cxx_new_delete_array.cc:7, from new), at main.cc:31 (main+{n})
            cxx_new_free@O0 | allocator mismatch: free of <new0001@cxx_new_free::bad()+{n}>+0 (a block of 16 bytes, allocated at cxx_new_free.cc:10, from new), at cxx_new_free.cc:12 (cxx_new_free::bad()+{n})
            cxx_new_free@O2 | allocator mismatch: free of <new0001@cxx_new_free::bad()+{n}>+0 (a block of 16 bytes, allocated at cxx_new_free.cc:10, from new), at main.cc:31 (main+{n})
            cxx_string_copy | heap overflow: <new[]0002@cxx_string_copy::run(unsigned long)+{n}>+23 (a block of 23 bytes, allocated at cxx_string_copy.cc:10) written 16 bytes, 0 bytes past its end, at libc.so.6+{n}
            cxx_uaf_iterator | use after free: <freed:0001@cxx_uaf_iterator::run(bool)+{n}>+0 (a block of 32 bytes, allocated at cxx_uaf_iterator.cc:8, through std::vector<long, std::allocator<long> >::vector(unsigned long, long const&, std::allocator<long> const&), freed at cxx_uaf_iterator.cc:10, through std::vector<long, std::allocator<long> >::push_back(long&&)) read 8 bytes, at cxx_uaf_iterator.cc:12 (cxx_uaf_iterator::run(bool)+{n})
            cxx_use_after_delete@O0 | use after free: <freed:0001@cxx_use_after_delete::bad()+{n}>+0 (a block of 8 bytes, allocated at cxx_use_after_delete.cc:16, freed at cxx_use_after_delete.cc:18) read 8 bytes, at cxx_use_after_delete.cc:12 (cxx_use_after_delete::counter::add(long)+{n})
            cxx_vector_index | heap overflow: <new0001@cxx_vector_index::run(unsigned long)+{n}>+40 (a block of 40 bytes, allocated at cxx_vector_index.cc:8, through std::vector<int, std::allocator<int> >::vector(unsigned long, int const&, std::allocator<int> const&)) written 4 bytes, 0 bytes past its end, at cxx_vector_index.cc:9 (cxx_vector_index::run(unsigned long)+{n})
            stack_memcpy_overflow@O0 | stack overflow: <stack:return address@stack_memcpy_overflow_bad> (the return address in stack_memcpy_overflow_bad's frame, overwritten with 0x4343434343434343: a stack smash, found at its return) read 8 bytes, at stack_memcpy_overflow.c:14 (stack_memcpy_overflow_bad+{n})
            stack_overread@O0 | stack overflow: <stack:source@copy>+50 (a variable of 50 bytes, declared at line 7 of copy) read 99 bytes by memcpy, 0 bytes past its end, at stack_overread.c:13 (copy+{n})
            stack_sprintf_overflow@O0 | stack overflow: <stack:line@stack_sprintf_overflow_bad>+8 (a variable of 8 bytes, declared at line 7 of stack_sprintf_overflow_bad) written 15 bytes by sprintf, 0 bytes past its end, at stack_sprintf_overflow.c:8 (stack_sprintf_overflow_bad+{n})
            stack_strcpy_overflow@O0 | stack overflow: <stack:dest@stack_strcpy_overflow_bad>+10 (a variable of 10 bytes, declared at line 7 of stack_strcpy_overflow_bad) written 11 bytes by strcpy, 0 bytes past its end, at stack_strcpy_overflow.c:8 (stack_strcpy_overflow_bad+{n})
            stack_strncat_overflow@O0 | stack overflow: <stack:dest@stack_strncat_overflow_bad>+50 (a variable of 50 bytes, declared at line 7 of stack_strncat_overflow_bad) written 100 bytes by strncat, 0 bytes past its end, at stack_strncat_overflow.c:11 (stack_strncat_overflow_bad+{n})
            stack_underwrite@O0 | stack underflow: <stack:dataBuffer@write_at>-8 (a variable of 100 bytes, declared at line 7 of write_at) written 100 bytes by strcpy, 8 bytes before its start, at stack_underwrite.c:14 (write_at+{n})
            """;

    Path dir;

    /** The corpus's resource directory under /c/check/; its driver files may come from the first corpus's. */
    String corpus() { return "corpus"; }

    /** C files every C case is linked with besides the driver (data another case's translation unit uses). */
    List<String> sharedSources() { return List.of(); }

    /** The expectations: cc --check's first report per C and C++ case, run --check's per case it finds. */
    String ccCheckC() { return C_CHECK; }
    String ccCheckCxx() { return CXX_CHECK; }
    String runCheckExpected() { return RUN_CHECK; }

    /** The levels run --check is tested at, and its options and environment (here fault mode, with globals). */
    List<String> runLevels() { return List.of("O0", "O2"); }
    List<String> runOptions() { return List.of("--mode", "fault"); }
    Map<String, String> runEnv() { return Map.of("MEMTRACE_CHECK", "globals"); }

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        List<String> files = new ArrayList<>(List.of("corpus.h", "corpus_io.c", "main.c", "main.cc", "cases_c.def", "cases_cxx.def"));
        copy("cases_c.def");
        copy("cases_cxx.def");
        List<String> c = new ArrayList<>(cases("c").stream().map(n -> n + ".c").toList());
        List<String> cxx = cases("cxx").stream().map(n -> n + ".cc").toList();
        c.addAll(sharedSources());
        files.addAll(c);
        files.addAll(cxx);
        for (String f : files) if (!Files.exists(dir.resolve(f))) copy(f);
        for (String level : List.of("O0", "O2")) {
            checked("c", level, c);
            checked("cxx", level, cxx);
            List<String> plain = new ArrayList<>(List.of("gcc", "-" + level, "-g", "-w", "-o", "plain-c-" + level, "main.c", "corpus_io.c"));
            plain.addAll(c);
            gcc(plain);
            List<String> plainCxx = new ArrayList<>(List.of("g++", "-" + level, "-g", "-w", "-o", "plain-cxx-" + level, "main.cc", "corpus_io.c"));
            plainCxx.addAll(cxx);
            gcc(plainCxx);
        }
    }

    /**
     * check-LANG-LEVEL: the cases compiled {@code --check -c} ten at a time (one memtrace command per group stays
     * well inside the CLI's time limit on a loaded machine), in a directory of their own, then linked.
     */
    private void checked(String lang, String level, List<String> cases) throws Exception {
        Path d = Files.createDirectories(dir.resolve(lang + "-" + level));
        List<String> sources = new ArrayList<>(List.of(lang.equals("c") ? "main.c" : "main.cc", "corpus_io.c"));
        sources.addAll(cases);
        for (String f : List.of("corpus.h", "cases_c.def", "cases_cxx.def")) Files.copy(dir.resolve(f), d.resolve(f));
        for (String f : sources) Files.copy(dir.resolve(f), d.resolve(f));
        boolean cxx = lang.equals("cxx");
        for (int i = 0; i < sources.size(); i += 10) {
            List<String> args = new ArrayList<>(List.of("-" + level, "-g", "-c"));
            args.addAll(sources.subList(i, Math.min(i + 10, sources.size())));
            CheckBuilds.build(d, cxx, true, args.toArray(String[]::new));
        }
        List<String> link = new ArrayList<>(List.of("-o", dir.resolve("check-" + lang + "-" + level).toString()));
        for (String f : sources) link.add(f.replaceAll("\\.(c|cc)$", ".o"));
        CheckBuilds.build(d, cxx, true, link.toArray(String[]::new));
    }

    private void copy(String name) throws IOException {
        InputStream own = CheckCorpusTest.class.getResourceAsStream("/c/check/" + corpus() + "/" + name);
        try (InputStream in = own != null ? own : CheckCorpusTest.class.getResourceAsStream("/c/check/corpus/" + name)) {
            if (in == null) throw new IOException("no corpus file " + name);
            Files.copy(in, dir.resolve(name));
        }
    }

    private List<String> cases(String lang) throws IOException {
        return Files.readAllLines(dir.resolve("cases_" + lang + ".def")).stream()
                .map(l -> l.replaceAll("^CASE\\((.*)\\)$", "$1")).toList();
    }

    private void gcc(List<String> args) throws Exception {
        Process p = new ProcessBuilder(args).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"c-O0", "c-O2", "cxx-O0", "cxx-O2"})
    void everyBugIsReportedExactlyByCcCheckAndEveryTwinIsSilent(String build) throws Exception {
        String lang = build.substring(0, build.indexOf('-'));
        String level = build.substring(build.indexOf('-') + 1);
        Map<String, String> expected = forLevel(CheckRecallTest.parse(lang.equals("c") ? ccCheckC() : ccCheckCxx()), level);
        assertThat(expected.keySet()).as("every case has an expected report").containsExactlyElementsOf(cases(lang));
        List<String> failures = new ArrayList<>();
        for (var c : expected.entrySet()) {
            String name = c.getKey();
            boolean leak = c.getValue().startsWith("leak:"), missed = c.getValue().equals("-");
            Path source = dir.resolve(name + (lang.equals("c") ? ".c" : ".cc"));
            String bads = missed || leak ? "" : source.getFileName() + ":" + CheckBuilds.line(source, "BAD");
            String want = missed ? "" : "memtrace: " + regex(c.getValue().replace("{M}", "check-" + build), bads)
                    + (leak ? "" : ", thread \\d+");
            CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), "./check-" + build, name, "bad");
            String first = bad.stderr().lines().findFirst().orElse("");
            // a known miss (docs/check.md) runs as natively: no report, status 0
            if (!first.matches(want) || bad.status() != (missed ? 0 : leak ? 23 : 1)) {
                failures.add(build + " " + name + ": status " + bad.status() + ", got\n  " + first + "\nwanted\n  " + want);
            }
            CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), "./check-" + build, name, "good");
            CheckBuilds.Run plain = CheckBuilds.run(dir, Map.of(), "./plain-" + build, name, "good");
            if (!good.stderr().isEmpty() || good.status() != 0 || !good.stdout().equals(plain.stdout())) {
                failures.add(build + " twin of " + name + ": status " + good.status() + ", " + good.stdout() + good.stderr());
            }
        }
        assertThat(failures).isEmpty();
    }

    @ParameterizedTest
    @MethodSource("runLevels")
    void runCheckFindsTheHeapBugsOfPlainBuildsAndNoTwin(String level) throws Exception {
        List<String> failures = new ArrayList<>();
        for (var c : forLevel(CheckRecallTest.parse(runCheckExpected()), level).entrySet()) {
            String name = c.getKey(), lang = name.startsWith("cxx_") ? "cxx" : "c", binary = "plain-" + lang + "-" + level;
            boolean leak = c.getValue().startsWith("leak:");
            String want = "memtrace: " + regex(c.getValue().replace("{M}", binary), "") + (leak ? "" : ", thread \\d+");
            CheckBuilds.Run bad = runCheck("./" + binary, name, "bad");
            String first = bad.stderr().lines().filter(l -> l.startsWith("memtrace: ")).findFirst().orElse("");
            // a NULL dereference and a smashed return are said before the program dies of its SIGSEGV, as natively
            int status = leak ? 23 : c.getValue().startsWith("null dereference:") || c.getValue().contains("stack smash") ? 139 : 1;
            if (!first.matches(want) || bad.status() != status) {
                failures.add(level + " " + name + ": status " + bad.status() + ", got\n  " + first + "\nwanted\n  " + want);
            }
        }
        for (String lang : List.of("c", "cxx")) {
            String binary = "plain-" + lang + "-" + level;
            CheckBuilds.Run good = runCheck("./" + binary, "all", "good");
            CheckBuilds.Run plain = CheckBuilds.run(dir, Map.of(), "./" + binary, "all", "good");
            if (!good.stderr().isEmpty() || good.status() != 0 || !good.stdout().equals(plain.stdout())) {
                failures.add(level + " twins of " + lang + ": status " + good.status() + ", " + good.stderr());
            }
        }
        assertThat(failures).isEmpty();
    }

    /** memtrace run --check RUNOPTIONS -- COMMAND with runEnv() as the only variables. */
    private CheckBuilds.Run runCheck(String... command) throws Exception {
        return CheckBuilds.runCheck(dir, runOptions(), runEnv(), command);
    }

    /** The expectations of one level: NAME@LEVEL rows replace NAME's. */
    private static Map<String, String> forLevel(Map<String, String> all, String level) {
        Map<String, String> out = new LinkedHashMap<>();
        for (var e : all.entrySet()) {
            String key = e.getKey();
            int at = key.indexOf('@');
            if (at < 0) out.put(key, e.getValue());
            else if (key.substring(at + 1).equals(level)) out.put(key.substring(0, at), e.getValue());
        }
        return out;
    }

    /** CheckRecallTest's template regex, and {any} for text that differs with the compiler (a libstdc++ header's path). */
    static String regex(String template, String bad) {
        List<String> parts = new ArrayList<>();
        for (String p : template.split("\\{any\\}", -1)) parts.add(CheckRecallTest.regex(p, bad));
        return String.join(".*?", parts);
    }
}
