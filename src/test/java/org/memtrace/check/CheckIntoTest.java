package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * An overflow that lands inside another live block (issue 23): a loop whose stride steps over the redzone
 * touches only addressable bytes, so no shadow test sees it; the loop check's object-level test (Spindle's:
 * the loop's range against the block its first access is in) reports it, naming both blocks, upwards and
 * downwards; a single indexed store (no loop) gets the same test from its base pointer, at -O2 and -O0.
 * into.c's twins (one iteration; a column walk from the middle of a large matrix; an index in bounds) stay
 * silent.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckIntoTest {
    private Path dir, source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "into.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "into", "into.c");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "into0", "into.c");
    }

    @Test
    void aStrideOverTheRedzoneIsReportedWithBothBlocks() throws Exception {
        Path json = dir.resolve("stride.json");
        CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_JSON", json.toString()), "./into", "stride", "bad");
        assertThat(bad.status()).isEqualTo(1);
        assertThat(bad.stderr()).matches(CheckBuilds.reportPattern(source, "memtrace: heap overflow: <malloc0001@main+N>+256 (a block of 16 "
                + "bytes, allocated at into.c:{ALLOC_A}) written 4 bytes by the loop, 240 bytes past its end, inside <malloc0002@main+N>+144 "
                + "(a block of 1024 bytes, allocated at into.c:{ALLOC_B}), at into.c:{BAD_STRIDE} (fill+N), thread ") + "\\d+\n");
        JsonNode n = CheckJson.records(Files.readString(json)).getFirst();
        assertThat(n.get("kind").asText()).isEqualTo("heap-overflow");
        assertThat(n.get("offset").asInt()).isEqualTo(256);
        assertThat(n.get("distance").asInt()).isEqualTo(240);
        assertThat(n.get("object").get("size").asInt()).isEqualTo(16);
        assertThat(n.get("into").asText()).startsWith("<malloc0002@main+").contains(">+144 (a block of 1024 bytes");
    }

    @Test
    void aColumnWalkIntoTheNextBlockIsReportedWithBothBlocks() throws Exception {
        CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), "./into", "walk", "bad");
        assertThat(bad.status()).isEqualTo(1);
        assertThat(bad.stderr()).matches(CheckBuilds.reportPattern(source, "memtrace: heap overflow: <calloc0001@main+N>+22000 (a block of "
                + "16000 bytes, allocated at into.c:{ALLOC_M}) read 4 bytes by the loop, 6000 bytes past its end, inside <calloc0002@main+N>+1520 "
                + "(a block of 16384 bytes, allocated at into.c:{ALLOC_NEXT}), at into.c:{BAD_WALK} (column+N), thread ") + "\\d+\n");
    }

    @Test
    void aWalkDownIntoThePreviousBlockIsAnUnderflowOfItsOwn() throws Exception {
        CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), "./into", "down", "bad");
        assertThat(bad.status()).isEqualTo(1);
        assertThat(bad.stderr()).matches(CheckBuilds.reportPattern(source, "memtrace: heap underflow: <malloc0002@main+N>-4096 (a block of 16 "
                + "bytes, allocated at into.c:{ALLOC_LAST}) written 4 bytes by the loop, 4096 bytes before its start, inside <malloc0001@main+N>+1024 "
                + "(a block of 4096 bytes, allocated at into.c:{ALLOC_PREV}), at into.c:{BAD_DOWN} (down+N), thread ") + "\\d+\n");
    }

    /** One store, no loop: its base's block is looked up because its index took it 96 bytes or more away. */
    @Test
    void aSingleIndexedStoreIntoTheNextBlockIsReportedAtO2AndO0() throws Exception {
        for (String program : new String[] {"./into", "./into0"}) {
            CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), program, "single", "bad");
            assertThat(bad.status()).as(program).isEqualTo(1);
            assertThat(bad.stderr()).as(program).matches(CheckBuilds.reportPattern(source, "memtrace: heap overflow: <malloc0001@main+N>+128 "
                    + "(a block of 16 bytes, allocated at into.c:{ALLOC_S}) written 4 bytes, 112 bytes past its end, inside "
                    + "<malloc0002@main+N>+16 (a block of 64 bytes, allocated at into.c:{ALLOC_T}), at into.c:{BAD_SINGLE} (poke+N), thread ")
                    + "\\d+\n");
        }
    }

    @Test
    void theTwinsAreSilent() throws Exception {
        Map<String, String> out = Map.of("stride", "32640 -1\n", "walk", "0 0\n", "down", "523776 -1\n", "single", "120 -1\n");
        for (var c : out.entrySet()) {
            for (String program : new String[] {"./into", "./into0"}) {
                CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), program, c.getKey(), "good");
                assertThat(good.stderr()).as(program + " " + c.getKey()).isEmpty();
                assertThat(good.stdout()).as(program + " " + c.getKey()).isEqualTo(c.getValue());
                assertThat(good.status()).as(program + " " + c.getKey()).isZero();
            }
        }
    }
}
