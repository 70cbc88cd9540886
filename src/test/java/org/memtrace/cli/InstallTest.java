package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code make install} into a temporary PREFIX, then the installed memtrace as a user runs it: through a
 * symbolic link from another directory, tracing a program, building one with the installed memtrace-cc
 * (through the compile server, and without it when its directory is not private), its man pages rendered by
 * {@code man -l}, its bash completion loaded and asked; {@code make uninstall} leaves nothing. The jar
 * installed is a stand-in whose manifest names this build's classes, so the test needs no packaged build.
 */
class InstallTest {
    @TempDir static Path dir;
    static Path prefix;
    static Path home;

    record Outcome(int status, String out, String err) {}

    static Outcome exec(Path cwd, Map<String, String> env, String... command) throws IOException, InterruptedException {
        Path out = Files.createTempFile(dir, "out", ".txt"), err = Files.createTempFile(dir, "err", ".txt");
        ProcessBuilder pb = new ProcessBuilder(command).directory(cwd.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().put("MEMTRACE_CDS", "off");
        pb.environment().put("XDG_CACHE_HOME", home.resolve("cache").toString());
        pb.environment().put("XDG_RUNTIME_DIR", home.resolve("run").toString());
        pb.environment().put("MEMTRACE_CC_SERVER_IDLE", "20");
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(300, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + String.join(" ", command));
        }
        return new Outcome(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    static Outcome ok(Path cwd, String... command) throws IOException, InterruptedException {
        Outcome o = exec(cwd, Map.of(), command);
        assertThat(o.status()).as(String.join(" ", command) + "\n" + o.err()).isZero();
        return o;
    }

    @BeforeAll
    static void install() throws Exception {
        prefix = dir.resolve("prefix");
        home = Files.createDirectories(dir.resolve("home"));
        Files.createDirectory(home.resolve("run"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path jar = dir.resolve("memtrace.jar");
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        m.getMainAttributes().put(Attributes.Name.MAIN_CLASS, "org.memtrace.cli.Main");
        m.getMainAttributes().put(Attributes.Name.CLASS_PATH, Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .map(p -> Path.of(p).toUri().toString()).collect(Collectors.joining(" ")));
        try (OutputStream os = Files.newOutputStream(jar); var unused = new JarOutputStream(os, m)) {
            // only the manifest: the classes are this build's
        }
        Path repo = Path.of("").toAbsolutePath();
        ok(repo, "make", "-s", "install", "PREFIX=" + prefix, "JAR=" + jar, "GEN=" + dir.resolve("gen"));
    }

    @Test
    void theInstalledMemtraceRunsThroughALinkFromAnywhere() throws Exception {
        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        Path link = Files.createSymbolicLink(elsewhere.resolve("mt"), prefix.resolve("bin/memtrace"));
        assertThat(ok(elsewhere, link.toString(), "--version").out()).startsWith("memtrace ");
        assertThat(ok(elsewhere, "./mt", "help", "run").out()).startsWith("Usage: memtrace run ");

        Files.writeString(elsewhere.resolve("s.c"), "#include <stdio.h>\nint g[10];\n"
                + "int main(void) { for (int i = 0; i < 10; i++) g[i] = i; printf(\"%d\\n\", g[9]); return 0; }\n");
        ok(elsewhere, "gcc", "-O0", "-o", "plain", "s.c");
        ok(elsewhere, "./mt", "run", "-q", "-o", "plain.trace", "--", "./plain");
        assertThat(Files.readString(elsewhere.resolve("plain.trace")).lines().filter(l -> l.startsWith("S") && l.contains(":g+")).count())
                .isEqualTo(10);
        // run --check loads the installed check runtime (make install once left it out: "missing from the installation")
        Outcome checked = exec(elsewhere, Map.of(), "./mt", "run", "--check", "--", "./plain");
        assertThat(checked.status()).as(checked.err()).isZero();
        assertThat(checked.out()).isEqualTo("9\n");
        assertThat(checked.err()).isEmpty();

        // the installed single-path driver, through the compile server; its program loads the installed runtime.
        // The gcc it runs notes MEMTRACE_CC_SOCKET, which the client sets only for a gcc the server planned: proof
        // that does not depend on the server still running when the test looks (listing the run directory for
        // the socket after the steps below failed at load 50: the server had ended idle, after the 20 s of
        // MEMTRACE_CC_SERVER_IDLE, before the test got there)
        Path seen = elsewhere.resolve("socket-seen");
        Path gcc = Files.writeString(elsewhere.resolve("noting-gcc"), "#!/bin/sh\nprintf '%s\\n' \"${MEMTRACE_CC_SOCKET:-none}\" >>"
                + seen + "\nexec gcc \"$@\"\n");
        Files.setPosixFilePermissions(gcc, PosixFilePermissions.fromString("rwx------"));
        Outcome built = exec(elsewhere, Map.of("MEMTRACE_GCC", gcc.toString()), prefix.resolve("bin/memtrace-cc").toString(), "-O0", "-o", "s", "s.c");
        assertThat(built.status()).as(built.err()).isZero();
        assertThat(Files.readAllLines(seen)).singleElement().asString().matches(Pattern.quote(home.resolve("run/memtrace") + "/") + "cc-\\d+\\.sock");
        assertThat(ok(elsewhere, "readelf", "-d", "s").out()).contains("[" + prefix.resolve("lib/memtrace") + "]");
        assertThat(exec(elsewhere, Map.of("MEMTRACE_OUT", elsewhere.resolve("s.mtr").toString()), "./s").out()).isEqualTo("9\n");
        List<String> stores = ok(elsewhere, "./mt", "print", "s.mtr").out().lines().filter(l -> l.matches("S\\$\\d+:g\\+\\d+,.*")).toList();
        assertThat(stores).extracting(l -> l.replaceAll("S\\$\\d+:g\\+(\\d+),.*", "$1"))
                .containsExactly("0", "4", "8", "12", "16", "20", "24", "28", "32", "36");
    }

    @Test
    void aSocketDirectoryOthersCanEnterLeavesTheCompileToItsOwnJvm() throws Exception {
        Path open = Files.createDirectory(dir.resolve("open-run"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        Files.createDirectory(open.resolve("memtrace"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxrwxrwx")));
        Path work = Files.createDirectories(dir.resolve("open-work"));
        Files.writeString(work.resolve("a.c"), "int g; int f(void) { return g; }\n");
        Outcome o = exec(work, Map.of("XDG_RUNTIME_DIR", open.toString()), prefix.resolve("bin/memtrace").toString(), "cc", "-c", "a.c");
        assertThat(o.status()).as(o.err()).isZero();
        assertThat(o.err()).isEqualTo("memtrace cc: note: compile server off: " + open.resolve("memtrace")
                + " must be a directory of uid " + uid() + " with mode 0700\n");
        assertThat(ok(work, "nm", "-u", "a.o").out()).contains("memtrace_start");
        try (Stream<Path> files = Files.list(open.resolve("memtrace"))) {
            assertThat(files).isEmpty();
        }
    }

    /**
     * A TMPDIR or runtime directory under a directory others can write (docs/trust.md, "Adversarial pass"):
     * someone else could rename the socket directory away between the check and the connect, so the server is
     * off, with a note, and the compile runs in a JVM of its own, making nothing of memtrace's there.
     */
    @Test
    void aSocketDirectoryUnderOneOthersCanWriteLeavesTheCompileToItsOwnJvm() throws Exception {
        Path hostile = Files.createDirectory(dir.resolve("hostile"));
        Files.setPosixFilePermissions(hostile, PosixFilePermissions.fromString("rwxrwxrwx")); // no sticky bit
        Path run = Files.createDirectory(hostile.resolve("run"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path work = Files.createDirectories(dir.resolve("hostile-work"));
        Files.writeString(work.resolve("a.c"), "int g; int f(void) { return g; }\n");
        String mt = prefix.resolve("bin/memtrace").toString();
        Map<String, Map<String, String>> envs = Map.of(run.resolve("memtrace").toString(), Map.of("XDG_RUNTIME_DIR", run.toString()),
                hostile.resolve("memtrace-cc-" + uid()).toString(), Map.of("XDG_RUNTIME_DIR", "", "TMPDIR", hostile.toString()));
        for (var e : envs.entrySet()) {
            Outcome o = exec(work, e.getValue(), mt, "cc", "-c", "a.c");
            assertThat(o.status()).as(o.err()).isZero();
            assertThat(o.err()).isEqualTo("memtrace cc: note: compile server off: a directory above " + e.getKey()
                    + " is a link or others can write it\n");
            assertThat(ok(work, "nm", "-u", "a.o").out()).contains("memtrace_start");
            try (Stream<Path> files = Files.list(hostile)) {
                assertThat(files.map(p -> p.getFileName().toString())).containsExactly("run");
            }
            try (Stream<Path> files = Files.list(run)) {
                assertThat(files).isEmpty();
            }
        }
    }

    /** The server's plan and the driver's own JVM answer alike: help, refusals, warnings, the object built. */
    @Test
    void withAndWithoutTheServerTheDriverSaysAndBuildsTheSame() throws Exception {
        Path work = Files.createDirectories(dir.resolve("same"));
        Files.writeString(work.resolve("a.c"), "int g[4]; int f(int i) { return g[i & 3]; }\n");
        String mt = prefix.resolve("bin/memtrace").toString();
        List<List<String>> calls = List.of(List.of("cc", "--help"), List.of("c++", "--help"), List.of("cc", "--omega", "2", "a.c"),
                List.of("cc", "-static", "a.c"), List.of("cc", "-flto", "-c", "a.c", "-o", "lto.o"), List.of("cc", "-c", "a.c", "-o", "a.o"),
                List.of("cc", "-c", "missing.c"));
        for (List<String> call : calls) {
            String[] command = Stream.concat(Stream.of(mt), call.stream()).toArray(String[]::new);
            Outcome server = exec(work, Map.of(), command);
            boolean builds = call.contains("a.o");
            if (builds) {
                assertThat(ok(work, "nm", "-u", "a.o").out()).contains("memtrace_start");
                Files.delete(work.resolve("a.o"));
            }
            Outcome own = exec(work, Map.of("MEMTRACE_CC_SERVER", "off"), command);
            assertThat(server).as(String.join(" ", call)).isEqualTo(own);
            if (builds) assertThat(ok(work, "nm", "-u", "a.o").out()).contains("memtrace_start");
        }
        assertThat(exec(work, Map.of("MEMTRACE_CC_FLAGS", "--keep-asm 'unterminated"), mt, "cc", "-c", "a.c"))
                .isEqualTo(exec(work, Map.of("MEMTRACE_CC_FLAGS", "--keep-asm 'unterminated", "MEMTRACE_CC_SERVER", "off"), mt, "cc", "-c", "a.c"));
    }

    @Test
    void manPagesRenderAndCompletionLoads() throws Exception {
        Path man = prefix.resolve("share/man/man1");
        List<String> pages;
        try (Stream<Path> s = Files.list(man)) {
            pages = s.map(p -> p.getFileName().toString()).sorted().toList();
        }
        assertThat(pages).contains("memtrace.1", "memtrace-run.1", "memtrace-cc.1", "memtrace-convert.1", "memtrace-help.1");
        for (String page : pages) {
            Outcome o = exec(dir, Map.of("MANWIDTH", "100"), "man", "-l", man.resolve(page).toString());
            assertThat(o.status()).as(page + o.err()).isZero();
            assertThat(o.err()).as(page).isEmpty();
            assertThat(o.out()).as(page).contains("NAME", "SYNOPSIS", "DESCRIPTION");
        }
        assertThat(ok(dir, "man", "-l", man.resolve("memtrace-convert.1").toString()).out()).contains("--to=FORMAT", "EXIT STATUS");
        assertThat(ok(dir, "man", "-l", man.resolve("memtrace-cc.1").toString()).out()).contains("--omega W", "memtrace-cc");

        String bash = prefix.resolve("share/bash-completion/completions/memtrace").toString();
        assertThat(ok(dir, "bash", "-c", "source " + bash + "; complete -p memtrace").out().strip())
                .isEqualTo("complete -o filenames -F _memtrace memtrace");
        assertThat(complete(bash, "memtrace", "con")).isEqualTo("convert");
        assertThat(complete(bash, "memtrace", "help", "ske")).isEqualTo("skeleton");
        assertThat(complete(bash, "memtrace", "convert", "--to", "p")).isEqualTo("parquet pinatrace");
        assertThat(complete(bash, "memtrace", "cc", "--om")).isEqualTo("--omega");
        Path zsh = prefix.resolve("share/zsh/site-functions");
        assertThat(Files.readString(zsh.resolve("_memtrace"))).startsWith("#compdef memtrace\n");
        if (Files.isExecutable(Path.of("/usr/bin/zsh"))) {
            // zsh's compinit finds it on the fpath and binds it to memtrace
            assertThat(ok(dir, "/usr/bin/zsh", "-f", "-c", "fpath=(" + zsh + " $fpath); autoload -U compinit; compinit -u -d "
                    + dir.resolve("zcompdump") + "; print -r -- ${_comps[memtrace]}").out()).isEqualTo("_memtrace\n");
            ok(dir, "/usr/bin/zsh", "-n", zsh.resolve("_memtrace").toString());
        }
    }

    /** What the completion offers for the last word of {@code words}, sorted, one space apart. */
    private static String complete(String script, String... words) throws Exception {
        String array = Stream.of(words).map(w -> "'" + w + "'").collect(Collectors.joining(" "));
        return ok(dir, "bash", "-c", "source " + script + "; COMP_WORDS=(" + array + "); COMP_CWORD=" + (words.length - 1)
                + "; _memtrace; printf '%s\\n' \"${COMPREPLY[@]}\" | sort | paste -sd' '").out().strip();
    }

    @Test
    void uninstallRemovesEveryFile() throws Exception {
        Path other = dir.resolve("other");
        Path repo = Path.of("").toAbsolutePath();
        ok(repo, "make", "-s", "install", "PREFIX=" + other, "JAR=" + dir.resolve("memtrace.jar"), "GEN=" + dir.resolve("gen"));
        try (Stream<Path> s = Files.walk(other)) {
            assertThat(s.filter(Files::isRegularFile).count()).isGreaterThan(15);
        }
        // a library directory others may write to is not loaded from
        Path lib = other.resolve("lib/memtrace");
        Files.setPosixFilePermissions(lib, PosixFilePermissions.fromString("rwxrwxr-x"));
        Outcome refused = exec(dir, Map.of(), other.resolve("bin/memtrace").toString(), "run", "--mode", "fault", "-q", "-o", dir.resolve("r.trace").toString(), "--", "/bin/true");
        assertThat(refused.status()).isNotZero();
        assertThat(refused.err()).isEqualTo("memtrace: " + lib + " is writable by other users: not loading the agent library from it\n");
        Files.setPosixFilePermissions(lib, PosixFilePermissions.fromString("rwxr-xr-x"));
        ok(repo, "make", "-s", "uninstall", "PREFIX=" + other);
        try (Stream<Path> s = Files.walk(other)) {
            assertThat(s.filter(p -> !Files.isDirectory(p)).toList()).isEmpty();
        }
    }

    private static String uid() throws Exception {
        return ok(dir, "id", "-u").out().strip();
    }
}
