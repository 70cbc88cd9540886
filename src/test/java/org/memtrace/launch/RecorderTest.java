package org.memtrace.launch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/** memtrace run's one choice: which way records the target, and what that way says about options it ignores. */
class RecorderTest {
    /** Where the Maven build's `make -C agent OUT=…` put the runtime. */
    private static final Path LIB = Path.of("target/classes/org/memtrace/launch").toAbsolutePath();

    @TempDir static Path dir;
    static Path linked;

    /** A program that needs libmemtrace-rt.so, as every memtrace cc build does, without going through cc. */
    @BeforeAll
    static void build() throws Exception {
        Path c = dir.resolve("main.c");
        Files.writeString(c, "int main(void) { return 0; }\n");
        linked = dir.resolve("linked");
        Gcc.run(List.of("gcc", "-o", linked.toString(), c.toString(), "-L" + LIB, "-Wl,-rpath," + LIB,
                "-Wl,--no-as-needed", "-lmemtrace-rt"));
    }

    private static TraceOptions options(Path program, int regions, Path saveStream) {
        return new TraceOptions(List.of(program.toString()), regions, true, 1, saveStream, false);
    }

    private static Recorder choose(TraceOptions options) throws LaunchException {
        return Recorder.choose(Recorder.validate(options), options, new ArrayList<String>()::add, false);
    }

    @Test
    void anUnmodifiedBinaryIsRecordedByTheFaultAgent() throws Exception {
        Recorder r = choose(options(Path.of("/bin/true"), 5, null));
        assertThat(r).isInstanceOf(Tracer.class);
        assertThat(r.compiledIn()).isFalse();
        assertThat(r.ignoredOptions()).isEmpty(); // the agent honours --regions
        assertThat(r.nothingRecorded()).contains("agent did not attach");
        assertThat(r.lost(7)).startsWith("7 events were lost");
    }

    @Test
    void aProgramThatNeedsTheRuntimeRecordsItselfAndIgnoresRegions() throws Exception {
        Recorder all = choose(options(linked, TraceOptions.ALL_REGIONS, null));
        assertThat(all).isInstanceOf(InstrumentedRun.class);
        assertThat(all.compiledIn()).isTrue();
        assertThat(all.ignoredOptions()).isEmpty();
        assertThat(all.nothingRecorded()).contains("wrote no trace");
        assertThat(all.lost(3)).startsWith("3 records were dropped");
        assertThat(choose(options(linked, 5, null)).ignoredOptions()).singleElement().asString()
                .startsWith("--regions has no effect");
    }

    @Test
    void aStreamFileInNoDirectoryIsRefusedBeforeAnythingStarts() {
        assertThatThrownBy(() -> choose(options(Path.of("/bin/true"), 15, dir.resolve("no/such/dir/s.stream"))))
                .isInstanceOf(LaunchException.class).hasMessageContaining("no such directory");
    }
}
