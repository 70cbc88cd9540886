package org.memtrace.heap;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The parts of {@link StackFrames} that need no program: names of plumbing, the frame set-up. */
class StackFramesTest {

    @Test
    void qualifiedNameCutsReturnTypeParametersAndOffset() {
        assertThat(StackFrames.qualifiedName("void std::vector<long, std::allocator<long> >::_M_realloc_insert<long>("
                + "__gnu_cxx::__normal_iterator<long*, std::vector<long, std::allocator<long> > >, long&&)+130"))
                .isEqualTo("std::vector<long, std::allocator<long> >::_M_realloc_insert<long>");
        assertThat(StackFrames.qualifiedName("std::vector<long, std::allocator<long> > make_list(int)+4")).isEqualTo("make_list");
        assertThat(StackFrames.qualifiedName("operator new(unsigned long)+28")).isEqualTo("operator new");
        assertThat(StackFrames.qualifiedName("xmalloc+24")).isEqualTo("xmalloc+24");
    }

    @Test
    void plumbingIsTheLibrarysAllocationCode() {
        assertThat(StackFrames.plumbing("std::__new_allocator<long>::allocate(unsigned long, void const*)+94")).isTrue();
        assertThat(StackFrames.plumbing("long& std::vector<long, std::allocator<long> >::emplace_back<long>(long&&)+146")).isTrue();
        assertThat(StackFrames.plumbing("operator new(unsigned long)+28")).isTrue();
        assertThat(StackFrames.plumbing("_ZNSt15__new_allocatorIlE8allocateEmPKv+94")).isTrue();
        assertThat(StackFrames.plumbing("_Znwm+28")).isTrue();
        assertThat(StackFrames.plumbing("fill_squares(int)+61")).isFalse();
        assertThat(StackFrames.plumbing("std::vector<long, std::allocator<long> > make_list(int)+4")).isFalse();
        assertThat(StackFrames.plumbing("xmalloc+24")).isFalse();
    }

    @Test
    void setUpIsPushRbpMovRspRbpNearTheStart() {
        byte[] gcc = {0x55, 0x48, (byte) 0x89, (byte) 0xe5, 0x48, (byte) 0x83, (byte) 0xec, 0x10};
        assertThat(StackFrames.setUp(gcc)).isEqualTo(4);
        byte[] endbr = {(byte) 0xf3, 0x0f, 0x1e, (byte) 0xfa, 0x55, 0x48, (byte) 0x89, (byte) 0xe5};
        assertThat(StackFrames.setUp(endbr)).isEqualTo(8);
        byte[] omitted = {0x53, 0x48, (byte) 0x89, (byte) 0xfb, (byte) 0xe8, 0, 0, 0};
        assertThat(StackFrames.setUp(omitted)).isEqualTo(-1);
        byte[] late = new byte[200];
        late[170] = 0x55; late[171] = 0x48; late[172] = (byte) 0x89; late[173] = (byte) 0xe5;
        assertThat(StackFrames.setUp(late)).isEqualTo(-1);
    }
}
