package org.memtrace.check;

import java.util.List;
import java.util.Map;

/**
 * The second bug corpus, src/test/resources/c/check/corpus2 (docs/check.md, "The second corpus"): 33 C and 10
 * C++ cases written after the first corpus as an outside judge would write them, from the shapes of real bug
 * reports and of Juliet, ASan's tests and BugBench (off-by-one string copies, a hash index taken modulo the
 * wrong size, a trim walking before its block, realloc(p, 0) taken for a failure, a stale vector reference, a
 * virtual call after delete, a table extern'd from another unit, snprintf's return value added unchecked...),
 * with the first corpus's driver and one shared data unit. The same tests as CheckCorpusTest's: under
 * {@code memtrace cc --check} -O0 and -O2 each bad case's exact first report and status, or no report for the
 * misses no redzone checker can see (an intra-object overflow by direct stores; a use after free inside
 * libstdc++'s own tree code, which is not built with checks); under {@code memtrace run --check} in its default
 * (rewrite) mode on the plain -O0 build, each case it finds, exactly; every twin silent with the plain output.
 */
class CheckCorpus2Test extends CheckCorpusTest {
    /** cc --check: the first report of each C case ({any}: a frame in no site table, which names may yet improve). */
    static final String C2_CHECK = """
            double_free_cleanup@O0 | double free: free of <freed:0002@run+{n}>+0 (a block of 16 bytes, allocated at double_free_cleanup.c:{n}, freed at double_free_cleanup.c:{n}), at {BAD} (record_free+{n})
            double_free_cleanup@O2 | double free: free of <freed:0002@run+{n}>+0 (a block of 16 bytes, allocated at double_free_cleanup.c:{n}, freed at double_free_cleanup.c:{n}), at {BAD} (run+{n})
            double_free_realloc_zero | double free: free of <freed:0001@shrink+{n}>+0 (a block of 40 bytes, allocated at double_free_realloc_zero.c:{n}, freed at double_free_realloc_zero.c:{n}), at {BAD} (shrink+{n})
            free_middle_advanced | invalid free: free of <malloc0001@parse+{n}>+3 (a block of 24 bytes, allocated at free_middle_advanced.c:{n}), at {BAD} (parse+{n})
            free_struct_member | invalid free: free of <stack:m@send>+4 (a variable of 36 bytes, declared at line {n} of send), at {BAD} (send+{n})
            global_enum_names@O0 | global overflow: color_names+32 (a global of 32 bytes, defined at global_enum_names.c:{n}) read 8 bytes, 0 bytes past its end, at {BAD} (show+{n})
            global_enum_names@O2 | global overflow: color_names+32 (a global of 32 bytes, defined at global_enum_names.c:{n}) read 8 bytes, 0 bytes past its end, at {BAD} (global_enum_names_bad+{n})
            global_extern_table@O0 | global overflow: limits+40 (a global of 40 bytes, defined at corpus2_data.c:{n}) read 4 bytes, 0 bytes past its end, at {BAD} (show+{n})
            global_extern_table@O2 | global overflow: limits+40 (a global of 40 bytes, defined at corpus2_data.c:{n}) read 4 bytes, 0 bytes past its end, at {BAD} (global_extern_table_bad+{n})
            global_struct_loop@O0 | global overflow: options+96 (a global of 96 bytes, defined at global_struct_loop.c:{n}) written 12 bytes by memset, 0 bytes past its end, at {BAD} (reset+{n})
            global_struct_loop@O2 | global overflow: options+96 (a global of 96 bytes, defined at global_struct_loop.c:{n}) written 12 bytes by memset, 0 bytes past its end, at {BAD} (global_struct_loop_bad+{n})
            heap_2d_index | heap overflow: <malloc0001@fill+{n}>+240 (a block of 240 bytes, allocated at heap_2d_index.c:{n}) written 8 bytes, 0 bytes past its end, at {BAD} (fill+{n})
            heap_calloc_elem@O0 | heap overflow: <calloc0001@fill+{n}>+32 (a block of 32 bytes, allocated at heap_calloc_elem.c:{n}) written 4 bytes, 0 bytes past its end, at {BAD} (fill+{n})
            heap_calloc_elem@O2 | heap overflow: <calloc0001@heap_calloc_elem_bad+{n}>+32..+63 (a block of 32 bytes, allocated at heap_calloc_elem.c:{n}) written 4 bytes at a time by the loop, 0..31 bytes past its end, at {BAD} (heap_calloc_elem_bad+{n})
            heap_fgets_size | heap overflow: <malloc0003@read_line+{n}>+32 (a block of 32 bytes, allocated at heap_fgets_size.c:{n}) written 51 bytes by fgets, 0 bytes past its end, at {BAD} (read_line+{n})
            heap_hash_index@O0 | heap overflow: <calloc0001@lookup+{n}>+128 (a block of 128 bytes, allocated at heap_hash_index.c:{n}) read 8 bytes, 0 bytes past its end, at {BAD} (lookup+{n})
            heap_hash_index@O2 | heap overflow: <calloc0001@lookup.constprop.0+{n}>+128 (a block of 128 bytes, allocated at heap_hash_index.c:{n}) read 8 bytes, 0 bytes past its end, at {BAD} (lookup.constprop.0+{n})
            heap_memcpy_nul@O0 | heap overflow: <malloc0001@field+{n}>+12 (a block of 12 bytes, allocated at heap_memcpy_nul.c:{n}) written 13 bytes by memcpy, 0 bytes past its end, at {BAD} (field+{n})
            heap_memcpy_nul@O2 | heap overflow: <malloc0001@heap_memcpy_nul_bad+{n}>+12 (a block of 12 bytes, allocated at heap_memcpy_nul.c:{n}) written 13 bytes by memcpy, 0 bytes past its end, at {BAD} (heap_memcpy_nul_bad+{n})
            heap_memmove_insert | heap overflow: <malloc0001@insert+{n}>+24 (a block of 24 bytes, allocated at heap_memmove_insert.c:{n}) written 24 bytes by memmove, 0 bytes past its end, at {BAD} (insert+{n})
            heap_scan_overread@O0 | heap overflow: <malloc0001@split+{n}>+18 (a block of 18 bytes, allocated at heap_scan_overread.c:{n}) read 1 byte, 0 bytes past its end, at {BAD} (split+{n})
            heap_scan_overread@O2 | heap overflow: <malloc0001@split.constprop.0+{n}>+18 (a block of 18 bytes, allocated at heap_scan_overread.c:{n}) read 1 byte, 0 bytes past its end, at {BAD} (split.constprop.0+{n})
            heap_strcat_room@O0 | heap overflow: <malloc0001@join+{n}>+24 (a block of 24 bytes, allocated at heap_strcat_room.c:{n}) written 14 bytes by strcat, 0 bytes past its end, at {BAD} (join+{n})
            heap_strcat_room@O2 | heap overflow: <malloc0001@join.constprop.0+{n}>+24 (a block of 24 bytes, allocated at heap_strcat_room.c:{n}) written 14 bytes by memcpy, 0 bytes past its end, at {BAD} (join.constprop.0+{n})
            heap_strcpy_len@O0 | heap overflow: <malloc0001@dup_name+{n}>+13 (a block of 13 bytes, allocated at heap_strcpy_len.c:{n}) written 14 bytes by strcpy, 0 bytes past its end, at {BAD} (dup_name+{n})
            heap_strcpy_len@O2 | heap overflow: <malloc0001@heap_strcpy_len_bad+{n}>+13 (a block of 13 bytes, allocated at heap_strcpy_len.c:{n}) written 14 bytes by memcpy, 0 bytes past its end, at {BAD} (heap_strcpy_len_bad+{n})
            heap_trim_underread@O0 | heap underflow: <malloc0001@trim+{n}>-1 (a block of 5 bytes, allocated at heap_trim_underread.c:{n}) read 1 byte, 1 byte before its start, at {BAD} (trim+{n})
            heap_trim_underread@O2 | heap underflow: <malloc0001@trim.constprop.0+{n}>-1 (a block of 5 bytes, allocated at heap_trim_underread.c:{n}) read 1 byte, 1 byte before its start, at {BAD} (trim.constprop.0+{n})
            intra_struct_field_next | -
            leak_cycle | leak: <malloc0001@run+{n}> (a block of 16 bytes, allocated at leak_cycle.c:{n}) unreachable at exit
            leak_realloc_fail | leak: <malloc0001@grow+{n}> (a block of 64 bytes, allocated at leak_realloc_fail.c:{n}) unreachable at exit
            leak_strdup_loop@O0 | leak: <malloc0001@run+{n}> (a block of 4 bytes, allocated at leak_strdup_loop.c:{n}) unreachable at exit, with 1 more block from the same call, 8 bytes in all
            leak_strdup_loop@O2 | leak: <malloc0001@leak_strdup_loop_bad+{n}> (a block of 4 bytes, allocated at leak_strdup_loop.c:{n}) unreachable at exit, with 1 more block from the same call, 8 bytes in all
            overlap_memcpy | overlapping copy: memcpy of 40 bytes from <malloc0001@drop_prefix+{n}>+4 to <malloc0001@drop_prefix+{n}>+{n}, at {BAD} (drop_prefix+{n})
            overlap_strcpy | overlapping copy: strcpy of 13 bytes from <malloc0001@unquote+{n}>+1 to <malloc0001@unquote+{n}>+{n}, at {BAD} (unquote+{n})
            stack_callee_write@O0 | stack overflow: <stack:ids@run>+16 (a variable of 16 bytes, declared at line {n} of run) written 4 bytes, 0 bytes past its end, at {BAD} (fill_ids+{n})
            stack_callee_write@O2 | stack overflow: <stack:ids@stack_callee_write_bad>+16 (a variable of 16 bytes, declared at line {n} of stack_callee_write_bad) written 4 bytes by the loop, 0 bytes past its end, at {BAD} (fill_ids+{n})
            stack_negative_underwrite@O0 | stack underflow: <stack:slots@set_slot>-4 (a variable of 32 bytes, declared at line {n} of set_slot) written 4 bytes, 4 bytes before its start, at {BAD} (set_slot+{n})
            stack_negative_underwrite@O2 | stack underflow: <stack:slots@stack_negative_underwrite_bad>-4 (a variable of 32 bytes, declared at line {n} of stack_negative_underwrite_bad) written 4 bytes, 4 bytes before its start, at {BAD} (stack_negative_underwrite_bad+{n})
            stack_snprintf_pos | stack overflow: <stack:buf@list>+26 (a variable of 24 bytes, declared at line {n} of list) written 6 bytes by snprintf, 2 bytes past its end, at {BAD} (list+{n})
            stack_sprintf_int@O0 | stack overflow: <stack:text@show_small>+8 (a variable of 8 bytes, declared at line {n} of show_small) written 12 bytes by sprintf, 0 bytes past its end, at {BAD} (show_small+{n})
            stack_sprintf_int@O2 | stack overflow: <stack:text@stack_sprintf_int_bad>+8 (a variable of 8 bytes, declared at line {n} of stack_sprintf_int_bad) written 12 bytes by sprintf, 0 bytes past its end, at {BAD} (stack_sprintf_int_bad+{n})
            stack_strncpy_overread@O0 | stack overflow: <stack:buf@copy>+16 (a variable of 16 bytes, declared at line {n} of copy) read {n} bytes by strlen, 0 bytes past its end, at {BAD} (copy+{n})
            stack_strncpy_overread@O2 | stack overflow: <stack:buf@copy.constprop.0>+16 (a variable of 16 bytes, declared at line {n} of copy.constprop.0) read {n} bytes by strlen, 0 bytes past its end, at {BAD} (copy.constprop.0+{n})
            stack_struct_array_le@O0 | stack overflow: <stack:table@init>+96 (a variable of 96 bytes, declared at line {n} of init) written 4 bytes, 0 bytes past its end, at {BAD} (init+{n})
            stack_struct_array_le@O2 | stack overflow: <stack:table@stack_struct_array_le_bad>+96 (a variable of 96 bytes, declared at line {n} of stack_struct_array_le_bad) written 4 bytes, 0 bytes past its end, at {BAD} (stack_struct_array_le_bad+{n})
            stack_use_after_return_local@O0 | stack use after return: <stack:local@format_id>+3 (a variable of 16 bytes, declared at line {n} of format_id) read 1 byte, at {BAD} (run+{n})
            stack_use_after_return_local@O2 | stack use after scope: <stack:local@run>+3 (a variable of 16 bytes, declared at line {n} of run) read 1 byte, at {BAD} (run+{n})
            uaf_ctx_destroy | use after free: <freed:0001@dispatch+{n}>+4 (a block of 16 bytes, allocated at uaf_ctx_destroy.c:{n}, freed at uaf_ctx_destroy.c:{n}) read 4 bytes, at {BAD} (dispatch+{n})
            uaf_realloc_cached | use after free: <freed:0001@run+{n}>+12 (a block of 16 bytes, allocated at uaf_realloc_cached.c:{n}, freed at uaf_realloc_cached.c:{n}) written 4 bytes, at {BAD} (run+{n})
            uaf_shared_buffer | use after free: <freed:0001@run+{n}>+7 (a block of 32 bytes, allocated at uaf_shared_buffer.c:{n}, freed at uaf_shared_buffer.c:{n}) read 1 byte, at {BAD} (run+{n})
            """;

    /**
     * cc --check: the first report of each C++ case. Missed: cxx_uaf_map_erase (++it on an erased node reads it in
     * libstdc++'s _Rb_tree_increment, not built with checks; ASan misses it too), and at -O2 the two cases whose bug
     * gcc removes (the histogram's dead store, the leaked buffer nobody reads: ASan and the plain build agree).
     */
    static final String CXX2_CHECK = """
            cxx_double_delete_owners@O0 | double free: delete of <freed:0002@cxx_double_delete_owners::run(bool)+{n}>+0 (a block of 24 bytes, allocated at cxx_double_delete_owners.cc:{n}, freed at {any}), at {any}
            cxx_double_delete_owners@O2 | double free: delete of <freed:0002@cxx_double_delete_owners::run(bool)+{n}>+0 (a block of 24 bytes, allocated at cxx_double_delete_owners.cc:10, freed at cxx_double_delete_owners.cc:14, through std::unique_ptr<cxx_double_delete_owners::buffer, std::default_delete<cxx_double_delete_owners::buffer> >::~unique_ptr()), at /usr/include/c++/12/bits/unique_ptr.h:{n} (cxx_double_delete_owners::run(bool)+{n})
            cxx_heap_member_index@O0 | heap overflow: <new0002@cxx_heap_member_index::run(unsigned int)+{n}>+44 (a block of 44 bytes, allocated at cxx_heap_member_index.cc:{n}) read 4 bytes, 0 bytes past its end, at {any}
            cxx_heap_member_index@O2 | -
            cxx_heap_string_data | heap overflow: <new0002@cxx_heap_string_data::run(bool)+{n}>+21 (a block of 21 bytes, allocated at cxx_heap_string_data.cc:11, through std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string<std::allocator<char> >(unsigned long, char, std::allocator<char> const&)) written 40 bytes by memcpy, 0 bytes past its end, at cxx_heap_string_data.cc:13 (cxx_heap_string_data::run(bool)+{n})
            cxx_leak_throw@O0 | leak: <new[]0002@cxx_leak_throw::load(bool)+{n}> (a block of 48 bytes, allocated at cxx_leak_throw.cc:{n}) unreachable at exit
            cxx_leak_throw@O2 | -
            cxx_new_array_delete_dtor | invalid free: delete of <new[]0002@cxx_new_array_delete_dtor::run(bool)+{n}>+8 (a block of 32 bytes, allocated at cxx_new_array_delete_dtor.cc:{n}), at {BAD} (cxx_new_array_delete_dtor::run(bool)+{n})
            cxx_uaf_map_erase | -
            cxx_uaf_string_temp@O0 | use after free: <freed:0005@cxx_uaf_string_temp::make(int)+{n}>+0 (a block of 65 bytes, allocated at cxx_uaf_string_temp.cc:8, through std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > std::operator+<char, std::char_traits<char>, std::allocator<char> >(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&), freed at cxx_uaf_string_temp.cc:13, through std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::~basic_string()) read 34 bytes by strlen, at cxx_uaf_string_temp.cc:14 (cxx_uaf_string_temp::run(bool)+{n})
            cxx_uaf_string_temp@O2 | use after free: <freed:0005@cxx_uaf_string_temp::make(int) [clone .constprop.0]+{n}>+0 (a block of 65 bytes, allocated at cxx_uaf_string_temp.cc:8, through std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > std::operator+<char, std::char_traits<char>, std::allocator<char> >(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&), freed at cxx_uaf_string_temp.cc:13, through std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::~basic_string()) read 34 bytes by strlen, at cxx_uaf_string_temp.cc:14 (cxx_uaf_string_temp::run(bool)+{n})
            cxx_uaf_vector_iter@O0 | use after free: <freed:0002@{any}>+0 (a block of 32 bytes, allocated at {any}, freed at {any}) read 8 bytes, at {BAD} (cxx_uaf_vector_iter::run(bool)+{n})
            cxx_uaf_vector_iter@O2 | use after free: <freed:0002@cxx_uaf_vector_iter::run(bool)+{n}>+0 (a block of 32 bytes, allocated at cxx_uaf_vector_iter.cc:9, through std::vector<long, std::allocator<long> >::vector(unsigned long, long const&, std::allocator<long> const&), freed at cxx_uaf_vector_iter.cc:12, through std::vector<long, std::allocator<long> >::insert(__gnu_cxx::__normal_iterator<long const*, std::vector<long, std::allocator<long> > >, unsigned long, long const&)) read 8 bytes, at cxx_uaf_vector_iter.cc:15 (cxx_uaf_vector_iter::run(bool)+{n})
            cxx_uaf_vector_ref@O0 | use after free: <freed:0002@{any}>+0 (a block of 16 bytes, allocated at {any}, freed at {any}) written 4 bytes, at {BAD} (cxx_uaf_vector_ref::run(bool)+{n})
            cxx_uaf_vector_ref@O2 | use after free: <freed:0002@cxx_uaf_vector_ref::run(bool)+{n}>+0 (a block of 16 bytes, allocated at cxx_uaf_vector_ref.cc:10, through std::vector<int, std::allocator<int> >::reserve(unsigned long), freed at cxx_uaf_vector_ref.cc:13, through std::vector<int, std::allocator<int> >::push_back(int&&)) written 4 bytes, at cxx_uaf_vector_ref.cc:15 (cxx_uaf_vector_ref::run(bool)+{n})
            cxx_use_after_delete_virtual | use after free: <freed:0002@cxx_use_after_delete_virtual::run(bool)+{n}>+0 (a block of 16 bytes, allocated at cxx_use_after_delete_virtual.cc:{n}, freed at {any}) read 8 bytes, at {BAD} (cxx_use_after_delete_virtual::run(bool)+{n})
            """;

    /**
     * run --check (rewrite mode) on the plain -O0 build: the cases it finds. The three global cases' overflows land
     * in the next global without crossing padding: found by the object their pointer's lea named (LeaOrigins; the
     * struct loop's first field past the end is written by memset, which starts outside the object); the stack
     * array of structs written by index by gcc's {@code add %rbp,%rax; sub $0x70,%rax}, which names it. Not found
     * (none of them by memcheck either): the caller's array written by its callee (no variable is known for
     * the access), the use after return (the real stack stays addressable), the intra-object overflow.
     */
    static final String RUN2_CHECK = """
            double_free_cleanup | double free: free of <freed:0002@run+{n}>+0 (a block of 16 bytes, allocated at double_free_cleanup.c:18, freed at double_free_cleanup.c:23), at double_free_cleanup.c:11 (record_free+{n})
            double_free_realloc_zero | double free: free of <freed:0001@shrink+{n}>+0 (a block of 40 bytes, allocated at double_free_realloc_zero.c:8, freed at double_free_realloc_zero.c:10), at double_free_realloc_zero.c:13 (shrink+{n})
            free_middle_advanced | invalid free: free of <malloc0001@parse+{n}>+3 (a block of 24 bytes, allocated at free_middle_advanced.c:9), at free_middle_advanced.c:14 (parse+{n})
            free_struct_member | invalid free: free of <stack> (memory on the stack of thread {n}), at free_struct_member.c:17 (send+{n})
            global_enum_names | global overflow: color_names+32 (a global of 32 bytes) read 8 bytes, 0 bytes past its end, at global_enum_names.c:9 (show+{n})
            global_extern_table | global overflow: limits+40 (a global of 40 bytes) read 4 bytes, 0 bytes past its end, at global_extern_table.c:9 (show+{n})
            global_struct_loop | global overflow: options+108 (a global of 96 bytes) written 4 bytes, 12 bytes past its end, at global_struct_loop.c:12 (reset+{n})
            heap_2d_index | heap overflow: <malloc0001@fill+{n}>+240 (a block of 240 bytes, allocated at heap_2d_index.c:8) written 8 bytes, 0 bytes past its end, at heap_2d_index.c:11 (fill+{n})
            heap_calloc_elem | heap overflow: <calloc0001@fill+{n}>+32 (a block of 32 bytes, allocated at heap_calloc_elem.c:8) written 4 bytes, 0 bytes past its end, at heap_calloc_elem.c:9 (fill+{n})
            heap_fgets_size | heap overflow: <malloc0003@read_line+{n}>+32 (a block of 32 bytes, allocated at heap_fgets_size.c:11) written 51 bytes by fgets, 0 bytes past its end, at heap_fgets_size.c:12 (read_line+{n})
            heap_hash_index | heap overflow: <calloc0001@lookup+{n}>+128 (a block of 128 bytes, allocated at heap_hash_index.c:15) read 8 bytes, 0 bytes past its end, at heap_hash_index.c:18 (lookup+{n})
            heap_memcpy_nul | heap overflow: <malloc0001@field+{n}>+12 (a block of 12 bytes, allocated at heap_memcpy_nul.c:8) written 13 bytes by memcpy, 0 bytes past its end, at heap_memcpy_nul.c:9 (field+{n})
            heap_memmove_insert | heap overflow: <malloc0001@insert+{n}>+24 (a block of 24 bytes, allocated at heap_memmove_insert.c:9) written 24 bytes by memmove, 0 bytes past its end, at heap_memmove_insert.c:11 (insert+{n})
            heap_scan_overread | heap overflow: <malloc0001@split+{n}>+18 (a block of 18 bytes, allocated at heap_scan_overread.c:10) read 1 byte, 0 bytes past its end, at heap_scan_overread.c:16 (split+{n})
            heap_strcat_room | heap overflow: <malloc0001@join+{n}>+24 (a block of 24 bytes, allocated at heap_strcat_room.c:9) written 14 bytes by strcat, 0 bytes past its end, at heap_strcat_room.c:12 (join+{n})
            heap_strcpy_len | heap overflow: <malloc0001@dup_name+{n}>+13 (a block of 13 bytes, allocated at heap_strcpy_len.c:9) written 14 bytes by strcpy, 0 bytes past its end, at heap_strcpy_len.c:10 (dup_name+{n})
            heap_trim_underread | heap underflow: <malloc0001@trim+{n}>-1 (a block of 5 bytes, allocated at heap_trim_underread.c:10) read 1 byte, 1 byte before its start, at heap_trim_underread.c:16 (trim+{n})
            leak_cycle | leak: <malloc0001@run+{n}> (a block of 16 bytes, allocated at leak_cycle.c:10) unreachable at exit
            leak_realloc_fail | leak: <malloc0001@grow+{n}> (a block of 64 bytes, allocated at leak_realloc_fail.c:8) unreachable at exit
            leak_strdup_loop | leak: <malloc0001@run+{n}> (a block of 4 bytes, allocated at leak_strdup_loop.c:13) unreachable at exit, with 1 more block from the same call, 8 bytes in all
            overlap_memcpy | overlapping copy: memcpy of 40 bytes from <malloc0001@drop_prefix+{n}>+4 to <malloc0001@drop_prefix+{n}>+0, at overlap_memcpy.c:12 (drop_prefix+{n})
            overlap_strcpy | overlapping copy: strcpy of 13 bytes from <malloc0001@unquote+{n}>+1 to <malloc0001@unquote+{n}>+0, at overlap_strcpy.c:13 (unquote+{n})
            stack_negative_underwrite | stack underflow: <stack:slots@set_slot>-4 (a variable of 32 bytes, declared at line 8 of set_slot) written 4 bytes, 4 bytes before its start, at stack_negative_underwrite.c:10 (set_slot+{n})
            stack_snprintf_pos | stack overflow: <stack:buf@list>+26 (a variable of 24 bytes, declared at line 9 of list) written 6 bytes by snprintf, 2 bytes past its end, at stack_snprintf_pos.c:13 (list+{n})
            stack_sprintf_int | stack overflow: <stack:text@show_small>+8 (a variable of 8 bytes, declared at line 8 of show_small) written 12 bytes by sprintf, 0 bytes past its end, at stack_sprintf_int.c:9 (show_small+{n})
            stack_strncpy_overread | stack overflow: <stack:buf@copy>+16 (a variable of 16 bytes, declared at line 8 of copy) read {n} bytes by strlen, 0 bytes past its end, at stack_strncpy_overread.c:13 (copy+{n})
            stack_struct_array_le | stack overflow: <stack:table@init>+96 (a variable of 96 bytes, declared at line 8 of init) written 4 bytes, 0 bytes past its end, at stack_struct_array_le.c:10 (init+{n})
            uaf_ctx_destroy | use after free: <freed:0001@dispatch+{n}>+4 (a block of 16 bytes, allocated at uaf_ctx_destroy.c:12, freed at uaf_ctx_destroy.c:8) read 4 bytes, at uaf_ctx_destroy.c:19 (dispatch+{n})
            uaf_realloc_cached | use after free: <freed:0001@run+{n}>+12 (a block of 16 bytes, allocated at uaf_realloc_cached.c:19, freed at uaf_realloc_cached.c:12) written 4 bytes, at uaf_realloc_cached.c:24 (run+{n})
            uaf_shared_buffer | use after free: <freed:0001@run+{n}>+7 (a block of 32 bytes, allocated at uaf_shared_buffer.c:13, freed at uaf_shared_buffer.c:9) read 1 byte, at uaf_shared_buffer.c:17 (run+{n})
            cxx_double_delete_owners | double free: delete of <freed:0002@cxx_double_delete_owners::run(bool)+{n}>+0 (a block of 24 bytes, allocated at cxx_double_delete_owners.cc:10, freed at cxx_double_delete_owners.cc:14, through std::unique_ptr<cxx_double_delete_owners::buffer, std::default_delete<cxx_double_delete_owners::buffer> >::~unique_ptr()), at cxx_double_delete_owners.cc:14 (cxx_double_delete_owners::run(bool)+{n})
            cxx_heap_member_index | heap overflow: <new0002@cxx_heap_member_index::run(unsigned int)+{n}>+44 (a block of 44 bytes, allocated at cxx_heap_member_index.cc:14) read 4 bytes, 0 bytes past its end, at cxx_heap_member_index.cc:9 (cxx_heap_member_index::histogram::add(unsigned int)+{n})
            cxx_heap_string_data | heap overflow: <new0002@cxx_heap_string_data::run(bool)+{n}>+21 (a block of 21 bytes, allocated at cxx_heap_string_data.cc:11, through std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string<std::allocator<char> >(unsigned long, char, std::allocator<char> const&)) written 40 bytes by memcpy, 0 bytes past its end, at cxx_heap_string_data.cc:13 (cxx_heap_string_data::run(bool)+{n})
            cxx_leak_throw | leak: <new[]0002@cxx_leak_throw::load(bool)+{n}> (a block of 48 bytes, allocated at cxx_leak_throw.cc:13) unreachable at exit
            cxx_new_array_delete_dtor | invalid free: delete of <new[]0002@cxx_new_array_delete_dtor::run(bool)+{n}>+8 (a block of 32 bytes, allocated at cxx_new_array_delete_dtor.cc:13), at cxx_new_array_delete_dtor.cc:14 (cxx_new_array_delete_dtor::run(bool)+{n})
            cxx_uaf_map_erase | use after free: <freed:0002@cxx_uaf_map_erase::run(bool)+{n}>+24 (a block of 48 bytes, allocated at cxx_uaf_map_erase.cc:9, through std::map<int, long, std::less<int>, std::allocator<std::pair<int const, long> > >::operator[](int const&), freed at cxx_uaf_map_erase.cc:12, through std::map<int, long, std::less<int>, std::allocator<std::pair<int const, long> > >::erase[abi:cxx11](std::_Rb_tree_iterator<std::pair<int const, long> >)) read 8 bytes, at std::_Rb_tree_increment(std::_Rb_tree_node_base*)+{n}
            cxx_uaf_string_temp | use after free: <freed:0005@cxx_uaf_string_temp::make(int)+{n}>+0 (a block of 65 bytes, allocated at cxx_uaf_string_temp.cc:8, through std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > std::operator+<char, std::char_traits<char>, std::allocator<char> >(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&), freed at cxx_uaf_string_temp.cc:13, through std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::~basic_string()) read 34 bytes by strlen, at cxx_uaf_string_temp.cc:14 (cxx_uaf_string_temp::run(bool)+{n})
            cxx_uaf_vector_iter | use after free: <freed:0002@cxx_uaf_vector_iter::run(bool)+{n}>+0 (a block of 32 bytes, allocated at cxx_uaf_vector_iter.cc:9, through std::vector<long, std::allocator<long> >::vector(unsigned long, long const&, std::allocator<long> const&), freed at cxx_uaf_vector_iter.cc:12, through std::vector<long, std::allocator<long> >::insert(__gnu_cxx::__normal_iterator<long const*, std::vector<long, std::allocator<long> > >, unsigned long, long const&)) read 8 bytes, at cxx_uaf_vector_iter.cc:15 (cxx_uaf_vector_iter::run(bool)+{n})
            cxx_uaf_vector_ref | use after free: <freed:0002@cxx_uaf_vector_ref::run(bool)+{n}>+0 (a block of 16 bytes, allocated at cxx_uaf_vector_ref.cc:10, through std::vector<int, std::allocator<int> >::reserve(unsigned long), freed at cxx_uaf_vector_ref.cc:13, through std::vector<int, std::allocator<int> >::push_back(int&&)) written 4 bytes, at cxx_uaf_vector_ref.cc:15 (cxx_uaf_vector_ref::run(bool)+{n})
            cxx_use_after_delete_virtual | use after free: <freed:0002@cxx_use_after_delete_virtual::run(bool)+{n}>+0 (a block of 16 bytes, allocated at cxx_use_after_delete_virtual.cc:17, freed at cxx_use_after_delete_virtual.cc:10) read 8 bytes, at cxx_use_after_delete_virtual.cc:21 (cxx_use_after_delete_virtual::run(bool)+{n})
            """;

    @Override String corpus() { return "corpus2"; }
    @Override List<String> sharedSources() { return List.of("corpus2_data.c"); }
    @Override String ccCheckC() { return C2_CHECK; }
    @Override String ccCheckCxx() { return CXX2_CHECK; }
    @Override String runCheckExpected() { return RUN2_CHECK; }
    /** -O0 only: each run starts a JVM and rewrites the program (seconds on this machine). */
    @Override List<String> runLevels() { return List.of("O0"); }
    /** The default mode, rewrite, and no variable: what a user types. */
    @Override List<String> runOptions() { return List.of(); }
    @Override Map<String, String> runEnv() { return Map.of(); }
}
