package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * Dinero IV, the reference trace-driven cache simulator, on memtrace's exports of one recorded trace,
 * against {@code memtrace cachesim} on the trace itself. No Debian package has Dinero IV, so the test
 * builds it from source: {@code dineroIV} on the PATH if there is one, else the sources named by the
 * system property {@code memtrace.dinero} or the environment variable {@code MEMTRACE_DINERO} (a source
 * directory, a .tar.gz or a git directory such as a mirror of github.com/atos-tools/dineroIV), else the
 * tarball of that repository, downloaded. Offline with none of them, it is skipped, saying so. The build
 * is kept in target/dinero for the next run.
 */
class DineroComparisonTest {
    private static final String DOWNLOAD = "https://github.com/atos-tools/dineroIV/archive/refs/heads/master.tar.gz";

    @TempDir static Path dir;
    static Path dinero, stream, xdin, din;
    /** Why Dinero IV cannot run here, or null: each test is skipped with it (a skip in BeforeAll shows no reason). */
    static String unavailable;

    @BeforeAll
    static void prepare() throws Exception {
        dinero = dineroIV();
        if (dinero == null) return;
        Path exe = Gcc.compile(dir, "dinero_mix.c", "dinero_mix", "-O1", "-g", "-no-pie");
        stream = dir.resolve("mix.stream");
        var r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", dir.resolve("mix.trace").toString(), "--save-stream", stream.toString(), "--", exe.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        xdin = dir.resolve("mix.xdin");
        din = dir.resolve("mix.din");
        for (Path out : List.of(xdin, din)) {
            var c = Cli.run(dir, "convert", stream.toString(), "--to", out.getFileName().toString().substring(4), "-o", out.toString());
            assertThat(c.status()).as(c.stderr()).isZero();
        }
    }

    /** Dinero's "Demand Fetches" or "Demand Misses" row: total, instruction, data, read, write, misc. */
    private static long[] row(String output, String name) {
        for (String line : output.split("\n")) {
            if (!line.strip().startsWith(name)) continue;
            String[] f = line.strip().substring(name.length()).strip().split("\\s+");
            long[] v = new long[f.length];
            for (int i = 0; i < f.length; i++) v[i] = (long) Double.parseDouble(f[i]);
            return v;
        }
        throw new AssertionError("no '" + name + "' in Dinero's output:\n" + output);
    }

    private static String runDinero(Path trace, String informat, String geometry, String policy) throws Exception {
        Assumptions.assumeTrue(unavailable == null, unavailable);
        String[] g = geometry.split(":");
        Path out = Files.createTempFile(dir, "dinero", ".txt");
        Process p = new ProcessBuilder(dinero.toString(), "-informat", informat, "-l1-dsize", g[0], "-l1-dassoc", g[1], "-l1-dbsize", g[2],
                "-l1-drepl", policy.substring(0, 1), "-l1-dwalloc", "a", "-l1-dwback", "a")
                .redirectInput(trace.toFile()).redirectOutput(out.toFile()).redirectErrorStream(true).start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        String text = Files.readString(out);
        assertThat(p.exitValue()).as(text).isZero();
        return text;
    }

    private static JsonNode cachesim(String geometry, String policy) throws Exception {
        Path json = Files.createTempFile(dir, "cachesim", ".json");
        Files.delete(json);
        var r = Cli.run(dir, "cachesim", stream.toString(), "--l1", geometry, "--policy", policy, "--json", json.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        return new ObjectMapper().readTree(Files.readString(json)).get("levels").get(0);
    }

    /**
     * The extended din carries each access's size, so Dinero splits a straddling access over two lines as
     * cachesim does: same reads, writes and misses of each. Dinero copies every dirty line back when the
     * trace ends; cachesim counts only evictions, so Dinero's bytes to memory exceed cachesim's writebacks
     * by the dirty lines left in the cache, at most its number of lines.
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"8k:4:64, lru", "8k:4:64, fifo", "32k:8:64, lru", "1k:1:64, lru", "16k:2:32, fifo"})
    void dineroCountsTheSameReadsWritesAndMissesOnTheExtendedDin(String geometry, String policy) throws Exception {
        String d = runDinero(xdin, "D", geometry, policy);
        JsonNode m = cachesim(geometry, policy);
        long[] fetches = row(d, "Demand Fetches"), misses = row(d, "Demand Misses");
        assertThat(new long[] {fetches[3], fetches[4], misses[3], misses[4]}).as(d).containsExactly(
                m.get("loads").asLong(), m.get("stores").asLong(), m.get("loadMisses").asLong(), m.get("storeMisses").asLong());
        assertThat(fetches[1]).isZero();
        String[] g = geometry.split(":");
        long line = Long.parseLong(g[2]), lines = (long) Integer.parseInt(g[0].replace("k", "")) * 1024 / line;
        long copiedBack = row(d, "Bytes To Memory")[0] / line;
        assertThat(copiedBack - m.get("writebacks").asLong()).isBetween(0L, lines);
    }

    /**
     * The traditional din has no size: Dinero reads every line as the aligned 4-byte word holding its address,
     * so it sees one reference per line of the file and never a straddling access, while cachesim counts
     * a straddling access as two. The references are the file's lines; the misses differ.
     */
    @Test
    void dineroReadsTheTraditionalDinAsOneWordPerLine() throws Exception {
        String d = runDinero(din, "d", "8k:4:64", "lru");
        long lines = Files.readAllLines(din).size();
        assertThat(row(d, "Demand Fetches")[0]).isEqualTo(lines);
        JsonNode m = cachesim("8k:4:64", "lru");
        assertThat(m.get("accesses").asLong()).isGreaterThan(lines);
    }

    /** The Dinero IV binary: on the PATH, built earlier into target/dinero, or built now; null (and {@link #unavailable} said) when none can be had. */
    private static Path dineroIV() throws Exception {
        for (String p : System.getenv().getOrDefault("PATH", "").split(":")) {
            Path c = Path.of(p.isEmpty() ? "." : p, "dineroIV");
            if (Files.isExecutable(c)) return c;
        }
        Path build = Path.of("target", "dinero").toAbsolutePath();
        Path binary = build.resolve("dineroIV");
        if (Files.isExecutable(binary)) return binary;
        Path src = dir.resolve("dinero-src");
        Files.createDirectories(src);
        String given = System.getProperty("memtrace.dinero", System.getenv("MEMTRACE_DINERO"));
        if (given != null && Files.isDirectory(Path.of(given, "objects")) || given != null && Files.isRegularFile(Path.of(given, "HEAD"))) {
            sh(src, "git --git-dir '" + given + "' archive HEAD | tar x");
        } else if (given != null && Files.isDirectory(Path.of(given))) {
            sh(src, "cp -r '" + given + "'/. .");
        } else {
            Path tarball = given != null ? Path.of(given) : download();
            if (tarball == null) return null;
            sh(src, "tar xzf '" + tarball + "' --strip-components=1");
        }
        sh(src, "./configure >/dev/null && make dineroIV >/dev/null");
        Files.createDirectories(build);
        Files.copy(src.resolve("dineroIV"), binary);
        return binary;
    }

    private static Path download() throws Exception {
        Path tarball = dir.resolve("dineroIV.tar.gz");
        try (HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL).connectTimeout(Duration.ofSeconds(15)).build()) {
            HttpResponse<Path> r = http.send(HttpRequest.newBuilder(URI.create(DOWNLOAD)).timeout(Duration.ofSeconds(60)).build(),
                    HttpResponse.BodyHandlers.ofFile(tarball));
            if (r.statusCode() == 200) return tarball;
            unavailable = "Dinero IV: " + DOWNLOAD + " answered " + r.statusCode();
        } catch (IOException e) {
            unavailable = "Dinero IV is not installed (no Debian package has it) and its sources cannot be downloaded from "
                    + DOWNLOAD + " (" + e + "); set MEMTRACE_DINERO to a source directory, tarball or git mirror";
        }
        System.err.println("DineroComparisonTest skipped: " + unavailable);
        return null;
    }

    private static void sh(Path in, String command) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", command).directory(in.toFile()).redirectErrorStream(true).start();
        String out;
        try (InputStream s = p.getInputStream()) {
            out = new String(s.readAllBytes());
        }
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(command + "\n" + out).isZero();
    }
}
