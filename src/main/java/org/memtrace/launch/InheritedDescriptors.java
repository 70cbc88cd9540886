package org.memtrace.launch;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * Hands the program the descriptors memtrace was started with beyond 0-2 (docs/trust.md, "Descriptors"):
 * a {@code 3<file} redirection, a make jobserver's pipes, an activated socket. ProcessBuilder closes every
 * descriptor above 2 in the child, so the launcher lists them ({@value #LAUNCHER_VARIABLE}), this JVM keeps
 * them open, and once the program has started they go to it by SCM_RIGHTS on a SOCK_SEQPACKET socket in a
 * directory of this run's own (0700), named to the program by {@value #PROGRAM_VARIABLE}; the agent's or
 * runtime's constructor (agent/common/mt_fds.c) puts each on its number and takes the variable out. Only
 * the started program's process is served (its pid, by SO_PEERCRED). With none inherited nothing changes.
 */
public final class InheritedDescriptors implements AutoCloseable {
    static final String LAUNCHER_VARIABLE = "MEMTRACE_INHERITED_FDS";
    static final String PROGRAM_VARIABLE = "MEMTRACE_FDS";
    /** The highest number handed over: what the launcher lists beyond it is not taken for a descriptor. */
    private static final int HIGHEST = 65535;
    private static final int PER_MESSAGE = 64;
    private static final int AF_UNIX = 1, SOCK_SEQPACKET = 5, SOCK_CLOEXEC = 02000000, SOL_SOCKET = 1, SCM_RIGHTS = 1,
            SO_PEERCRED = 17, MSG_NOSIGNAL = 0x4000, SHUT_RDWR = 2, F_GETFD = 1;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;

    /**
     * libc's functions, bound only when there are descriptors to hand over: binding them costs the JVM about
     * 80 ms, which a run with none (nearly every run) would pay at start for nothing.
     */
    private static final class Libc {
        private static final Linker LINKER = Linker.nativeLinker();
        private static final MethodHandle SOCKET = function("socket", FunctionDescriptor.of(INT, INT, INT, INT));
        private static final MethodHandle BIND = function("bind", FunctionDescriptor.of(INT, INT, ValueLayout.ADDRESS, INT));
        private static final MethodHandle LISTEN = function("listen", FunctionDescriptor.of(INT, INT, INT));
        private static final MethodHandle ACCEPT = function("accept", FunctionDescriptor.of(INT, INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        private static final MethodHandle GETSOCKOPT = function("getsockopt",
                FunctionDescriptor.of(INT, INT, INT, INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        private static final MethodHandle SENDMSG = function("sendmsg", FunctionDescriptor.of(ValueLayout.JAVA_LONG, INT, ValueLayout.ADDRESS, INT));
        private static final MethodHandle SHUTDOWN = function("shutdown", FunctionDescriptor.of(INT, INT, INT));
        private static final MethodHandle CLOSE = function("close", FunctionDescriptor.of(INT, INT));
        private static final MethodHandle FCNTL = LINKER.downcallHandle(LINKER.defaultLookup().find("fcntl").orElseThrow(),
                FunctionDescriptor.of(INT, INT, INT, INT), Linker.Option.firstVariadicArg(2));

        private static MethodHandle function(String name, FunctionDescriptor descriptor) {
            return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), descriptor);
        }
    }

    /** What the launcher listed and is still open here: read once, the JVM never closes them. */
    private static final List<Integer> INHERITED = parse(System.getenv(LAUNCHER_VARIABLE));
    private static final InheritedDescriptors NONE = new InheritedDescriptors(List.of(), -1, null);

    private final List<Integer> descriptors;
    private final Path directory;
    private int listener;
    private boolean serving;

    private InheritedDescriptors(List<Integer> descriptors, int listener, Path directory) {
        this.descriptors = descriptors;
        this.listener = listener;
        this.directory = directory;
    }

    /** The launcher's list ("3 5"), less what is not a number in 3..65535 or not open in this JVM. */
    static List<Integer> parse(String list) {
        List<Integer> fds = new ArrayList<>();
        if (list == null) return List.of();
        for (String word : list.trim().split("\\s+")) {
            if (!word.matches("[0-9]{1,5}")) continue;
            int fd = Integer.parseInt(word);
            if (fd > 2 && fd <= HIGHEST && isOpen(fd) && !fds.contains(fd)) fds.add(fd);
        }
        return List.copyOf(fds);
    }

    private static boolean isOpen(int fd) {
        try {
            return (int) Libc.FCNTL.invokeExact(fd, F_GETFD, 0) >= 0;
        } catch (Throwable e) {
            return false;
        }
    }

    /**
     * Sets up the hand-over for a program about to be started by {@code pb}: the launcher's variable never
     * reaches the program; with descriptors to give, the socket listens before the program exists.
     */
    private static InheritedDescriptors prepare(ProcessBuilder pb) throws LaunchException {
        pb.environment().remove(LAUNCHER_VARIABLE);
        pb.environment().remove(PROGRAM_VARIABLE);
        if (INHERITED.isEmpty()) return NONE;
        Path dir = null;
        try (Arena arena = Arena.ofConfined()) {
            dir = Files.createTempDirectory(Path.of("/tmp"), "memtrace-fds-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Path socket = dir.resolve("s");
            byte[] name = socket.toString().getBytes(StandardCharsets.UTF_8);
            MemorySegment address = arena.allocate(110);
            address.set(ValueLayout.JAVA_SHORT, 0, (short) AF_UNIX);
            MemorySegment.copy(name, 0, address, ValueLayout.JAVA_BYTE, 2, name.length);
            int s = (int) Libc.SOCKET.invokeExact(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
            if (s < 0) throw new IOException("socket() failed");
            if ((int) Libc.BIND.invokeExact(s, address, 110) != 0 || (int) Libc.LISTEN.invokeExact(s, 4) != 0) {
                int ignored = (int) Libc.CLOSE.invokeExact(s);
                throw new IOException("cannot listen on " + socket);
            }
            pb.environment().put(PROGRAM_VARIABLE, socket.toString());
            return new InheritedDescriptors(INHERITED, s, dir);
        } catch (Throwable e) {
            if (dir != null) Processes.deleteQuietly(dir.resolve("s"));
            if (dir != null) Processes.deleteQuietly(dir);
            throw LaunchException.environment("cannot pass memtrace's descriptors " + INHERITED + " to the program: " + e.getMessage(), e);
        }
    }

    /**
     * Starts {@code pb}'s program with memtrace's descriptors handed over; the socket and its directory go
     * when the program ends (or fails to start).
     */
    public static Process start(ProcessBuilder pb) throws IOException, LaunchException {
        InheritedDescriptors fds = prepare(pb);
        try {
            Process p = pb.start();
            fds.handOver(p);
            p.onExit().thenRun(fds::close);
            return p;
        } catch (IOException | RuntimeException e) {
            fds.close();
            throw e;
        }
    }

    /** Gives the descriptors to {@code program} once it connects, on a thread of its own. */
    private synchronized void handOver(Process program) {
        if (listener < 0) return;
        serving = true;
        int s = listener;
        Thread.ofPlatform().daemon().name("memtrace-descriptors").start(() -> serve(s, program.pid()));
    }

    private void serve(int s, long pid) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment credentials = arena.allocate(12), length = arena.allocate(INT);
            while (true) {
                int c = (int) Libc.ACCEPT.invokeExact(s, MemorySegment.NULL, MemorySegment.NULL);
                if (c < 0) return; // shut down: the program ended without connecting
                length.set(INT, 0, 12);
                boolean program = (int) Libc.GETSOCKOPT.invokeExact(c, SOL_SOCKET, SO_PEERCRED, credentials, length) == 0
                        && credentials.get(INT, 0) == pid;
                if (program) send(arena, c);
                int ignored = (int) Libc.CLOSE.invokeExact(c);
                if (program) return;
            }
        } catch (Throwable e) {
            // the program goes without them, as a static program does
        } finally {
            closeListener(s);
        }
    }

    /** The serving thread owns the listener: closed by it alone, under the lock, so close() never shuts down a reused number. */
    private synchronized void closeListener(int s) {
        try {
            int ignored = (int) Libc.CLOSE.invokeExact(s);
        } catch (Throwable e) {
            // closing cannot fail in a way that matters here
        }
        listener = -1;
    }

    /** One message per 64: their numbers as data, the descriptors themselves as SCM_RIGHTS. */
    private void send(Arena arena, int c) throws Throwable {
        for (int from = 0; from < descriptors.size(); from += PER_MESSAGE) {
            List<Integer> part = descriptors.subList(from, Math.min(descriptors.size(), from + PER_MESSAGE));
            int n = part.size();
            MemorySegment numbers = arena.allocate(4L * n), control = arena.allocate(16 + ((4L * n + 7) & ~7L), 8);
            MemorySegment iov = arena.allocate(16, 8), msg = arena.allocate(56, 8);
            control.set(ValueLayout.JAVA_LONG, 0, 16 + 4L * n);
            control.set(INT, 8, SOL_SOCKET);
            control.set(INT, 12, SCM_RIGHTS);
            for (int i = 0; i < n; i++) {
                numbers.setAtIndex(INT, i, part.get(i));
                control.set(INT, 16 + 4L * i, part.get(i));
            }
            iov.set(ValueLayout.ADDRESS, 0, numbers);
            iov.set(ValueLayout.JAVA_LONG, 8, 4L * n);
            msg.set(ValueLayout.ADDRESS, 16, iov);
            msg.set(ValueLayout.JAVA_LONG, 24, 1);
            msg.set(ValueLayout.ADDRESS, 32, control);
            msg.set(ValueLayout.JAVA_LONG, 40, control.byteSize());
            if ((long) Libc.SENDMSG.invokeExact(c, msg, MSG_NOSIGNAL) < 0) return;
        }
    }

    /** After the program: stops a hand-over that never happened (the listener's accept wakes) and removes the socket. */
    @Override
    public synchronized void close() {
        if (directory == null) return;
        Processes.deleteQuietly(directory.resolve("s"));
        Processes.deleteQuietly(directory);
        if (listener < 0) return;
        try {
            if (serving) {
                int ignored = (int) Libc.SHUTDOWN.invokeExact(listener, SHUT_RDWR);
            } else {
                int ignored = (int) Libc.CLOSE.invokeExact(listener);
            }
        } catch (Throwable e) {
            // nothing left to do: the socket goes with the directory
        }
        if (!serving) listener = -1;
    }
}
