package org.memtrace.cc;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.LongSupplier;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;
import org.memtrace.instrument.AsStep;
import org.memtrace.launch.LaunchException;

/**
 * The compile server of {@code memtrace cc} (docs/compiled-in.md, "The compile server"): one JVM that plans
 * the driver's gcc command lines and runs the rewriter's as steps for every compile of a build, so that a
 * compile costs a round trip on a unix socket instead of two JVM starts. It serves each connection on a
 * thread of its own (a {@code make -j} build's compiles run side by side), answers only its own user
 * (the socket's directory is the user's, mode 0700, checked before binding; each peer's uid, SO_PEERCRED,
 * is checked against it), and exits when no request came for its idle time. Whatever fails here costs the
 * client only time: without an answer it runs the step in a JVM of its own.
 *
 * <p>{@code CcServer SOCKET [IDLE_SECONDS]}.
 */
public final class CcServer {
    /** The largest request read: a command line far beyond any the kernel would pass. */
    static final int MAX_REQUEST = 16 << 20;

    private final Path socket;
    private final Duration idle;
    private final UserPrincipal owner;
    /** The time, in nanoseconds: System.nanoTime but in tests, which drive the idle exit by a clock of their own. */
    private final LongSupplier clock;
    // One decision under this lock: a request enters only while the server has not decided to exit, and it
    // decides only with no request in flight; so no request is cut by the exit, and one that comes after it
    // finds its connection closed at once (the client then starts a fresh server, or compiles in a JVM of its own).
    private int active;
    private long lastRequest;
    private boolean exiting;
    private final ExecutorService workers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "cc-request");
        t.setDaemon(true);
        return t;
    });
    private ServerSocketChannel channel;
    private Object boundKey;

    CcServer(Path socket, Duration idle) throws IOException { this(socket, idle, System::nanoTime); }

    CcServer(Path socket, Duration idle, LongSupplier clock) throws IOException {
        this.socket = socket.toAbsolutePath();
        this.idle = idle;
        this.owner = checkedDirectory(this.socket.getParent());
        this.clock = clock;
        this.lastRequest = clock.getAsLong();
    }

    public static void main(String[] args) {
        if (args.length < 1 || args.length > 2) {
            System.err.println("memtrace: usage: CcServer SOCKET [IDLE_SECONDS]");
            System.exit(2);
        }
        try {
            Duration idle = Duration.ofSeconds(args.length > 1 ? Long.parseLong(args[1]) : 300);
            CcServer server = new CcServer(Path.of(args[0]), idle);
            server.bind();
            server.serve();
        } catch (IOException | RuntimeException e) {
            System.err.println("memtrace: compile server: " + e.getMessage());
            System.exit(1);
        }
        System.exit(0);
    }

    /**
     * The directory's owner, after checking that it is a real directory (not a symbolic link) of this
     * process's user with mode 0700: anyone else who could write there could stand in for the server.
     */
    static UserPrincipal checkedDirectory(Path dir) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS))
            throw new IOException(dir + " is not a directory (or is a symbolic link)");
        int uid = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int self = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        if (uid != self) throw new IOException(dir + " belongs to uid " + uid + ", not to this user (" + self + ")");
        if (!Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS).equals(
                EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE)))
            throw new IOException(dir + " is not mode 0700");
        return Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Binds a fresh name and renames it onto the socket's path: a client never connects to a half-made
     * socket, and a dead server's stale socket file is replaced in one step (the client starts a server
     * only under the directory's lock, after its ping went unanswered).
     */
    void bind() throws IOException {
        Path fresh = socket.resolveSibling(socket.getFileName() + "." + ProcessHandle.current().pid() + ".new");
        Files.deleteIfExists(fresh);
        channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        channel.bind(UnixDomainSocketAddress.of(fresh), 64);
        Files.move(fresh, socket, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        boundKey = Files.readAttributes(socket, java.nio.file.attribute.BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
    }

    /** Accepts until idle; then removes the socket (if it is still this server's) and returns. */
    void serve() throws IOException { serve(Thread.ofPlatform().daemon().name("cc-idle").start(this::watchIdle)); }

    /**
     * Accepts until the socket is closed ({@code watchdog}'s {@link #exit}; a test's, driving {@link #idleExit}
     * itself, with {@code watchdog} null).
     */
    void serve(Thread watchdog) throws IOException {
        try {
            while (true) {
                SocketChannel client;
                try {
                    client = channel.accept();
                } catch (java.nio.channels.ClosedChannelException e) {
                    // the watchdog closed it: idle; it tidies the directory after the close, and the server
                    // has ended only when that is done (a test or a client may look at the directory next)
                    try {
                        if (watchdog != null) watchdog.join();
                    } catch (InterruptedException stop) {
                        Thread.currentThread().interrupt();
                    }
                    return;
                }
                if (!enter()) {
                    client.close(); // it came after the decision to exit: closed unanswered, the client goes elsewhere at once
                    continue;
                }
                workers.execute(() -> {
                    try (client) {
                        serve(client);
                    } catch (IOException | RuntimeException e) {
                        System.err.println("memtrace: compile server: " + e);
                    } finally {
                        leave();
                    }
                });
            }
        } finally {
            if (watchdog != null) watchdog.interrupt();
        }
    }

    /** A request accepted: in flight from now on, unless the server has decided to exit (false). */
    synchronized boolean enter() {
        if (exiting) return false;
        active++;
        lastRequest = clock.getAsLong();
        return true;
    }

    private synchronized void leave() {
        active--;
        lastRequest = clock.getAsLong();
    }

    /** Requests in flight. */
    synchronized int inFlight() { return active; }

    /**
     * Whether the server exits: true once it has been idle for its idle time with no request in flight, from
     * which on no request enters ({@link #enter}).
     */
    synchronized boolean idleExit() {
        if (!exiting && active == 0 && clock.getAsLong() - lastRequest > idle.toNanos()) exiting = true;
        return exiting;
    }

    /** After {@link #idleExit}: the socket removed (if it is still this server's), closed, the directory tidied. */
    void exit() throws IOException {
        removeSocket();
        channel.close(); // connections still queued are closed unanswered: their clients go elsewhere at once
        SocketDirectory.tidy(socket);
    }

    private void watchIdle() {
        try {
            while (true) {
                Thread.sleep(Math.min(1000, Math.max(10, idle.toMillis() / 4)));
                if (idleExit()) {
                    exit();
                    return;
                }
            }
        } catch (InterruptedException | IOException e) {
            // the server is going away anyway
        }
    }

    /** Removes the socket's path only while it still names the socket this server bound (not a successor's). */
    private void removeSocket() throws IOException {
        try {
            Object key = Files.readAttributes(socket, java.nio.file.attribute.BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
            if (key != null && key.equals(boundKey)) Files.delete(socket);
        } catch (java.nio.file.NoSuchFileException e) {
            // already gone
        }
    }

    private void serve(SocketChannel client) throws IOException {
        UnixDomainPrincipal peer = client.getOption(ExtendedSocketOptions.SO_PEERCRED);
        if (!peer.user().equals(owner)) {
            System.err.println("memtrace: compile server: refused a request from " + peer.user().getName());
            return;
        }
        CcRequest request = CcRequest.parse(readAll(client));
        byte[] reply = switch (request.kind()) {
            case PING -> "ok 0\n".getBytes(StandardCharsets.US_ASCII);
            case AS -> assemble(request);
            case PLAN -> plan(request);
        };
        ByteBuffer out = ByteBuffer.wrap(reply);
        while (out.hasRemaining()) client.write(out);
    }

    private static byte[] readAll(SocketChannel client) throws IOException {
        var bytes = new ByteArrayOutputStream();
        ByteBuffer buffer = ByteBuffer.allocate(64 << 10);
        while (client.read(buffer) >= 0) {
            bytes.write(buffer.array(), 0, buffer.position());
            buffer.clear();
            if (bytes.size() > MAX_REQUEST) throw new IOException("request larger than " + MAX_REQUEST + " bytes");
        }
        return bytes.toByteArray();
    }

    /** {@code ok STATUS\n} and then the step's messages, all of which are the client's stderr. */
    static byte[] assemble(CcRequest request) {
        var messages = new ByteArrayOutputStream();
        int status;
        try (var err = new PrintStream(messages, true, StandardCharsets.UTF_8)) {
            status = AsStep.forClient(err, Path.of(request.cwd()), request.arguments(), request.environment());
        }
        var reply = new ByteArrayOutputStream();
        reply.writeBytes(("ok " + status + "\n").getBytes(StandardCharsets.US_ASCII));
        reply.writeBytes(messages.toByteArray());
        return reply.toByteArray();
    }

    /**
     * NUL-terminated fields {@code ACTION STATUS STDOUT STDERR N ENV... WORD...}: ACTION {@code exit} (print
     * STDOUT and STDERR, exit with STATUS) or {@code exec} (print STDERR, set ENV — {@code NAME=VALUE}, or
     * {@code NAME} alone to unset it — and run the WORDs as the compiler command).
     */
    static byte[] plan(CcRequest request) {
        List<String> args = request.arguments();
        if (args.isEmpty() || !(args.getFirst().equals("cc") || args.getFirst().equals("c++")))
            throw new IllegalArgumentException("a plan request starts with cc or c++");
        List<String> fields = new ArrayList<>();
        CcPlan plan;
        try {
            plan = CcPlan.of(args.getFirst().equals("c++"), args.subList(1, args.size()), request.environment());
        } catch (LaunchException e) {
            plan = new CcPlan.Refusal(e.getMessage());
        }
        switch (plan) {
            case CcPlan.Help help -> fields.addAll(List.of("exit", "0", help.text(), "", "0"));
            case CcPlan.Refusal refusal -> fields.addAll(List.of("exit", "2", "", "memtrace: " + refusal.message() + "\n", "0"));
            case CcPlan.Compile compile -> {
                StringBuilder warnings = new StringBuilder();
                compile.warnings().forEach(w -> warnings.append(w).append('\n'));
                fields.addAll(List.of("exec", "0", "", warnings.toString(), Integer.toString(compile.environment().size())));
                for (Map.Entry<String, String> e : compile.environment().entrySet())
                    fields.add(e.getValue() == null ? e.getKey() : e.getKey() + "=" + e.getValue());
                fields.addAll(compile.command());
            }
        }
        var out = new ByteArrayOutputStream();
        for (String f : fields) {
            out.writeBytes(f.getBytes(StandardCharsets.UTF_8));
            out.write(0);
        }
        return out.toByteArray();
    }
}
