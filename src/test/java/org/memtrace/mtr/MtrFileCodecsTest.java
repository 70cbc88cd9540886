package org.memtrace.mtr;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Gcc;

/**
 * The Java reader decodes every codec the runtime writes (MEMTRACE_CODEC=0…11: 10 by default, the others on
 * request to measure the transforms, and in traces written before codec 5 became the default): the same
 * program's trace in each codec gives the reader the same access slots, in order, as codec 0 (stored as
 * they are) does. The runtime side of the same codecs is RuntimeTraceTest's.
 */
class MtrFileCodecsTest {
    /** Where the Maven build's `make -C agent OUT=…` put the runtime. */
    private static final Path LIB = Path.of("target/classes/org/memtrace/launch").toAbsolutePath();
    private static final long N = 5000;

    @TempDir static Path dir;
    static Path loop, random, far;
    static List<Long> stored, storedRandom;

    @BeforeAll
    static void build() throws Exception {
        for (String name : List.of("mt_probe.h", "rt_loop.c", "rt_random.c", "rt_far.c"))
            try (InputStream in = MtrFileCodecsTest.class.getResourceAsStream("/c/runtime/" + name)) {
                Files.copy(in, dir.resolve(name));
            }
        loop = dir.resolve("loop");
        Gcc.run(List.of("gcc", "-O0", "-fno-builtin", "-I" + Path.of("agent/include").toAbsolutePath(), "-I" + dir,
                "-o", loop.toString(), dir.resolve("rt_loop.c").toString(), "-L" + LIB, "-Wl,-rpath," + LIB, "-lmemtrace-rt"));
        random = dir.resolve("random");
        Gcc.run(List.of("gcc", "-O0", "-fno-builtin", "-I" + Path.of("agent/include").toAbsolutePath(), "-I" + dir,
                "-o", random.toString(), dir.resolve("rt_random.c").toString(), "-L" + LIB, "-Wl,-rpath," + LIB, "-lmemtrace-rt"));
        far = dir.resolve("far");
        Gcc.run(List.of("gcc", "-O0", "-fno-builtin", "-I" + Path.of("agent/include").toAbsolutePath(), "-I" + dir,
                "-o", far.toString(), dir.resolve("rt_far.c").toString(), "-L" + LIB, "-Wl,-rpath," + LIB, "-lmemtrace-rt"));
        stored = accessWords(loop, 0);
        storedRandom = accessWords(random, 0);
    }

    /**
     * Runs the loop (n stores, n loads) with the runtime writing {@code codec} in 16 KiB buffers (many
     * chunks), and returns the address and site word of every access slot the reader decodes, thread by
     * thread in chunk order; event slots are skipped (their pids and times differ from run to run).
     */
    private static List<Long> accessWords(Path program, int codec) throws Exception {
        return accessWords(program, codec, N, 16);
    }

    /** As above, {@code rounds} rounds of the program in buffers of {@code bufferKb} KiB. */
    private static List<Long> accessWords(Path program, int codec, long rounds, int bufferKb) throws Exception {
        Path mtr = dir.resolve(program.getFileName() + "-codec" + codec + ".mtr");
        ProcessBuilder pb = new ProcessBuilder("setarch", "x86_64", "-R", program.toString(), Long.toString(rounds))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().keySet().removeIf(k -> k.startsWith("MEMTRACE_"));
        pb.environment().put("MEMTRACE_OUT", mtr.toString());
        pb.environment().put("MEMTRACE_CODEC", Integer.toString(codec));
        pb.environment().put("MEMTRACE_BUFFER_KB", Integer.toString(bufferKb));
        Process p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(3);
        List<Long> words = new ArrayList<>();
        try (MtrFile file = MtrFile.open(mtr); Arena arena = Arena.ofConfined()) {
            assertThat(file.problem()).isEmpty();
            MtrFile.Scratch scratch = new MtrFile.Scratch(arena);
            for (List<MtrFile.Chunk> chunks : file.threads().values())
                for (MtrFile.Chunk c : chunks) {
                    assertThat(c.codec()).isEqualTo(codec);
                    int count = file.words(c, scratch);
                    long[] w = scratch.words(count);
                    for (int i = 0; i < count; ) {
                        if (w[i + 1] < 0) { // a tag slot: its event's bytes follow, padded to whole slots
                            i += 2 + (int) (((w[i + 1] >>> 8 & 0xffff) + 15) / 16 * 2);
                            continue;
                        }
                        words.add(w[i]);
                        words.add(w[i + 1]);
                        i += 2;
                    }
                }
        }
        return words;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
    void everyCodecDecodesToTheSlotsStoredAsTheyAre(int codec) throws Exception {
        assertThat(stored).hasSize((int) (4 * N)); // n stores and n loads, two words each
        assertSameWords(codec, accessWords(loop, codec), stored);
    }

    /**
     * Random indices into one table through sites of four granules, one of which changes twice (codec 6
     * re-grains it): every codec still gives back the slots codec 0 stores.
     */
    @ParameterizedTest
    @ValueSource(ints = {3, 4, 5, 6, 7, 8, 9, 10, 11})
    void randomIndicesOfEveryGranuleDecodeToTheStoredSlots(int codec) throws Exception {
        assertThat(storedRandom).hasSize((int) (8 * N)); // 4 loads a round, two words each
        assertSameWords(codec, accessWords(random, codec), storedRandom);
    }

    /**
     * Random loads far apart (rt_far.c): nearly every record is a token with a byte in the token stream, so
     * the runtime compresses these chunks with a small zstd hash table (rt_writer.h, FUSED_HASHLOG_DENSE). The
     * trace is whole and gives back, in order, every address the program loaded, which its generator gives.
     * The runtime's own 1 MiB buffers: a chunk of 65,536 records is where a table larger than zstd's default
     * for the level would not fit the writer's static context (the trace would stop at the first chunk).
     */
    @ParameterizedTest
    @ValueSource(ints = {7, 9, 10, 11})
    void tokenDenseChunksGiveBackEveryAddressLoaded(int codec) throws Exception {
        int rounds = 40_000;
        List<Long> words = accessWords(far, codec, rounds, 1024);
        assertThat(words).hasSize(4 * rounds); // two loads a round, two words each
        int s = 12345 * 1103515245 + 12345;
        long base = words.get(0) - 8 * (Integer.toUnsignedLong(s) >>> 12); // the table's address, from the first load
        for (int i = 0; i < rounds; i++, s = s * 1103515245 + 12345) {
            long r = Integer.toUnsignedLong(s);
            assertThat(words.get(4 * i)).as("round %d, first load", i).isEqualTo(base + 8 * (r >>> 12));
            assertThat(words.get(4 * i + 2)).as("round %d, second load", i).isEqualTo(base + 8 * (r >>> 2 & 0xfffff));
            assertThat(words.get(4 * i + 1)).isEqualTo(words.get(1));
            assertThat(words.get(4 * i + 3)).isEqualTo(words.get(3)).isNotEqualTo(words.get(1));
        }
        assertThat(leastTokenShare(dir.resolve("far-codec" + codec + ".mtr"))).isGreaterThanOrEqualTo(0.5);
    }

    /**
     * The least share of a chunk's records that the token stream t holds a byte for, over the chunks of 256
     * records or more: the payload's second varint (docs/trace-format.md, "Codec 7") against the chunk's records.
     */
    private static double leastTokenShare(Path mtr) throws Exception {
        byte[] bytes = Files.readAllBytes(mtr);
        double least = Double.MAX_VALUE;
        try (MtrFile file = MtrFile.open(mtr); Arena arena = Arena.ofConfined()) {
            MtrFile.Scratch scratch = new MtrFile.Scratch(arena);
            for (List<MtrFile.Chunk> chunks : file.threads().values())
                for (MtrFile.Chunk c : chunks) {
                    int count = file.words(c, scratch);
                    long[] w = scratch.words(count);
                    int records = 0;
                    for (int i = 0; i < count; ) {
                        if (w[i + 1] < 0) { // a tag slot and its event's slots
                            i += 2 + (int) (((w[i + 1] >>> 8 & 0xffff) + 15) / 16 * 2);
                            continue;
                        }
                        records++;
                        i += 2;
                    }
                    if (records < 256) continue;
                    MemorySegment stored = arena.allocate(c.storedLength());
                    MemorySegment.copy(MemorySegment.ofArray(bytes), c.offset(), stored, 0, c.storedLength());
                    byte[] payload = new byte[Zstd.contentSize(stored)];
                    Zstd.get().decompress(stored, MemorySegment.ofArray(payload));
                    int at = 0;
                    while (payload[at++] < 0) {} // |c|
                    long nt = 0;
                    for (int shift = 0; ; shift += 7) {
                        nt |= (long) (payload[at] & 0x7f) << shift;
                        if (payload[at++] >= 0) break;
                    }
                    least = Math.min(least, (double) nt / records);
                }
        }
        return least;
    }

    private static void assertSameWords(int codec, List<Long> decoded, List<Long> expected) {
        assertThat(decoded.size()).isEqualTo(expected.size());
        for (int i = 0; i < decoded.size(); i++)
            if (!decoded.get(i).equals(expected.get(i)))
                throw new AssertionError("codec " + codec + ", word " + i + ": " + Long.toHexString(decoded.get(i))
                        + " instead of " + Long.toHexString(expected.get(i)));
    }
}
