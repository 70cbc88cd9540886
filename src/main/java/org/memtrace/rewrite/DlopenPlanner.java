package org.memtrace.rewrite;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.symbols.ElfFile;

/**
 * The plans of libraries the program opens by {@code dlopen} while it runs (docs/rewriting.md, "Libraries
 * opened by dlopen"). The runtime, inside dlopen and before the library's constructors run, connects to
 * this UNIX socket (in a directory of mode 0700 that memtrace makes, named to the program by
 * {@code MEMTRACE_REWRITE_SOCKET}), sends {@code "<build-id hex> <absolute path>\n"} and waits; the answer
 * is {@code "plan <path>\n"} (from the cache, planned now if it is not there) or {@code "no <reason>\n"};
 * the runtime then says {@code "applied\n"} or {@code "failed <reason>\n"}. Each library's outcome is kept
 * for the summary: whether it was rewritten, at how many of its loads, and why not.
 */
public final class DlopenPlanner implements AutoCloseable {
    /** What became of one library (by path and build-id) over the run. */
    public static final class Outcome {
        private final Path library;
        private ModuleRewrite.Prepared prepared;
        private int loads, applied;
        private String reason;

        Outcome(Path library) { this.library = library; }

        public Path library() { return library; }

        /** The plan, when there was one (null when none could be made). */
        public synchronized ModuleRewrite.Prepared prepared() { return prepared; }

        public synchronized int loads() { return loads; }

        /** The loads at which the runtime applied the plan. */
        public synchronized int applied() { return applied; }

        /** Why a load was not rewritten (the last reason), or null. */
        public synchronized String reason() { return reason; }

        public synchronized boolean rewrittenEveryTime() { return applied == loads && loads > 0; }
    }

    private final Path cache, directory, socket;
    /** What each library's plan is made for: the run's selection ({@code --omega}) and probes. */
    private final PlanChoice choice;
    private final ServerSocketChannel server;
    private final Map<String, Outcome> outcomes = new LinkedHashMap<>();
    private final Thread acceptor;

    private DlopenPlanner(Path cache, Path directory, ServerSocketChannel server, PlanChoice choice) {
        this.cache = cache;
        this.choice = choice;
        this.directory = directory;
        this.socket = directory.resolve("plans");
        this.server = server;
        this.acceptor = Thread.ofPlatform().daemon().name("memtrace-dlopen-plans").unstarted(this::accept);
    }

    /** A planner listening on a fresh socket, its plans kept in {@code cache} ({@link RewriteCache}). */
    public static DlopenPlanner start(Path cache) throws IOException { return start(cache, PlanChoice.TRACE); }

    /** The same, the libraries' plans made for {@code choice} (a check run leaves glibc's libraries alone). */
    public static DlopenPlanner start(Path cache, PlanChoice choice) throws IOException {
        Path dir = Files.createTempDirectory("memtrace-rw"); // mode 0700: only this user connects
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            server.bind(UnixDomainSocketAddress.of(dir.resolve("plans")));
        } catch (IOException | RuntimeException e) {
            server.close();
            Files.deleteIfExists(dir);
            throw new IOException("cannot listen for the plans of libraries opened by dlopen in " + dir + ": " + e.getMessage(), e);
        }
        // a run refused between here and its end (an output it may not write) still leaves nothing behind
        dir.toFile().deleteOnExit();
        dir.resolve("plans").toFile().deleteOnExit();
        DlopenPlanner p = new DlopenPlanner(cache, dir, server, choice);
        p.acceptor.start();
        return p;
    }

    /** The socket's path, for {@code MEMTRACE_REWRITE_SOCKET}. */
    public Path socket() { return socket; }

    /** The libraries asked for so far, in the order they were first opened. */
    public List<Outcome> outcomes() {
        synchronized (outcomes) {
            return List.copyOf(outcomes.values());
        }
    }

    private void accept() {
        while (server.isOpen()) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            // a fork's child may ask while its parent waits for another plan: each connection on its own
            Thread.ofVirtual().start(() -> serve(ch));
        }
    }

    private void serve(SocketChannel ch) {
        try (ch; InputStream in = Channels.newInputStream(ch)) {
            String request = line(in);
            if (request == null) return;
            int space = request.indexOf(' ');
            if (space < 0) return;
            String id = request.substring(0, space);
            Path library = Path.of(request.substring(space + 1));
            Outcome o;
            synchronized (outcomes) {
                o = outcomes.computeIfAbsent(library + " " + id, k -> new Outcome(library));
            }
            String answer;
            ModuleRewrite.Prepared prepared = null;
            try {
                prepared = plan(library, id);
                answer = "plan " + prepared.plan();
            } catch (RewriteException | IOException | RuntimeException e) {
                answer = "no " + e.getMessage().replace('\n', ' ');
            }
            synchronized (o) {
                o.loads++;
                if (prepared != null) o.prepared = prepared;
                else o.reason = answer.substring(3);
            }
            ch.write(ByteBuffer.wrap((answer + "\n").getBytes(StandardCharsets.UTF_8)));
            if (prepared == null) return;
            String status = line(in);
            synchronized (o) {
                if ("applied".equals(status)) o.applied++;
                else o.reason = status == null ? "the program did not say whether it applied the plan" : status.replaceFirst("^failed ", "");
            }
        } catch (IOException e) {
            // the program went away mid-question: nothing to report for it
        }
    }

    /** The library's plan, from the cache or planned now, for the file that has the build-id the runtime saw. */
    private ModuleRewrite.Prepared plan(Path library, String id) throws IOException, RewriteException {
        if (id.equals("-")) throw new RewriteException("no build-id to find it by");
        ElfFile elf;
        try {
            elf = ElfFile.read(library);
        } catch (IOException | RuntimeException e) {
            throw new RewriteException("cannot read it: " + e.getMessage());
        }
        String onDisk = elf.buildIdHex().orElse("");
        if (!onDisk.equals(id)) throw new RewriteException("the file at its path is not the library loaded (build-id " + onDisk + ", loaded " + id + ")");
        return ModuleRewrite.prepareLibrary(library, cache, choice.forLibrary(library));
    }

    /** One line without its newline, or null at the end of the stream. */
    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int c; (c = in.read()) != '\n'; ) {
            if (c < 0) return b.size() == 0 ? null : b.toString(StandardCharsets.UTF_8);
            if (b.size() > 65536) throw new IOException("request too long");
            b.write(c);
        }
        return b.toString(StandardCharsets.UTF_8);
    }

    /** Stops listening and removes the socket and its directory. */
    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException e) {
            // closing a listening socket does not fail in a way that matters here
        }
        try {
            Files.deleteIfExists(socket);
            Files.deleteIfExists(directory);
        } catch (IOException e) {
            // a socket left in the temporary directory costs nothing
        }
    }

    /** Summary lines: per library rewritten, as the start-up ones, with its loads; and the libraries left, for the "not rewritten" line. */
    public record Summary(List<String> rewritten, List<String> left) {}

    public Summary summary() {
        List<String> rewritten = new ArrayList<>(), left = new ArrayList<>();
        for (Outcome o : outcomes()) {
            ModuleRewrite.Prepared p = o.prepared();
            String loads = o.loads() == 1 ? "its load" : o.loads() + " loads";
            if (p != null && o.applied() > 0) {
                rewritten.add("rewrite: " + p.counted(o.library().toString()) + "; opened by dlopen, rewritten at "
                        + (o.rewrittenEveryTime() ? (o.loads() == 1 ? "its load" : "each of its " + loads) : o.applied() + " of " + loads
                        + " (not at the others: " + o.reason() + ")"));
            } else {
                left.add(o.library().getFileName() + " (opened by dlopen: " + o.reason() + ")");
            }
        }
        return new Summary(rewritten, left);
    }
}
