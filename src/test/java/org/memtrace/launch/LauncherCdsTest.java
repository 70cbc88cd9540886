package org.memtrace.launch;

import static org.assertj.core.api.Assertions.*;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher's class-data archive (the script `memtrace`, docs/madt.md "Start-up"): made once per jar by a
 * training run in the background, and every way it can be missing, unusable or mismatched falls back to a
 * normal start that prints nothing of its own. The real script runs on a copy of the tree whose jar is a
 * stand-in (LauncherProbe), so the test needs no packaged build.
 */
class LauncherCdsTest {
    private static final String PROBE = LauncherProbe.class.getName().replace('.', '/') + ".class";

    @TempDir Path dir;
    private Path root;
    private Path jar;
    private Path cache;

    record Outcome(int status, String out, String err) {}

    @BeforeEach
    void copyOfTheLauncher() throws IOException {
        root = dir.resolve("tree");
        Files.createDirectories(root.resolve("scripts"));
        Files.createDirectories(root.resolve("target"));
        Path repo = Path.of("").toAbsolutePath();
        Files.copy(repo.resolve("memtrace"), root.resolve("memtrace"));
        Files.copy(repo.resolve("scripts/env.sh"), root.resolve("scripts/env.sh"));
        jar = root.resolve("target/memtrace.jar");
        writeProbeJar(jar);
        cache = dir.resolve("cache");
    }

    @Test
    void aMissingArchiveIsMadeInTheBackgroundWhileTheFirstRunStartsNormally() throws Exception {
        assertThat(launch(cache, "--version")).isEqualTo(new Outcome(0, "probe --version\n", ""));
        waitForTraining();
        List<Path> archives = archives();
        assertThat(archives).singleElement().satisfies(a -> assertThat(Files.size(a)).isPositive());
        // the next start maps it, and still says nothing but the program's words
        assertThat(launch(cache, "run", "x")).isEqualTo(new Outcome(0, "probe run x\n", ""));
        assertThat(archives()).isEqualTo(archives);
    }

    @Test
    void aDamagedOrMismatchedArchiveIsIgnoredSilently() throws Exception {
        launch(cache, "--version");
        waitForTraining();
        Path archive = archives().getFirst();
        byte[] good = Files.readAllBytes(archive);
        Files.writeString(archive, "not an archive");
        assertThat(launch(cache, "a")).isEqualTo(new Outcome(0, "probe a\n", ""));
        Files.write(archive, java.util.Arrays.copyOf(good, good.length / 3));
        assertThat(launch(cache, "b")).isEqualTo(new Outcome(0, "probe b\n", ""));
        // a rebuilt jar is another key; give it the old jar's archive under its own name: a real mismatch
        Files.setLastModifiedTime(jar, FileTime.fromMillis(Files.getLastModifiedTime(jar).toMillis() - 86_400_000L));
        Files.delete(archive);
        launch(cache, "c");
        waitForTraining();
        Path rebuilt = archives().getFirst();
        Files.write(rebuilt, good);
        assertThat(launch(cache, "d")).isEqualTo(new Outcome(0, "probe d\n", ""));
    }

    @Test
    void anUnwritableCacheSkipsTheArchive() throws Exception {
        Path notADirectory = Files.writeString(dir.resolve("file"), "x");
        assertThat(launch(notADirectory, "--version")).isEqualTo(new Outcome(0, "probe --version\n", ""));
        assertThat(Files.readString(notADirectory)).isEqualTo("x");
    }

    /**
     * A cache under a directory others can write (HOME kept by sudo -E, a world-writable one) could be renamed
     * away between the check and the JVM's mapping, and another archive put in its place: no cache is made.
     */
    @Test
    void aCacheUnderADirectoryOthersCanWriteIsNeverUsed() throws Exception {
        Path open = Files.createDirectories(dir.resolve("open"));
        Files.setPosixFilePermissions(open, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThat(launch(open.resolve("cache"), "--version")).isEqualTo(new Outcome(0, "probe --version\n", ""));
        try (Stream<Path> files = Files.list(open)) {
            assertThat(files).isEmpty();
        }
        // sticky, as /tmp: others cannot rename what is ours there, so the cache is made
        assertThat(new ProcessBuilder("chmod", "1777", open.toString()).start().waitFor()).isZero();
        cache = open.resolve("cache");
        launch(cache, "--version");
        waitForTraining();
        assertThat(archives()).singleElement();
    }

    @Test
    void aFailedTrainingLeavesAMarkerInsteadOfAnArchive() throws Exception {
        // a jar whose program fails: the training run fails with it
        writeJar(jar, "org/memtrace/launch/NoSuchMain");
        Outcome o = launch(cache, "--version");
        assertThat(o.status()).isNotZero();
        waitForTraining();
        assertThat(archives()).isEmpty();
        try (Stream<Path> files = Files.list(cache.resolve("memtrace"))) {
            assertThat(files.map(p -> p.getFileName().toString())).anyMatch(n -> n.endsWith(".aot.failed"))
                    .noneMatch(n -> n.endsWith(".tmp"));
        }
    }

    @Test
    void archivesOfGoneCheckoutsGoAndAtMostFourStay() throws Exception {
        Path memtrace = Files.createDirectories(cache.resolve("memtrace"));
        // another checkout that still has its jar, one deleted, and one whose jar is gone (cleaned)
        Path kept = Files.createDirectories(dir.resolve("kept/target"));
        Files.writeString(kept.resolve("memtrace.jar"), "jar");
        Files.writeString(memtrace.resolve("cds-111.root"), dir.resolve("kept") + "\n");
        Files.writeString(memtrace.resolve("cds-222.root"), dir.resolve("deleted") + "\n");
        Files.createDirectories(dir.resolve("cleaned"));
        Files.writeString(memtrace.resolve("cds-333.root"), dir.resolve("cleaned") + "\n");
        long now = System.currentTimeMillis();
        Path keptArchive = old(memtrace, "cds-111-1-2-3.aot", now - 1_000);
        Path deletedArchive = old(memtrace, "cds-222-1-2-3.jsa", now - 1_000);
        Path deletedMarker = old(memtrace, "cds-222-4-5-6.aot.failed", now - 1_000);
        Path cleanedArchive = old(memtrace, "cds-333-1-2-3.aot", now - 1_000);
        // ten class-data archives of older launchers that noted no root, trained an hour apart: they count too
        List<Path> unnoted = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) unnoted.add(old(memtrace, "cds-9" + i + "-1-2-3.jsa", now - 3_600_000L * (i + 1)));

        assertThat(launch(cache, "--version")).isEqualTo(new Outcome(0, "probe --version\n", ""));
        waitForTraining();
        assertThat(deletedArchive).doesNotExist();
        assertThat(deletedMarker).doesNotExist();
        assertThat(cleanedArchive).doesNotExist();
        assertThat(memtrace.resolve("cds-222.root")).doesNotExist();
        assertThat(memtrace.resolve("cds-333.root")).doesNotExist();
        // the newest four: this checkout's new one, the kept checkout's, and the two newest unnoted
        List<Path> left = archives();
        assertThat(left).hasSize(4).contains(keptArchive).containsAll(unnoted.subList(0, 2))
                .doesNotContainAnyElementsOf(unnoted.subList(2, 10));
        assertThat(memtrace.resolve("cds-111.root")).exists();
        try (Stream<Path> roots = Files.list(memtrace)) {
            assertThat(roots.filter(p -> p.getFileName().toString().endsWith(".root") && !p.getFileName().toString().startsWith("cds-111")))
                    .singleElement().satisfies(p -> assertThat(Files.readString(p)).isEqualTo(root + "\n"));
        }
    }

    private static Path old(Path directory, String name, long millis) throws IOException {
        Path p = Files.writeString(directory.resolve(name), "old");
        Files.setLastModifiedTime(p, FileTime.fromMillis(millis));
        return p;
    }

    private Outcome launch(Path xdgCache, String... args) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(Stream.concat(Stream.of(root.resolve("memtrace").toString()), Stream.of(args)).toList());
        pb.environment().put("XDG_CACHE_HOME", xdgCache.toString());
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().remove("MEMTRACE_CDS");
        Process p = pb.start();
        p.getOutputStream().close();
        // both streams end when the launcher's JVM ends: the background training must not hold them
        byte[] err;
        byte[] out;
        try (InputStream e = p.getErrorStream(); InputStream o = p.getInputStream()) {
            out = o.readAllBytes();
            err = e.readAllBytes();
        }
        return new Outcome(p.waitFor(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    }

    /** The training holds the lock until its archive is in place (or marked failed): taking it waits for the end. */
    private void waitForTraining() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("flock", cache.resolve("memtrace/cds.lock").toString(), "true").inheritIO().start();
        assertThat(p.waitFor()).isZero();
    }

    private List<Path> archives() throws IOException {
        try (Stream<Path> files = Files.list(cache.resolve("memtrace"))) {
            return files.filter(p -> p.getFileName().toString().matches("cds-.*\\.(aot|jsa)")).toList();
        }
    }

    private static void writeProbeJar(Path jar) throws IOException {
        writeJar(jar, PROBE.replace(".class", ""));
    }

    private static void writeJar(Path jar, String mainClass) throws IOException {
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        m.getMainAttributes().put(Attributes.Name.MAIN_CLASS, mainClass.replace('/', '.'));
        try (OutputStream f = Files.newOutputStream(jar); JarOutputStream j = new JarOutputStream(f, m);
                InputStream probe = LauncherCdsTest.class.getClassLoader().getResourceAsStream(PROBE)) {
            j.putNextEntry(new JarEntry(PROBE));
            probe.transferTo(j);
            j.closeEntry();
        }
    }
}
