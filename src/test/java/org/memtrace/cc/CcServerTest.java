package org.memtrace.cc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The compile server over its real socket: the directory checks it refuses to start without, each kind of
 * request with the exact answer, as steps of two clients at once, and the idle exit that removes its socket,
 * neither cutting a request in flight nor keeping one that comes after it waiting.
 */
class CcServerTest {
    @TempDir Path dir;
    private Path run;
    private Path socket;
    private Thread serving;

    @BeforeEach
    void privateDirectory() throws IOException {
        run = Files.createDirectory(dir.resolve("run"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        socket = run.resolve("cc-test.sock");
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (serving != null) serving.join(10_000);
    }

    private CcServer start(Duration idle) throws Exception {
        CcServer server = new CcServer(socket, idle);
        server.bind();
        serving = Thread.ofPlatform().start(() -> {
            try {
                server.serve();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        return server;
    }

    private byte[] ask(CcRequest request) throws IOException {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            ch.write(ByteBuffer.wrap(request.encode()));
            ch.shutdownOutput();
            var out = new ByteArrayOutputStream();
            ByteBuffer b = ByteBuffer.allocate(8192);
            while (ch.read(b) >= 0) {
                out.write(b.array(), 0, b.position());
                b.clear();
            }
            return out.toByteArray();
        }
    }

    /**
     * Whether the request's connection was closed with no answer: nothing to read, or (closed before the
     * request was all written) a broken pipe or a reset, as socat sees it and gives up.
     */
    private boolean unanswered(CcRequest request) {
        try {
            return ask(request).length == 0;
        } catch (IOException closed) {
            return true;
        }
    }

    private static List<String> fields(byte[] reply) {
        List<String> f = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < reply.length; i++) {
            if (reply[i] == 0) {
                f.add(new String(reply, start, i - start, StandardCharsets.UTF_8));
                start = i + 1;
            }
        }
        assertThat(start).isEqualTo(reply.length);
        return f;
    }

    private CcRequest request(CcRequest.Kind kind, Map<String, String> env, String... args) {
        return new CcRequest(kind, dir.toString(), env, List.of(args));
    }

    @Test
    void aDirectoryOthersCanEnterOrALinkIsRefused() throws Exception {
        Path open = Files.createDirectory(dir.resolve("open"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        assertThatThrownBy(() -> new CcServer(open.resolve("s.sock"), Duration.ofSeconds(1))).hasMessageContaining("not mode 0700");
        Path link = Files.createSymbolicLink(dir.resolve("link"), run);
        assertThatThrownBy(() -> new CcServer(link.resolve("s.sock"), Duration.ofSeconds(1))).hasMessageContaining("symbolic link");
        assertThatThrownBy(() -> new CcServer(Path.of("/tmp/s.sock"), Duration.ofSeconds(1))).hasMessageContaining("not mode 0700");
    }

    @Test
    void pingPlanAndRefusalAnswerExactly() throws Exception {
        start(Duration.ofSeconds(30));
        assertThat(new String(ask(request(CcRequest.Kind.PING, Map.of())), StandardCharsets.US_ASCII)).isEqualTo("ok 0\n");

        List<String> compile = fields(ask(request(CcRequest.Kind.PLAN, Map.of("MEMTRACE_GCC", "gcc"), "cc", "--omega", "0.5", "-c", "-pipe", "x.c")));
        assertThat(compile.subList(0, 5)).containsExactly("exec", "0", "", "", "6");
        assertThat(compile.subList(5, 11)).extracting(s -> s.split("=", 2)[0])
                .containsExactly("MEMTRACE_CC_OPTIONS", "MEMTRACE_CC_SHARED", "MEMTRACE_JAVA", "MEMTRACE_CLASSPATH", "MEMTRACE_JAVA_OPTIONS",
                        "MEMTRACE_CC_CHECK");
        assertThat(compile.get(10)).isEqualTo("MEMTRACE_CC_CHECK"); // unset: not --check
        assertThat(compile.get(5)).isEqualTo("MEMTRACE_CC_OPTIONS=--omega 0.5");
        assertThat(compile.get(6)).isEqualTo("MEMTRACE_CC_SHARED"); // unset: not -shared
        List<String> words = compile.subList(11, compile.size());
        assertThat(words.get(0)).isEqualTo("gcc");
        assertThat(words.get(1)).isEqualTo("-wrapper");
        assertThat(words.subList(3, words.size())).containsExactly("-c", "x.c"); // -pipe dropped, no runtime: no link

        List<String> link = fields(ask(request(CcRequest.Kind.PLAN, Map.of(), "c++", "-o", "prog", "a.o")));
        assertThat(link.get(11)).isEqualTo("g++");
        assertThat(link).contains("-lmemtrace-rt");

        List<String> refused = fields(ask(request(CcRequest.Kind.PLAN, Map.of(), "cc", "--omega", "1.5", "x.c")));
        assertThat(refused.subList(0, 3)).containsExactly("exit", "2", "");
        assertThat(refused.get(3)).startsWith("memtrace: ").endsWith(" (see 'memtrace cc --help')\n").hasLineCount(1);

        List<String> help = fields(ask(request(CcRequest.Kind.PLAN, Map.of(), "cc", "--help")));
        assertThat(help.subList(0, 2)).containsExactly("exit", "0");
        assertThat(help.get(2)).startsWith("Usage: memtrace cc ");
    }

    @Test
    void asStepsOfTwoClientsAtOnceAreInstrumentedAndAStrayInputIsNot() throws Exception {
        start(Duration.ofSeconds(30));
        Path state = Files.createDirectory(dir.resolve("state"));
        List<String> listed = new ArrayList<>();
        for (String name : List.of("a", "b")) {
            Files.writeString(dir.resolve(name + ".c"), "int " + name + "[8]; void f_" + name + "(int i) { " + name + "[i & 7] = i; }\n");
            Process cc1 = new ProcessBuilder("gcc", "-O2", "-S", "-o", name + ".s", name + ".c").directory(dir.toFile()).inheritIO().start();
            assertThat(cc1.waitFor()).isZero();
            listed.add(name + ".s"); // relative, as gcc -save-temps would name it: the request's cwd resolves it
        }
        Files.write(state.resolve("cc1-outputs"), listed);
        Map<String, String> env = Map.of("MEMTRACE_CC_STATE", state.toString(), "MEMTRACE_CC_OPTIONS", "", "MEMTRACE_CC_SHARED", "");
        String as = "/usr/bin/as";
        var pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<byte[]>> replies = new ArrayList<>();
            for (String name : List.of("a", "b"))
                replies.add(pool.submit(() -> ask(request(CcRequest.Kind.AS, env, as, "--64", "-o", name + ".o", name + ".s"))));
            for (Future<byte[]> r : replies) assertThat(new String(r.get(120, TimeUnit.SECONDS), StandardCharsets.UTF_8)).isEqualTo("ok 0\n");
        } finally {
            pool.shutdown();
        }
        for (String name : List.of("a", "b")) assertThat(undefined(dir.resolve(name + ".o"))).contains("memtrace_start");

        Files.copy(dir.resolve("a.s"), dir.resolve("hand.s"));
        String stray = new String(ask(request(CcRequest.Kind.AS, env, as, "--64", "-o", "hand.o", "hand.s")), StandardCharsets.UTF_8);
        assertThat(stray).isEqualTo("ok 0\nmemtrace cc: note: hand.s is not compiler output, assembled uninstrumented\n");
        assertThat(undefined(dir.resolve("hand.o"))).doesNotContain("memtrace_start");

        Files.writeString(dir.resolve("bad.s"), "\tbogus_instruction %eax\n");
        Files.write(state.resolve("cc1-outputs"), List.of("bad.s"));
        String bad = new String(ask(request(CcRequest.Kind.AS, env, as, "--64", "-o", "bad.o", "bad.s")), StandardCharsets.UTF_8);
        assertThat(bad).startsWith("ok 1\n").contains("bad.s", "bogus_instruction"); // the assembler's own message
    }

    /**
     * The idle time runs from the server's start, so a test thread held off the CPU for longer (a stall of
     * 0.5 s here made the ping find no socket) sees a server that ended unasked: it has then shown the same
     * ending, and the test starts one with twice the time until its ping gets in first.
     */
    @Test
    void anIdleServerRemovesItsSocketAndEnds() throws Exception {
        for (Duration idle = Duration.ofMillis(300); ; idle = idle.multipliedBy(2)) {
            start(idle);
            try {
                assertThat(new String(ask(request(CcRequest.Kind.PING, Map.of())), StandardCharsets.US_ASCII)).isEqualTo("ok 0\n");
                break;
            } catch (IOException endedFirst) {
                serving.join(10_000);
                assertThat(serving.isAlive()).isFalse();
                assertThat(socket).doesNotExist();
                assertThat(idle).as("no ping got in before the idle time").isLessThan(Duration.ofSeconds(20));
            }
        }
        serving.join(10_000);
        assertThat(serving.isAlive()).isFalse();
        assertThat(socket).doesNotExist();
    }

    @Test
    void anIdleServerTakesAwayItsEmptyLogDeadSocketsAndOldEmptyLogs() throws Exception {
        Path ownLog = Files.createFile(run.resolve("cc-test.log"));
        Path dead = run.resolve("cc-dead.sock");
        try (var gone = java.nio.channels.ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            gone.bind(UnixDomainSocketAddress.of(dead)); // closing leaves the file, as a killed server does
        }
        FileTime old = FileTime.from(Instant.now().minus(SocketDirectory.STARTING).minusSeconds(60));
        Path oldLog = Files.setLastModifiedTime(Files.createFile(run.resolve("cc-old.log")), old);
        Path startingLog = Files.createFile(run.resolve("cc-starting.log"));
        Path said = Files.setLastModifiedTime(Files.writeString(run.resolve("cc-said.log"), "memtrace: compile server: x\n"), old);
        Path liveLog = Files.setLastModifiedTime(Files.createFile(run.resolve("cc-live.log")), old);
        try (var live = java.nio.channels.ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            live.bind(UnixDomainSocketAddress.of(run.resolve("cc-live.sock")));
            start(Duration.ofMillis(300));
            serving.join(10_000);
            assertThat(serving.isAlive()).isFalse();
            try (var names = Files.list(run)) {
                assertThat(names.map(p -> p.getFileName().toString()).sorted())
                        .containsExactly("cc-live.log", "cc-live.sock", "cc-said.log", "cc-starting.log");
            }
        }
        assertThat(List.of(ownLog, dead, oldLog)).noneMatch(Files::exists);
        assertThat(List.of(startingLog, said, liveLog)).allMatch(Files::exists);
    }

    @Test
    void aMalformedRequestGetsNoAnswerAndTheServerGoesOn() throws Exception {
        start(Duration.ofSeconds(30));
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            ch.write(ByteBuffer.wrap("memtrace-cc-1\0frob\0".getBytes(StandardCharsets.US_ASCII)));
            ch.shutdownOutput();
            assertThat(ch.read(ByteBuffer.allocate(16))).isEqualTo(-1);
        }
        assertThat(new String(ask(request(CcRequest.Kind.PING, Map.of())), StandardCharsets.US_ASCII)).isEqualTo("ok 0\n");
    }

    /** A server on a clock of the test's, serving with no idle watchdog: the test drives the idle exit itself. */
    private CcServer startDriven(java.util.concurrent.atomic.AtomicLong clock) throws Exception {
        CcServer server = new CcServer(socket, Duration.ofSeconds(1), clock::get);
        server.bind();
        serving = Thread.ofPlatform().start(() -> {
            try {
                server.serve(null);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        return server;
    }

    private static void until(java.util.function.BooleanSupplier state) throws InterruptedException {
        for (int i = 0; i < 30_000 && !state.getAsBoolean(); i++) Thread.sleep(1); // a state to reach, not a time to assert
        assertThat(state.getAsBoolean()).as("state reached").isTrue();
    }

    /**
     * The idle time passes while a request is in flight (its client still sending): the server does not exit,
     * the request is answered whole, and only an idle time after it does the server exit.
     */
    @Test
    void aRequestInFlightWhenTheIdleTimePassesIsAnsweredWhole() throws Exception {
        var clock = new java.util.concurrent.atomic.AtomicLong();
        CcServer server = startDriven(clock);
        byte[] ping = request(CcRequest.Kind.PING, Map.of()).encode();
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            ch.write(ByteBuffer.wrap(ping, 0, 5)); // a part: the server reads on, the request in flight
            until(() -> server.inFlight() == 1);
            clock.addAndGet(Duration.ofHours(1).toNanos());
            assertThat(server.idleExit()).as("idle, but a request in flight").isFalse();
            ch.write(ByteBuffer.wrap(ping, 5, ping.length - 5));
            ch.shutdownOutput();
            var out = new ByteArrayOutputStream();
            ByteBuffer b = ByteBuffer.allocate(64);
            while (ch.read(b) >= 0) {
                out.write(b.array(), 0, b.position());
                b.clear();
            }
            assertThat(out.toString(StandardCharsets.US_ASCII)).isEqualTo("ok 0\n");
        }
        until(() -> server.inFlight() == 0);
        assertThat(server.idleExit()).as("the request just ended: its idle time starts now").isFalse();
        clock.addAndGet(Duration.ofSeconds(2).toNanos());
        assertThat(server.idleExit()).isTrue();
        server.exit();
        serving.join(10_000);
        assertThat(serving.isAlive()).isFalse();
        assertThat(socket).doesNotExist();
    }

    /**
     * A request that comes once the server decided to exit, before its socket is gone (the idle exit's race),
     * finds its connection closed unanswered at once, however long the exit then takes: its client goes to a
     * fresh server or its own JVM (scripts/cc-client.sh, CcClientTest) instead of waiting.
     */
    @Test
    void aRequestAfterTheDecisionToExitIsClosedUnanswered() throws Exception {
        var clock = new java.util.concurrent.atomic.AtomicLong();
        CcServer server = startDriven(clock);
        assertThat(server.idleExit()).isFalse();
        clock.addAndGet(Duration.ofSeconds(2).toNanos());
        assertThat(server.idleExit()).isTrue();
        assertThat(socket).exists(); // decided, not yet gone
        assertThat(unanswered(request(CcRequest.Kind.PING, Map.of()))).isTrue();
        assertThat(unanswered(request(CcRequest.Kind.PLAN, Map.of(), "cc", "-c", "x.c"))).isTrue();
        assertThat(server.inFlight()).isZero();
        assertThat(serving.isAlive()).as("the server goes on to its exit").isTrue();
        assertThat(server.idleExit()).as("once decided, decided").isTrue();
        server.exit();
        serving.join(10_000);
        assertThat(serving.isAlive()).isFalse();
        assertThat(socket).doesNotExist();
    }

    private static String undefined(Path object) throws Exception {
        Process nm = new ProcessBuilder("nm", "-u", object.toString()).redirectErrorStream(true).start();
        String out = new String(nm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(nm.waitFor()).as(out).isZero();
        return out;
    }
}
