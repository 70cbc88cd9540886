package org.memtrace.launch;

import java.nio.file.Path;
import java.util.List;

/**
 * What to run and how to trace it.
 *
 * @param command    the program and its arguments
 * @param regions    MT_REGION_* bits: data=1 heap=2 anon=4 file=8
 * @param autostart  record from main on; false records only between memtrace_start() and memtrace_stop()
 * @param bufferMb   ring capacity in MiB, a power of two
 * @param saveStream where to save the raw stream, or null
 * @param lazyBinding keep the dynamic loader's lazy binding instead of LD_BIND_NOW (its resolver's accesses then
 *                   show in the trace)
 * @param traceOnStandardOutput the trace goes to memtrace's standard output ({@code run -o -}): the program's
 *                   own standard output then goes to memtrace's standard error, so the trace holds nothing else
 * @param keepStopped where a compiled-in run that memtrace was asked to stop keeps the program's whole
 *                   recording (a new hard link, never over an existing file), or null: the text trace of such a
 *                   run holds only what a moment's reading got, the recording has all the program wrote
 * @param stackDepth frames per allocation and free stack (1: the caller only, as before stacks; docs/stacks.md),
 *                   passed to the agent or runtime as MEMTRACE_STACK_DEPTH
 */
public record TraceOptions(List<String> command, int regions, boolean autostart, int bufferMb, Path saveStream,
                           boolean lazyBinding, boolean traceOnStandardOutput, Path keepStopped, int stackDepth) {
    public static final int ALL_REGIONS = 15;
    public static final int DEFAULT_BUFFER_MB = 64;
    /** The most frames a stack record carries (MT_STACK_MAX of memtrace_stream.h). */
    public static final int MAX_STACK_DEPTH = 64;

    public TraceOptions {
        command = List.copyOf(command);
        if (command.isEmpty()) throw new IllegalArgumentException("no program");
        if (bufferMb < 1 || Integer.bitCount(bufferMb) != 1) throw new IllegalArgumentException("buffer size must be a power of two");
        if (stackDepth < 1 || stackDepth > MAX_STACK_DEPTH) throw new IllegalArgumentException("stack depth must be 1 to " + MAX_STACK_DEPTH);
    }

    /** Allocation stacks of the caller alone. */
    public TraceOptions(List<String> command, int regions, boolean autostart, int bufferMb, Path saveStream,
                        boolean lazyBinding, boolean traceOnStandardOutput, Path keepStopped) {
        this(command, regions, autostart, bufferMb, saveStream, lazyBinding, traceOnStandardOutput, keepStopped, 1);
    }

    /** A run whose trace goes to a file: the program's standard output is its own. */
    public TraceOptions(List<String> command, int regions, boolean autostart, int bufferMb, Path saveStream, boolean lazyBinding) {
        this(command, regions, autostart, bufferMb, saveStream, lazyBinding, false, null);
    }

    /**
     * The program's standard streams: memtrace's own, except that with the trace on standard output the
     * program writes its standard output to memtrace's standard error (opened again through /proc, as the
     * JVM cannot hand a child one of its descriptors under another number).
     */
    public ProcessBuilder processBuilder() {
        ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
        if (traceOnStandardOutput) {
            // The re-opened file has an offset of its own: memtrace's standard error appends too from now on,
            // or its summary would overwrite what the program wrote to a file redirected without >>.
            appendToStandardError();
            pb.redirectOutput(ProcessBuilder.Redirect.appendTo(new java.io.File("/proc/self/fd/2")));
        }
        return pb;
    }

    /** fcntl(2, F_SETFL, flags | O_APPEND): nothing changes for a terminal or a pipe, which have no offset. */
    private static void appendToStandardError() {
        try {
            var linker = java.lang.foreign.Linker.nativeLinker();
            var fcntl = linker.downcallHandle(linker.defaultLookup().find("fcntl").orElseThrow(),
                    java.lang.foreign.FunctionDescriptor.of(java.lang.foreign.ValueLayout.JAVA_INT, java.lang.foreign.ValueLayout.JAVA_INT,
                            java.lang.foreign.ValueLayout.JAVA_INT, java.lang.foreign.ValueLayout.JAVA_INT),
                    java.lang.foreign.Linker.Option.firstVariadicArg(2));
            final int getFlags = 3, setFlags = 4, append = 02000;
            int flags = (int) fcntl.invokeExact(2, getFlags, 0);
            if (flags >= 0 && (flags & append) == 0) {
                int ignored = (int) fcntl.invokeExact(2, setFlags, flags | append);
            }
        } catch (Throwable e) {
            // no foreign access: the program's output may then be overwritten by memtrace's summary in a file
        }
    }
}
