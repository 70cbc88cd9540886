package org.memtrace.mtr;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.memtrace.compress.ZstdCompressor;
import org.memtrace.compress.ZstdLibrary;

/** The content size read from a zstd frame's header agrees with libzstd's own reading, for every size field width. */
class ZstdTest {
    @ParameterizedTest
    @ValueSource(ints = {0, 1, 200, 255, 256, 300, 65_791, 65_792, 100_000, 3_000_000})
    void theHeadersContentSizeIsZstds(int size) throws Throwable {
        byte[] data = new byte[size];
        new Random(size).nextBytes(data);
        for (int i = 0; i < size; i += 3) data[i] = 0; // some redundancy, as a chunk has
        ZstdCompressor compressor = ZstdCompressor.load(1).orElseThrow();
        byte[] frame = new byte[compressor.bound(size)];
        int n = compressor.compress(data, size, frame);
        MemorySegment src = MemorySegment.ofArray(Arrays.copyOf(frame, n));
        MethodHandle zstds = ZstdLibrary.get().function("ZSTD_getFrameContentSize", FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG));
        MemorySegment nativeSrc = java.lang.foreign.Arena.ofAuto().allocate(n);
        nativeSrc.copyFrom(src);
        assertThat((long) Zstd.contentSize(src)).isEqualTo(size).isEqualTo((long) zstds.invokeExact(nativeSrc, (long) n));
    }

    @Test
    void somethingElseIsNoFrame() {
        assertThatThrownBy(() -> Zstd.contentSize(MemorySegment.ofArray(new byte[] {1, 2, 3, 4, 5, 6, 7, 8})))
                .isInstanceOf(MtrFormatException.class).hasMessageContaining("not a zstd frame");
        // a frame header whose descriptor states no content size
        assertThatThrownBy(() -> Zstd.contentSize(MemorySegment.ofArray(new byte[] {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd, 0, 0x50, 0, 0})))
                .isInstanceOf(MtrFormatException.class).hasMessageContaining("content size");
    }
}
