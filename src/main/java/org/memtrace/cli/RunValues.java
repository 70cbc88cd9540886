package org.memtrace.cli;

import java.util.List;
import java.util.Locale;
import org.memtrace.event.Event;
import org.memtrace.launch.LaunchException;
import org.memtrace.launch.TraceOptions;
import picocli.CommandLine;

/** {@code memtrace run}'s numeric and list options checked: a value out of range is a usage error naming the option. */
final class RunValues {
    private RunValues() {}

    static int stackDepth(int stackDepth) throws LaunchException {
        if (stackDepth < 1 || stackDepth > TraceOptions.MAX_STACK_DEPTH)
            throw LaunchException.usage("--stack-depth must be 1 to " + TraceOptions.MAX_STACK_DEPTH + ", not " + stackDepth);
        return stackDepth;
    }

    static int regionBits(CommandLine commandLine, List<String> regions) {
        // --regions=,,, splits into no region at all: a run that records nothing is no run anyone asked for
        if (regions.isEmpty()) throw new CommandLine.ParameterException(commandLine, "--regions names no region (use data, heap, anon, file)");
        int bits = 0;
        for (String r : regions) {
            try {
                bits |= Event.RegionKind.valueOf(r.strip().toUpperCase(Locale.ROOT)).bit;
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(commandLine,
                        "unknown region '" + r + "' for --regions (use data, heap, anon, file)");
            }
        }
        return bits;
    }

    static int bufferSize(CommandLine commandLine, int bufferMb) {
        if (bufferMb < 1 || bufferMb > 4096 || Integer.bitCount(bufferMb) != 1)
            throw new CommandLine.ParameterException(commandLine,
                    "--buffer-mb must be a power of two from 1 to 4096, not " + bufferMb);
        return bufferMb;
    }
}
