package org.memtrace.cc;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shell client of the compile server (scripts/cc-client.sh) when the server is dead or exiting: a server
 * that ends at its start is given up as soon as it has ended, with a note, and not waited for (it was 30 s); a
 * plan request whose connection is closed unanswered (a server that decided to exit, CcServerTest) goes to a
 * fresh server at once, and when that cannot start, to the launcher's own JVM. The client's functions run in
 * bash with a JVM that fails at once in place of the server's.
 */
class CcClientTest {
    @TempDir Path dir;

    private record Outcome(int status, String out, String err) {}

    private Path run;

    @org.junit.jupiter.api.BeforeEach
    void privateDirectory() throws Exception {
        run = Files.createDirectory(dir.resolve("run"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    }

    /** Runs {@code script} in bash after sourcing the client, with a JAVA_HOME whose java exits 1 at once. */
    private Outcome bash(String script) throws Exception {
        Path java = Files.createDirectories(dir.resolve("jdk/bin")).resolve("java");
        Files.writeString(java, "#!/bin/sh\necho 'memtrace: compile server: cannot start here' >&2\nexit 1\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwx------"));
        String prelude = ". " + Path.of("scripts/cc-client.sh").toAbsolutePath() + "\n"
                + "JAVA_HOME=" + dir.resolve("jdk") + " jar=" + dir.resolve("none.jar") + " memtrace_cc_java_options=()\n"
                + "memtrace_cc_socket_dir() { memtrace_cc_dir=" + run + "; memtrace_cc_key=1; }\n";
        Process p = new ProcessBuilder("bash", "-c", prelude + script).directory(dir.toFile()).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return new Outcome(p.exitValue(), out, err);
    }

    private String note() {
        return "memtrace cc: note: the compile server did not start (" + run.resolve("cc-1.log") + " says why); compiling without it\n";
    }

    @Test
    void aServerThatEndsAtItsStartIsGivenUpWithANote() throws Exception {
        Outcome o = bash("memtrace_cc_start_server " + run.resolve("cc-1.sock") + "; echo \"status $?\"");
        assertThat(o.out()).isEqualTo("status 1\n");
        assertThat(o.err()).isEqualTo(note());
        assertThat(Files.readString(run.resolve("cc-1.log"))).isEqualTo("memtrace: compile server: cannot start here\n");
    }

    /**
     * An exiting server's socket: every connection accepted and closed unanswered. The plan request gets one,
     * then the ping before starting a fresh server (and the pings while it starts); the fresh one ends at its
     * start, and the client returns to the launcher (status 0, nothing run), which compiles in its own JVM.
     */
    @Test
    void aPlanClosedUnansweredGoesToAFreshServerThenToTheLaunchersJvm() throws Exception {
        AtomicInteger accepted = new AtomicInteger();
        Outcome o;
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(run.resolve("cc-1.sock")));
            Thread exiting = Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (true) {
                        SocketChannel c = server.accept();
                        accepted.incrementAndGet();
                        c.close();
                    }
                } catch (java.io.IOException e) {
                    // closed at the end of the test
                }
            });
            o = bash("memtrace_cc_client cc -c x.c; echo \"returned $?\"");
            assertThat(exiting.isAlive()).isTrue();
        }
        assertThat(o.out()).isEqualTo("returned 0\n");
        assertThat(o.err()).isEqualTo(note());
        assertThat(accepted.get()).as("the plan request, the ping before the start").isGreaterThanOrEqualTo(2);
    }
}
