package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Gcc;

/**
 * An index gigabytes past a heap block or a local (far.c; Juliet's CWE129_rand shape, Toyota ITC's
 * overrun_st 014 and 033): the access must fault and be reported as a wild access, as it faults natively and
 * under ASan, where before it landed in the check runtime's read-write reservations (the heap arena, the fake
 * stack) and the program went on. Both kinds at -O0 and -O2, and the heap one under {@code run --check}
 * (rewrite mode: the same arena, no base-pointer check in a binary nobody rebuilt); every twin silent.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckFarIndexTest {
    private Path dir, source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "far.c");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "far-O0", "far.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "far-O2", "far.c");
        Gcc.run(List.of("gcc", "-O0", "-g", "-o", dir.resolve("far-plain").toString(), source.toString()));
    }

    /** The SEGV handler's line: the faulting store's 4 bytes decoded; its site has no line of the call-site table. */
    private static String wild(String function) {
        return "memtrace: wild access: 0x[0-9a-f]+ \\(SEGV on unknown address: [a-z ]+\\) written 4 bytes, at " + function
                + "\\+\\d+, thread \\d+";
    }

    /**
     * The heap index is caught before it faults, by the base pointer's object-level check (a single indexed
     * store far from its base: "Overflows into another block"); the local's faults in the fake stack's reservation.
     */
    @ParameterizedTest
    @ValueSource(strings = {"O0", "O2"})
    void aFarIndexIsReportedAndItsTwinIsSilent(String level) throws Exception {
        CheckBuilds.Run heap = CheckBuilds.run(dir, Map.of(), "./far-" + level, "heap", "bad");
        assertThat(heap.status()).as(heap.stderr()).isEqualTo(1);
        assertThat(heap.stderr().lines().findFirst().orElse("")).matches(CheckBuilds.reportPattern(source,
                "memtrace: heap overflow: <malloc0001@heap+N>+4294967296 (a block of 40 bytes, allocated at far.c:{ALLOC_HEAP}) written 4 "
                + "bytes, 4294967256 bytes past its end, inside 0x") + "[0-9a-f]+" + Pattern.quote(" (memory no checked object owns), at far.c:"
                + CheckBuilds.line(source, "BAD_HEAP") + " (heap+") + "\\d+\\), thread \\d+");
        CheckBuilds.Run stack = CheckBuilds.run(dir, Map.of(), "./far-" + level, "stack", "bad");
        assertThat(stack.status()).as(stack.stderr()).isEqualTo(128 + 11);
        assertThat(stack.stdout()).isEmpty();
        assertThat(stack.stderr().lines().findFirst().orElse("")).matches(wild("stack"));
        for (String kind : List.of("heap", "stack")) {
            CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), "./far-" + level, kind, "good");
            assertThat(good.stderr()).as(kind).isEmpty();
            assertThat(good.stdout()).as(kind).isEqualTo("done\n");
            assertThat(good.status()).as(kind).isZero();
        }
    }

    @Test
    void runCheckFindsTheFarHeapIndexOfAnUnmodifiedBinary() throws Exception {
        CheckBuilds.Run bad = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./far-plain", "heap", "bad");
        assertThat(bad.stderr().lines().findFirst().orElse("")).as(bad.stderr()).startsWith("memtrace: wild access: 0x");
        assertThat(bad.status()).isNotZero();
        CheckBuilds.Run good = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./far-plain", "heap", "good");
        assertThat(good.stdout()).isEqualTo("done\n");
        assertThat(good.status()).isZero();
    }
}
