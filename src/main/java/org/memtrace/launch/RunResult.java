package org.memtrace.launch;

import java.time.Duration;
import java.util.Optional;
import org.memtrace.event.Event;
import org.memtrace.event.Signals;

/**
 * How a traced run ended.
 *
 * @param exitStatus the status memtrace passes on: the program's exit code, or 128+signal when a signal killed it
 * @param exit       the agent's last MT_EXIT record (exit, exec or fatal signal), when it wrote one
 * @param lost       records the agent dropped (ring header)
 * @param attached   whether the agent announced itself; false means nothing could be recorded
 * @param incomplete whether memtrace failed to consume or save part of the stream
 * @param interrupted whether memtrace was stopped (SIGINT, SIGTERM) before the program ended: the trace stops there or earlier
 */
public record RunResult(int exitStatus, Optional<Event.Exit> exit, long lost, Duration elapsed, boolean attached,
                        boolean incomplete, boolean interrupted) {

    public boolean killedBySignal() {
        if (exit.isPresent() && exit.get().kind() == Event.ExitKind.SIGNAL) return true;
        // a recorded exit whose code is the status: exit(200) is no signal, whatever the number
        if (exit.isPresent() && exit.get().kind() == Event.ExitKind.NORMAL && (exit.get().value() & 0xff) == exitStatus)
            return false;
        return signalStatus(exitStatus);
    }

    /**
     * Whether a status with no exit record to explain it means a signal: Java reports a child a signal killed
     * as 128+signal, which {@code exit(200)} also gives; Linux's signals stop at 64, so 193-255 is an exit
     * code. A status in 129-192 with no record stays ambiguous (a program that ends with {@code exit(130)}
     * and leaves no record reads as SIGINT); with the NORMAL record the runtime writes, it does not.
     */
    public static boolean signalStatus(int status) {
        return status > 128 && status <= 128 + 64;
    }

    /**
     * Whether the program executed another program, which ran untraced: the trace is of the first alone (a
     * wrapper such as setarch, env or a version manager's shim leaves a trace of a few thousand accesses), so
     * memtrace says it even under -q.
     */
    public boolean executed() {
        return exit.filter(x -> x.kind() == Event.ExitKind.EXEC).isPresent();
    }

    /** One line for the user: how the program ended. */
    public String describe() {
        if (exit.isPresent() && exit.get().kind() == Event.ExitKind.SIGNAL) {
            Event.Exit x = exit.get();
            // a signal sent with kill() has no fault address: the agent reports all ones
            String address = x.address() == -1 ? "" : ", address 0x" + Long.toHexString(x.address());
            return "the program was killed by " + Signals.name(x.value()) + " (signal " + x.value() + ") at ip 0x"
                    + Long.toHexString(x.ip()) + address + " in thread " + x.tid() + "; the trace is complete up to the crash";
        }
        String after = exit.filter(x -> x.kind() == Event.ExitKind.EXEC)
                .map(x -> "the program executed " + x.path() + ", which ran untraced; it ").orElse("the program ");
        if (killedBySignal())
            return after + "was killed by " + Signals.name(exitStatus - 128) + " (signal " + (exitStatus - 128) + ")";
        return after + "exited with status " + exitStatus;
    }
}
