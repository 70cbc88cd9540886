package org.memtrace.cli;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * What memtrace's standard error is: a terminal or not (isatty(2)), and the terminal's size (TIOCGWINSZ). Java
 * has neither (System.console() looks at standard input and output, and {@code memtrace run}'s progress goes to
 * standard error); both are asked through the foreign-function API, and any failure there answers "not a
 * terminal", so memtrace stays silent rather than guess.
 */
final class Terminal {
    private static final long TIOCGWINSZ = 0x5413;
    private static final MethodHandle ISATTY, IOCTL;

    static {
        MethodHandle isatty = null, ioctl = null;
        try {
            Linker linker = Linker.nativeLinker();
            isatty = linker.downcallHandle(linker.defaultLookup().find("isatty").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            ioctl = linker.downcallHandle(linker.defaultLookup().find("ioctl").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS),
                    Linker.Option.firstVariadicArg(2));
        } catch (RuntimeException | LinkageError e) {
            // no foreign access: never a terminal
        }
        ISATTY = isatty;
        IOCTL = ioctl;
    }

    private Terminal() {}

    /** Rows and columns of a terminal; 0 when unknown (a pseudo-terminal nobody sized). */
    record Size(int rows, int columns) {}

    /** Whether file descriptor {@code fd} is a terminal. */
    static boolean isTerminal(int fd) {
        if (ISATTY == null) return false;
        try {
            return (int) ISATTY.invokeExact(fd) == 1;
        } catch (Throwable e) {
            return false;
        }
    }

    /** The size of the terminal on {@code fd}, or null when it is not one or cannot say. */
    static Size size(int fd) {
        if (IOCTL == null) return null;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ws = arena.allocate(8);
            if ((int) IOCTL.invokeExact(fd, TIOCGWINSZ, ws) != 0) return null;
            return new Size(Short.toUnsignedInt(ws.get(ValueLayout.JAVA_SHORT, 0)), Short.toUnsignedInt(ws.get(ValueLayout.JAVA_SHORT, 2)));
        } catch (Throwable e) {
            return null;
        }
    }
}
