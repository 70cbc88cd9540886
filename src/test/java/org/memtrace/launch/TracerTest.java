package org.memtrace.launch;

import static org.assertj.core.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.event.Event;
import org.memtrace.event.SavedStream;
import org.memtrace.testutil.Gcc;
import org.memtrace.trace.EventConsumer;

/** The launcher end to end, with a preloaded stand-in agent that speaks the ring protocol. */
class TracerTest {
    @TempDir static Path dir;
    static Path fakeAgent;

    @BeforeAll
    static void build() throws Exception {
        fakeAgent = Gcc.compile(dir, "fake_agent.c", "libfake.so", "-O1", "-g", "-shared", "-fPIC");
    }

    static final class Collect implements EventConsumer {
        final List<Event> events = new ArrayList<>();
        boolean finished;

        @Override public void accept(Event e) { events.add(e); }

        @Override public void finish() { finished = true; }
    }

    private static RunResult trace(Collect c, List<String> problems, TraceOptions options) throws LaunchException {
        return new Tracer(options, () -> fakeAgent, problems::add).run(c);
    }

    private static List<String> sh(String script, String events) {
        // The fake agent reads FAKE_EVENTS from the environment the program gets; pass it through env(1).
        return List.of("/usr/bin/env", "FAKE_EVENTS=" + events, "/bin/sh", "-c", script);
    }

    @Test
    void deliversEveryRecordInOrderAcrossManyWrapsAndPassesTheStatusOn() throws Exception {
        var c = new Collect();
        List<String> problems = new ArrayList<>();
        // 1 MiB ring, 150k records of 24 bytes: the producer wraps three times and waits for the reader.
        RunResult r = trace(c, problems, new TraceOptions(sh("exit 3", "150000"), 5, false, 1, null, false));
        assertThat(problems).isEmpty();
        assertThat(r.exitStatus()).isEqualTo(3);
        assertThat(r.attached()).isTrue();
        assertThat(r.lost()).isZero();
        assertThat(c.finished).isTrue();
        // env and sh both load the agent: take the events of the last process (after the second hello)
        List<Event> events = c.events;
        int hello = 0;
        for (int i = 0; i < events.size(); i++) if (events.get(i) instanceof Event.Hello) hello = i;
        var h = (Event.Hello) events.get(hello);
        assertThat(h.regions()).isEqualTo(5 | 0x100); // MEMTRACE_REGIONS=5, MEMTRACE_AUTOSTART=0
        List<Event.Access> accesses = events.subList(hello, events.size()).stream()
                .flatMap(e -> e instanceof Event.Access a ? Stream.of(a) : Stream.empty()).toList();
        assertThat(accesses).hasSize(150000);
        for (int i = 0; i < accesses.size(); i++) {
            assertThat(accesses.get(i).ip()).isEqualTo(i);
            assertThat(accesses.get(i).write()).isEqualTo(i % 2 == 1);
        }
    }

    @Test
    void aSignalDeathIsReportedAs128PlusTheSignal() throws Exception {
        var c = new Collect();
        RunResult r = trace(c, new ArrayList<>(), new TraceOptions(List.of("/bin/sh", "-c", "kill -SEGV $$"), 15, true, 1, null, false));
        assertThat(r.exitStatus()).isEqualTo(128 + 11);
        assertThat(r.killedBySignal()).isTrue();
        assertThat(r.describe()).contains("SIGSEGV");
    }

    @Test
    void savesTheStreamAndRemovesTheRing() throws Exception {
        var c = new Collect();
        Path saved = dir.resolve("saved.stream");
        // the program names its own ring: counting /dev/shm's rings would count other runs on the machine too
        Path named = dir.resolve("ring-name");
        trace(c, new ArrayList<>(), new TraceOptions(sh("echo \"$MEMTRACE_RING\" > " + named, "1000"), 15, true, 1, saved, false));
        List<Event> replayed = new ArrayList<>();
        SavedStream.replay(saved, replayed::add);
        assertThat(replayed).usingRecursiveFieldByFieldElementComparator().isEqualTo(c.events);
        Path ring = Path.of(Files.readString(named).strip());
        assertThat(ring.getFileName().toString()).startsWith("memtrace-").endsWith(".ring");
        assertThat(ring).doesNotExist();
    }

    @Test
    void aConsumerFailureIsReportedAndTheProgramStillRuns() throws Exception {
        List<String> problems = new ArrayList<>();
        EventConsumer broken = e -> { if (e instanceof Event.Access) throw new IllegalStateException("boom"); };
        RunResult r = new Tracer(new TraceOptions(sh("exit 0", "10"), 15, true, 1, null, false), () -> fakeAgent,
                problems::add).run(broken);
        assertThat(r.exitStatus()).isZero();
        assertThat(r.incomplete()).isTrue();
        assertThat(problems).singleElement().asString().contains("boom", "keeps running");
    }
}
