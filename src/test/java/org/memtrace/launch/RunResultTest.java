package org.memtrace.launch;

import static org.assertj.core.api.Assertions.*;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;

class RunResultTest {
    static RunResult result(int status, Event.Exit exit) {
        return new RunResult(status, Optional.ofNullable(exit), 0, Duration.ZERO, true, false, false);
    }

    @Test
    void describesEveryWayARunEnds() {
        assertThat(result(3, new Event.Exit(1, Event.ExitKind.NORMAL, 3, 0, 0, "")).describe())
                .isEqualTo("the program exited with status 3");
        assertThat(result(139, new Event.Exit(7, Event.ExitKind.SIGNAL, 11, 0x401136, 0, "")).describe())
                .isEqualTo("the program was killed by SIGSEGV (signal 11) at ip 0x401136, address 0x0 in thread 7;"
                        + " the trace is complete up to the crash");
        assertThat(result(139, new Event.Exit(7, Event.ExitKind.SIGNAL, 11, 0x401136, -1, "")).describe())
                .isEqualTo("the program was killed by SIGSEGV (signal 11) at ip 0x401136 in thread 7;"
                        + " the trace is complete up to the crash");
        assertThat(result(137, null).describe()).isEqualTo("the program was killed by SIGKILL (signal 9)");
        assertThat(result(137, null).killedBySignal()).isTrue();
        // exit(200) with its record, and without one: a status past 128+64 is no signal's
        assertThat(result(200, new Event.Exit(1, Event.ExitKind.NORMAL, 200, 0, 0, "")).describe())
                .isEqualTo("the program exited with status 200");
        assertThat(result(130, new Event.Exit(1, Event.ExitKind.NORMAL, 130, 0, 0, "")).killedBySignal()).isFalse();
        assertThat(result(200, null).describe()).isEqualTo("the program exited with status 200");
        assertThat(result(200, null).killedBySignal()).isFalse();
        assertThat(result(0, new Event.Exit(1, Event.ExitKind.EXEC, 0, 0, 0, "/bin/ls")).describe())
                .isEqualTo("the program executed /bin/ls, which ran untraced; it exited with status 0");
    }
}
