package org.memtrace.cc;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.launch.NativeFiles;

/**
 * The gcc wrapper's as step when the compile server fails it: no server behind the socket's path, or one
 * that dies with the request (it accepts and closes without an answer). Either way the step runs in a JVM
 * of its own and the object is instrumented: a dead server costs time, never a failed build.
 */
class CcFallbackTest {
    @TempDir Path dir;

    private String compile(Path socket) throws Exception {
        Files.writeString(dir.resolve("x.c"), "int g[4]; void f(int i) { g[i & 3] = i; }\n");
        Path state = Files.createDirectories(dir.resolve("state"));
        var pb = new ProcessBuilder("gcc", "-O2", "-c", "-o", "x.o", "x.c", "-wrapper", NativeFiles.ccWrapper().toString())
                .directory(dir.toFile()).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        env.put("MEMTRACE_CC_STATE", state.toString());
        env.put("MEMTRACE_CC_SOCKET", socket.toString());
        env.put("MEMTRACE_CC_OPTIONS", "");
        env.put("MEMTRACE_JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());
        env.put("MEMTRACE_CLASSPATH", System.getProperty("java.class.path"));
        env.put("MEMTRACE_JAVA_OPTIONS", CcPlan.REWRITER_JAVA_OPTIONS);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        Process nm = new ProcessBuilder("nm", "-u", dir.resolve("x.o").toString()).redirectErrorStream(true).start();
        String symbols = new String(nm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(nm.waitFor()).isZero();
        assertThat(symbols).contains("memtrace_start");
        return out;
    }

    @Test
    void noServerBehindTheSocket() throws Exception {
        assertThat(compile(dir.resolve("none.sock"))).isEmpty();
    }

    @Test
    void aServerThatDiesWithTheRequest() throws Exception {
        Path socket = dir.resolve("dying.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            var accepted = new java.util.concurrent.atomic.AtomicInteger();
            Thread dying = Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (true) {
                        SocketChannel c = server.accept();
                        accepted.incrementAndGet();
                        c.read(java.nio.ByteBuffer.allocate(64)); // takes the start of the request, then dies
                        c.close();
                    }
                } catch (java.io.IOException e) {
                    // closed at the end of the test
                }
            });
            assertThat(compile(socket)).isEmpty();
            assertThat(accepted.get()).as("the wrapper asked the server first").isEqualTo(1);
            assertThat(dying.isAlive()).isTrue();
        }
    }
}
