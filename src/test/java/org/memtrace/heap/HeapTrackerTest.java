package org.memtrace.heap;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.event.Event;
import org.memtrace.event.Event.AllocFunction;

class HeapTrackerTest {

    static final long PAGE = 4096;
    final HeapTracker heap = new HeapTracker(ip -> "f+" + ip);

    static Event.Alloc alloc(AllocFunction f, long caller, long result, long usable, long... args) {
        long[] six = new long[6];
        System.arraycopy(args, 0, six, 0, args.length);
        return new Event.Alloc(1, f, caller, result, usable, six);
    }

    String nameAt(long address) {
        Block b = heap.blockAt(address);
        return b == null ? null : b.name() + "+" + (address - b.start());
    }

    @Test
    void mallocAndCallocForgeNumberedNamesWithTheCallSite() {
        assertThat(heap.observe(alloc(AllocFunction.MALLOC, 45, 0x1000, 40, 33)).name()).isEqualTo("<malloc0001@f+45>");
        assertThat(heap.observe(alloc(AllocFunction.CALLOC, 230, 0x2000, 104, 10, 10)).name()).isEqualTo("<calloc0002@f+230>");
        assertThat(nameAt(0x1000 + 8)).isEqualTo("<malloc0001@f+45>+8");
        assertThat(nameAt(0x1000 + 39)).isEqualTo("<malloc0001@f+45>+39");
        assertThat(nameAt(0x1000 + 40)).isNull();
        assertThat(nameAt(0x2000 + 100)).isEqualTo("<calloc0002@f+230>+100");
        assertThat(heap.liveBlocks()).isEqualTo(2);
    }

    @Test
    void freeRenamesTheBlockSoAUseAfterFreeIsVisible() {
        heap.observe(alloc(AllocFunction.MALLOC, 45, 0x1000, 24, 20));
        Block freed = heap.observe(alloc(AllocFunction.FREE, 60, 0, 0, 0x1000));
        assertThat(freed.name()).isEqualTo("<freed:0001@f+45>");
        assertThat(nameAt(0x1000 + 4)).isEqualTo("<freed:0001@f+45>+4");
        assertThat(heap.liveBlocks()).isZero();
        Block again = heap.observe(alloc(AllocFunction.MALLOC, 70, 0x1000, 24, 16));
        assertThat(again.name()).isEqualTo("<malloc0002@f+70>");
        assertThat(nameAt(0x1000 + 4)).isEqualTo("<malloc0002@f+70>+4");
    }

    @Test
    void callocAndMmapFamiliesReleaseWithTheirOwnPrefix() {
        heap.observe(alloc(AllocFunction.CALLOC, 1, 0x1000, 24, 2, 8));
        assertThat(heap.observe(alloc(AllocFunction.FREE, 2, 0, 0, 0x1000)).name()).isEqualTo("<freed:0001@f+1>");
        heap.observe(alloc(AllocFunction.MMAP, 3, 0x10000, PAGE, 0, 100, 3, 0x22, -1, 0));
        assertThat(heap.observe(alloc(AllocFunction.MUNMAP, 4, 0, 0, 0x10000, 100)).name()).isEqualTo("<unmap:0002@f+3>");
    }

    @Test
    void freeOfNullUnknownOrFreedPointersChangesNothing() {
        heap.observe(alloc(AllocFunction.MALLOC, 1, 0x1000, 24, 20));
        assertThat(heap.observe(alloc(AllocFunction.FREE, 2, 0, 0, 0))).isNull();
        assertThat(heap.observe(alloc(AllocFunction.FREE, 2, 0, 0, 0x5000))).isNull();
        heap.observe(alloc(AllocFunction.FREE, 2, 0, 0, 0x1000));
        assertThat(heap.observe(alloc(AllocFunction.FREE, 2, 0, 0, 0x1000))).isNull();
        assertThat(nameAt(0x1000)).isEqualTo("<freed:0001@f+1>+0");
    }

    @Test
    void failedAllocationsTakeNoNumber() {
        assertThat(heap.observe(alloc(AllocFunction.MALLOC, 1, 0, 0, 1L << 50))).isNull();
        assertThat(heap.observe(alloc(AllocFunction.MMAP, 1, -1, 0, 0, 1L << 50, 3, 0x22, -1, 0))).isNull();
        assertThat(heap.observe(alloc(AllocFunction.POSIX_MEMALIGN, 1, 0, 0, 0x7ff0, 3, 64, 0, 0, 22))).isNull();
        assertThat(heap.allocations()).isZero();
        assertThat(heap.observe(alloc(AllocFunction.MALLOC, 1, 0x1000, 24, 8)).name()).isEqualTo("<malloc0001@f+1>");
    }

    @Test
    void alignedAllocatorsForgeMallocNamesAndReallocarrayReallocNames() {
        assertThat(heap.observe(alloc(AllocFunction.POSIX_MEMALIGN, 5, 0x1040, 64, 0x7ff0, 64, 50, 0, 0, 0)).name())
                .isEqualTo("<malloc0001@f+5>");
        assertThat(heap.observe(alloc(AllocFunction.ALIGNED_ALLOC, 5, 0x2000, 64, 64, 64)).name()).isEqualTo("<malloc0002@f+5>");
        assertThat(heap.observe(alloc(AllocFunction.MEMALIGN, 5, 0x3000, 64, 64, 64)).name()).isEqualTo("<malloc0003@f+5>");
        assertThat(heap.observe(alloc(AllocFunction.VALLOC, 5, 0x4000, 4096, 10)).name()).isEqualTo("<malloc0004@f+5>");
        assertThat(heap.observe(alloc(AllocFunction.PVALLOC, 5, 0x5000, 4096, 10)).name()).isEqualTo("<malloc0005@f+5>");
        assertThat(heap.observe(alloc(AllocFunction.REALLOCARRAY, 6, 0x6000, 48, 0x1040, 4, 10)).name()).isEqualTo("<realloc0006@f+6>");
        assertThat(nameAt(0x1040)).isEqualTo("<freed:0001@f+5>+0");
        assertThat(heap.observe(alloc(AllocFunction.REALLOCARRAY, 6, 0, 0, 0x6000, 1L << 40, 1L << 40))).isNull();
        assertThat(nameAt(0x6000 + 47)).isEqualTo("<realloc0006@f+6>+47");
    }

    @Test
    void reallocThatMovesFreesTheOldBlockAndForgesANewName() {
        heap.observe(alloc(AllocFunction.MALLOC, 1, 0x1000, 24, 24));
        Block moved = heap.observe(alloc(AllocFunction.REALLOC, 2, 0x8000, 200, 0x1000, 200));
        assertThat(moved.name()).isEqualTo("<realloc0002@f+2>");
        assertThat(nameAt(0x1000 + 16)).isEqualTo("<freed:0001@f+1>+16");
        assertThat(nameAt(0x8000 + 150)).isEqualTo("<realloc0002@f+2>+150");
        assertThat(heap.observe(alloc(AllocFunction.FREE, 3, 0, 0, 0x8000)).name()).isEqualTo("<freed:0002@f+2>");
    }

    @Test
    void reallocInPlaceForgesANewNameAndAShrunkTailKeepsTheOldReleasedName() {
        heap.observe(alloc(AllocFunction.MALLOC, 1, 0x1000, 200, 200));
        assertThat(heap.observe(alloc(AllocFunction.REALLOC, 2, 0x1000, 40, 0x1000, 40)).name()).isEqualTo("<realloc0002@f+2>");
        assertThat(nameAt(0x1000 + 8)).isEqualTo("<realloc0002@f+2>+8");
        assertThat(nameAt(0x1000 + 100)).isEqualTo("<freed:0001@f+1>+100");
        assertThat(heap.observe(alloc(AllocFunction.REALLOC, 3, 0x1000, 400, 0x1000, 400)).name()).isEqualTo("<realloc0003@f+3>");
        assertThat(nameAt(0x1000 + 300)).isEqualTo("<realloc0003@f+3>+300");
        assertThat(heap.liveBlocks()).isEqualTo(1);
    }

    @Test
    void reallocEdgeCasesFollowGlibc() {
        assertThat(heap.observe(alloc(AllocFunction.REALLOC, 1, 0x1000, 24, 0, 10)).name()).isEqualTo("<realloc0001@f+1>");
        assertThat(heap.observe(alloc(AllocFunction.REALLOC, 2, 0, 0, 0x1000, 1L << 50))).isNull();
        assertThat(nameAt(0x1000)).isEqualTo("<realloc0001@f+1>+0");
        assertThat(heap.observe(alloc(AllocFunction.REALLOC, 3, 0, 0, 0x1000, 0)).name()).isEqualTo("<freed:0001@f+1>");
        assertThat(heap.liveBlocks()).isZero();
        assertThat(heap.allocations()).isEqualTo(1);
    }

    @Test
    void partialMunmapReleasesOnlyThePagesUnmappedAndKeepsOffsetsFromTheBlockStart() {
        long base = 0x7f0000000000L;
        heap.observe(alloc(AllocFunction.MMAP, 9, base, 4 * PAGE, 0, 4 * PAGE, 3, 0x22, -1, 0));
        assertThat(heap.observe(alloc(AllocFunction.MUNMAP, 10, 0, 0, base + PAGE, PAGE + 1)).name()).isEqualTo("<unmap:0001@f+9>");
        assertThat(nameAt(base + 8)).isEqualTo("<memmap0001@f+9>+8");
        assertThat(nameAt(base + PAGE + 8)).isEqualTo("<unmap:0001@f+9>+" + (PAGE + 8));
        assertThat(nameAt(base + 2 * PAGE + 8)).isEqualTo("<unmap:0001@f+9>+" + (2 * PAGE + 8));
        assertThat(nameAt(base + 3 * PAGE + 8)).isEqualTo("<memmap0001@f+9>+" + (3 * PAGE + 8));
        assertThat(heap.observe(alloc(AllocFunction.MUNMAP, 10, -1, 0, base, PAGE))).isNull();
        heap.observe(alloc(AllocFunction.MUNMAP, 10, 0, 0, base, 4 * PAGE));
        assertThat(nameAt(base + 3 * PAGE)).isEqualTo("<unmap:0001@f+9>+" + 3 * PAGE);
        assertThat(nameAt(base + 4 * PAGE)).isNull();
    }

    @Test
    void freeDoesNotReleaseMappingsNorMunmapMallocBlocks() {
        heap.observe(alloc(AllocFunction.MMAP, 1, 0x10000, PAGE, 0, PAGE, 3, 0x22, -1, 0));
        heap.observe(alloc(AllocFunction.MALLOC, 2, 0x20000, 64, 64));
        assertThat(heap.observe(alloc(AllocFunction.FREE, 3, 0, 0, 0x10000))).isNull();
        assertThat(heap.observe(alloc(AllocFunction.MUNMAP, 3, 0, 0, 0x20000, PAGE))).isNull();
        assertThat(nameAt(0x10000)).isEqualTo("<memmap0001@f+1>+0");
        assertThat(nameAt(0x20000)).isEqualTo("<malloc0002@f+2>+0");
    }

    @Test
    void mremapMovingUnmapsTheOldRangeAndGrowingInPlaceRenames() {
        heap.observe(alloc(AllocFunction.MMAP, 1, 0x10000, 2 * PAGE, 0, 2 * PAGE, 3, 0x22, -1, 0));
        Block moved = heap.observe(alloc(AllocFunction.MREMAP, 2, 0x40000, 4 * PAGE, 0x10000, 2 * PAGE, 4 * PAGE, 1, 0));
        assertThat(moved.name()).isEqualTo("<mremap0002@f+2>");
        assertThat(nameAt(0x10000 + 16)).isEqualTo("<unmap:0001@f+1>+16");
        assertThat(nameAt(0x40000 + 3 * PAGE)).isEqualTo("<mremap0002@f+2>+" + 3 * PAGE);
        heap.observe(alloc(AllocFunction.MREMAP, 3, 0x40000, 8 * PAGE, 0x40000, 4 * PAGE, 8 * PAGE, 0, 0));
        assertThat(nameAt(0x40000 + 5 * PAGE)).isEqualTo("<mremap0003@f+3>+" + 5 * PAGE);
        heap.observe(alloc(AllocFunction.MREMAP, 4, 0x40000, PAGE, 0x40000, 8 * PAGE, PAGE, 0, 0));
        assertThat(nameAt(0x40000 + 2 * PAGE)).isEqualTo("<unmap:0003@f+3>+" + 2 * PAGE);
        assertThat(nameAt(0x40000)).isEqualTo("<mremap0004@f+4>+0");
        assertThat(heap.observe(alloc(AllocFunction.MREMAP, 5, -1, 0, 0x40000, PAGE, 100 * PAGE, 0, 0))).isNull();
        assertThat(heap.allocations()).isEqualTo(4);
    }

    @Test
    void numbersWiderThanFourDigitsAreNotCut() {
        for (int i = 0; i < 12344; i++) heap.observe(alloc(AllocFunction.MALLOC, 1, 0x1000, 24, 8));
        assertThat(heap.observe(alloc(AllocFunction.MALLOC, 7, 0x2000, 24, 8)).name()).isEqualTo("<malloc12345@f+7>");
    }

    /** Property: every byte is named by the most recent block placed over it, with the released name once freed. */
    @ParameterizedTest
    @ValueSource(longs = {11, 12, 13, 14, 15})
    void randomMallocFreeSequencesNameEveryByteByTheLatestBlock(long seed) {
        Random random = new Random(seed);
        int slots = 40;
        long slotSize = 256;
        Map<Integer, String> live = new HashMap<>();
        String[] expected = new String[slots];
        int number = 0;
        for (int step = 0; step < 2000; step++) {
            int slot = random.nextInt(slots);
            long start = 0x100000 + slot * slotSize;
            if (live.containsKey(slot) && random.nextBoolean()) {
                heap.observe(alloc(AllocFunction.FREE, 9, 0, 0, start));
                expected[slot] = "<freed:" + live.remove(slot).substring(7);
            } else if (!live.containsKey(slot)) {
                boolean zeroed = random.nextBoolean();
                if (random.nextInt(10) == 0) {
                    heap.observe(alloc(AllocFunction.MALLOC, 3, 0, 0, 1L << 50));
                    continue;
                }
                number++;
                String name = heap.observe(zeroed
                        ? alloc(AllocFunction.CALLOC, step, start, slotSize, 1, slotSize)
                        : alloc(AllocFunction.MALLOC, step, start, slotSize, slotSize - 5)).name();
                assertThat(name).isEqualTo((zeroed ? "<calloc" : "<malloc") + String.format("%04d", number) + "@f+" + step + ">");
                live.put(slot, name);
                expected[slot] = name;
            }
            int probe = random.nextInt(slots);
            long offset = random.nextLong(slotSize);
            String got = nameAt(0x100000 + probe * slotSize + offset);
            assertThat(got).isEqualTo(expected[probe] == null ? null : expected[probe] + "+" + offset);
        }
        assertThat(heap.liveBlocks()).isEqualTo(live.size());
    }
}
