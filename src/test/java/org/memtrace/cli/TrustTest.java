package org.memtrace.cli;

import static org.assertj.core.api.Assertions.*;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * Issue 26's findings on what memtrace loads, creates, leaves in the program's environment and leaves behind
 * when it ends (docs/trust.md), each with the real CLI in a JVM of its own, as a user runs it. The tests run
 * as root; "another user" is nobody (65534).
 */
class TrustTest {
    @TempDir static Path dir;
    /** The cache every memtrace of these tests extracts to, made under umask 000 by the first build. */
    static Path cache;
    static Path env, envCc, forkCc, forever, foreverCc;

    record Result(int status, String stdout, String stderr) {}

    @BeforeAll
    static void build() throws Exception {
        env = Gcc.compile(dir, "trust_env.c", "env", "-g");
        forever = Gcc.compile(dir, "trust_forever.c", "forever", "-g");
        cache = dir.resolve("umask").resolve("cache");
        // under umask 000, as a user with that umask builds: what memtrace extracts is still private
        for (String[] p : new String[][] {{"trust_env.c", "env-cc"}, {"trust_fork.c", "fork-cc"}, {"trust_forever.c", "forever-cc"}}) {
            Path src = dir.resolve(p[0]);
            if (!Files.exists(src)) Gcc.compile(dir, p[0], p[1] + "-plain");
            Result r = memtrace(List.of("sh", "-c", "umask 000 && exec \"$@\"", "sh"), List.of(), Map.of(),
                    "cc", "-O1", "-g", "-o", dir.resolve(p[1]).toString(), src.toString());
            assertThat(r.status()).as(r.stderr()).isZero();
        }
        envCc = dir.resolve("env-cc");
        forkCc = dir.resolve("fork-cc");
        foreverCc = dir.resolve("forever-cc");
    }

    /** memtrace ARGS under WRAPPER (a command that execs its arguments), with extra JVM options and variables. */
    static List<String> command(List<String> wrapper, List<String> jvm, String... args) {
        List<String> cli = new ArrayList<>(Cli.command(args));
        cli.addAll(1, jvm);
        List<String> all = new ArrayList<>(wrapper);
        all.addAll(cli);
        return all;
    }

    static ProcessBuilder builder(List<String> command, Map<String, String> vars, String tag) {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectOutput(dir.resolve(tag + ".stdout").toFile()).redirectError(dir.resolve(tag + ".stderr").toFile());
        pb.environment().put("XDG_CACHE_HOME", cache.toString());
        pb.environment().putAll(vars);
        return pb;
    }

    static Result memtrace(List<String> wrapper, List<String> jvm, Map<String, String> vars, String... args) throws Exception {
        String tag = "run" + System.nanoTime();
        Process p = builder(command(wrapper, jvm, args), vars, tag).start();
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("memtrace timed out: " + String.join(" ", args));
        }
        return new Result(p.exitValue(), Files.readString(dir.resolve(tag + ".stdout")), Files.readString(dir.resolve(tag + ".stderr")));
    }

    static Result memtrace(String... args) throws Exception {
        return memtrace(List.of(), List.of(), Map.of(), args);
    }

    // ---- load only what memtrace owns --------------------------------------------------------------------

    @Test
    void aFallbackDirectoryAnotherUserCreatedIsRefusedInOneLine() throws Exception {
        Path tmp = Files.createDirectories(dir.resolve("fallback"));
        Path planted = Files.createDirectory(tmp.resolve("memtrace-" + System.getProperty("user.name")));
        Files.setPosixFilePermissions(planted, PosixFilePermissions.fromString("rwxrwxrwx"));
        Files.setAttribute(planted, "unix:uid", 65534);
        Path notADirectory = Files.writeString(dir.resolve("a-file"), "x");
        Result r = memtrace(List.of(), List.of("-Djava.io.tmpdir=" + tmp), Map.of("XDG_CACHE_HOME", notADirectory.resolve("cache").toString()),
                "run", "--mode", "fault", "-q", "-o", dir.resolve("refused.trace").toString(), "--", env.toString());
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.stderr().lines()).singleElement().asString()
                .startsWith("memtrace: cannot extract the agent library: " + planted + " belongs to user 65534");
        assertThat(r.stdout()).as("the program never ran").isEmpty();
        try (Stream<Path> in = Files.list(planted)) {
            assertThat(in).isEmpty();
        }
    }

    @Test
    void underUmask000WhatMemtraceExtractsIsStillPrivate() throws Exception {
        Result r = memtrace(List.of("sh", "-c", "umask 000 && exec \"$@\"", "sh"), List.of(), Map.of(),
                "run", "--mode", "fault", "-q", "-o", dir.resolve("umask.trace").toString(), "--", env.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        List<Path> made;
        try (Stream<Path> all = Files.walk(cache.getParent())) {
            made = all.toList();
        }
        // the cache, memtrace's directory in it, one directory per file: the agent, the runtime, the wrapper
        assertThat(made.stream().filter(Files::isDirectory).count()).isGreaterThanOrEqualTo(6);
        assertThat(made.stream().map(p -> p.getFileName().toString()))
                .contains("libmemtrace-agent.so", "libmemtrace-rt.so", "memtrace-cc-wrapper");
        for (Path p : made) {
            int mode = (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
            if (Files.isDirectory(p)) assertThat(mode).as("mode of %s", p).isEqualTo(0700);
            else assertThat(mode & 022).as("group/other write bits of %s", p).isZero();
        }
    }

    // ---- the program's environment is as untraced --------------------------------------------------------

    /** The program's own output (and its exec'd child's) untraced, in the environment memtrace is given. */
    static List<String> untracedEnvironment(Path program) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(program.toString(), "parent").directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        pb.environment().put("XDG_CACHE_HOME", cache.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).isZero();
        return out.lines().sorted().toList();
    }

    @Test
    void aFaultModeProgramAndItsChildSeeTheEnvironmentTheyWouldUntraced() throws Exception {
        List<String> untraced = untracedEnvironment(env);
        Result r = memtrace("run", "--mode", "fault", "-q", "-o", dir.resolve("env.trace").toString(), "--", env.toString(), "parent");
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout().lines().sorted().toList()).isEqualTo(untraced)
                .anyMatch(l -> l.startsWith("child PATH=")).noneMatch(l -> (l.contains("LD_BIND_NOW") || l.contains("MEMTRACE_")) && !untraced.contains(l)); // the user's own MEMTRACE_CDS may be there
    }

    @Test
    void aUsersOwnPreloadAndBindingAreGivenBackAsTheyWere() throws Exception {
        // an empty LD_PRELOAD and LD_BIND_NOW=x: memtrace replaces both while the loader starts
        Map<String, String> vars = Map.of("LD_PRELOAD", "", "LD_BIND_NOW", "x");
        ProcessBuilder plain = new ProcessBuilder(env.toString(), "parent").directory(dir.toFile());
        plain.environment().put("XDG_CACHE_HOME", cache.toString());
        plain.environment().putAll(vars);
        Process p = plain.start();
        List<String> untraced = new String(p.getInputStream().readAllBytes()).lines().sorted().toList();
        p.waitFor();
        Result r = memtrace(List.of(), List.of(), vars, "run", "--mode", "fault", "-q", "-o", dir.resolve("env2.trace").toString(), "--", env.toString(), "parent");
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout().lines().sorted().toList()).isEqualTo(untraced).contains("parent LD_PRELOAD=", "child LD_BIND_NOW=x");
    }

    /**
     * MEMTRACE_LD_PRELOAD and MEMTRACE_LD_BIND_NOW are where memtrace saves the user's LD_PRELOAD and LD_BIND_NOW
     * for the agent (or runtime) to put back. Set by a careless or hostile parent for a user who had neither,
     * they were put back: the program and its child ran with an LD_PRELOAD (here a library that does not exist)
     * and an LD_BIND_NOW they do not have untraced. Memtrace's names now hold only what memtrace saved.
     */
    @Test
    void variablesNamedAsMemtracesOwnNeverGiveTheProgramAPreloadItDidNotHave() throws Exception {
        Map<String, String> planted = Map.of("MEMTRACE_LD_PRELOAD", "/nonexistent/planted.so", "MEMTRACE_LD_BIND_NOW", "planted");
        for (String mode : List.of("fault", "rewrite")) {
            Result r = memtrace(List.of(), List.of(), planted, "run", "--mode", mode, "-q", "-o", dir.resolve("planted-" + mode + ".trace").toString(),
                    "--", env.toString(), "parent");
            assertThat(r.status()).as(r.stderr()).isZero();
            assertThat(r.stderr()).as(mode).doesNotContain("planted");
            assertThat(r.stdout().lines().toList()).as(mode).anyMatch(l -> l.startsWith("child PATH="))
                    .noneMatch(l -> l.matches("(parent|child) LD_(PRELOAD|BIND_NOW)=.*"));
        }
    }

    @Test
    void aCompiledInProgramAndItsChildSeeTheEnvironmentTheyWouldUntraced() throws Exception {
        List<String> untraced = untracedEnvironment(envCc);
        Result r = memtrace("run", "--mode", "fault", "-q", "-o", dir.resolve("envcc.trace").toString(), "--", envCc.toString(), "parent");
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout().lines().sorted().toList()).isEqualTo(untraced).noneMatch(l -> l.contains("MEMTRACE_") && !untraced.contains(l));
        assertThat(Files.readAllLines(dir.resolve("envcc.trace"))).anyMatch(l -> l.startsWith("# exec "));
    }

    // ---- files the runtime creates -----------------------------------------------------------------------

    @Test
    void aForkChildsTraceNeverFollowsAPlantedLinkAndIsPrivate() throws Exception {
        Path forks = Files.createDirectories(dir.resolve("forks"));
        Path saved = forks.resolve("s.mtr");
        Path victim = Files.writeString(forks.resolve("victim"), "precious");
        Process probe = new ProcessBuilder("true").start(); // the newest pid: the child's comes a few hundred later
        probe.waitFor();
        long last = probe.pid();
        int planted = 4000;
        for (long pid = last + 1; pid <= last + planted; pid++) Files.createSymbolicLink(forks.resolve("s.mtr." + pid), victim);
        Result r = memtrace("run", "--mode", "fault", "-q", "-o", dir.resolve("fork.trace").toString(), "--save-stream", saved.toString(), "--", forkCc.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        long child = Long.parseLong(r.stdout().strip().split(" ")[1]);
        System.out.printf("fork child %d, links planted for %d..%d%n", child, last + 1, last + planted);
        assertThat(r.stdout()).endsWith("status 0\n");
        assertThat(Files.readString(victim)).isEqualTo("precious");
        assumeThat(child).as("the child's pid fell among the planted links").isBetween(last + 1, last + planted);
        Path childTrace = forks.resolve("s.mtr." + child);
        assertThat(Files.isSymbolicLink(childTrace)).isFalse();
        assertThat(new String(Files.readAllBytes(childTrace), 0, 8, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("MTRFILE1");
        assertThat((Integer) Files.getAttribute(childTrace, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 0777).isEqualTo(0600);
    }

    /** A trace named /dev/null (or a FIFO) has no `<file>.<pid>` beside it: a fork child made /dev/null.<pid>. */
    @Test
    void aDeviceTracesForkChildMakesNoFileBesideTheDevice() throws Exception {
        ProcessBuilder pb = new ProcessBuilder(forkCc.toString()).redirectErrorStream(true);
        pb.environment().put("MEMTRACE_OUT", "/dev/null");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).matches("child \\d+ status 0\n");
        assertThat(Path.of("/dev/null." + out.split(" ")[1])).doesNotExist();
        // nor is an exec'd descendant told to write one: MEMTRACE_OUT is gone from the program's environment
        pb = new ProcessBuilder(envCc.toString(), "parent").redirectErrorStream(true);
        pb.environment().put("MEMTRACE_OUT", "/dev/null");
        p = pb.start();
        out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).doesNotContain("MEMTRACE_OUT");
    }

    /** A compiled-in program's own trace name (MEMTRACE_OUT) never empties a file that holds something else. */
    @Test
    void theRuntimeNeverOverwritesAFileThatIsNotATrace() throws Exception {
        Path named = Files.createDirectories(dir.resolve("named"));
        Path input = Files.writeString(named.resolve("input.txt"), "precious input\n");
        Path empty = Files.createFile(named.resolve("empty.mtr")), trace = named.resolve("run.mtr");
        for (Path out : List.of(input, empty, trace, trace, Path.of("/dev/null"))) {
            ProcessBuilder pb = new ProcessBuilder(envCc.toString()).directory(named.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD);
            pb.environment().put("MEMTRACE_OUT", out.toString());
            Process p = pb.start();
            String err = new String(p.getErrorStream().readAllBytes());
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            if (out.equals(input)) {
                assertThat(p.exitValue()).as(err).isEqualTo(1);
                assertThat(err).isEqualTo("memtrace: cannot write " + input + ": it exists and is not a memtrace trace (it is left as it is)"
                        + ": the program does not run without the trace it was asked for\n");
                assertThat(Files.readString(input)).isEqualTo("precious input\n");
            } else {
                // new, empty, an earlier run's trace (replaced), a device: written
                assertThat(p.exitValue()).as(out + ": " + err).isZero();
                if (!out.startsWith("/dev")) assertThat(new String(Files.readAllBytes(out), 0, 8, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("MTRFILE1");
            }
        }
    }

    @Test
    void aRunLeavesNoTemporaryTraceBehindItsForkChildsIncluded() throws Exception {
        Path tmp = Files.createDirectories(dir.resolve("private-tmp"));
        Result r = memtrace(List.of(), List.of("-Djava.io.tmpdir=" + tmp), Map.of(),
                "run", "--mode", "fault", "-q", "-o", dir.resolve("fork2.trace").toString(), "--", forkCc.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).endsWith("status 0\n");
        assertThat(Files.readAllLines(dir.resolve("fork2.trace"))).anyMatch(l -> l.startsWith("# fork "));
        try (Stream<Path> left = Files.list(tmp)) {
            assertThat(left).isEmpty();
        }
    }

    // ---- every ending is accounted for -------------------------------------------------------------------

    /** Whether the process is gone or a zombie: it runs no more. */
    static boolean ended(long pid) throws IOException {
        Path stat = Path.of("/proc/" + pid + "/stat");
        try {
            String s = Files.readString(stat);
            return s.substring(s.lastIndexOf(')') + 2).startsWith("Z");
        } catch (java.nio.file.NoSuchFileException e) {
            return true;
        }
    }

    static void awaitEnd(long pid, long millis) throws Exception {
        long until = System.currentTimeMillis() + millis;
        while (!ended(pid) && System.currentTimeMillis() < until) Thread.sleep(20);
    }

    private void killedMemtraceTakesTheProgramAlong(Path program, String tag) throws Exception {
        Path pidFile = dir.resolve(tag + ".pid");
        Files.deleteIfExists(pidFile);
        ProcessBuilder pb = builder(command(List.of(), List.of(), "run", "--mode", "fault", "-q", "-o", dir.resolve(tag + ".trace").toString(), "--",
                program.toString(), pidFile.toString()), Map.of(), tag);
        Process memtrace = pb.start();
        long pid = -1;
        try {
            for (int i = 0; i < 600 && !(Files.exists(pidFile) && Files.readString(pidFile).endsWith("\n")); i++) Thread.sleep(50);
            pid = Long.parseLong(Files.readString(pidFile).strip());
            Thread.sleep(300);
            String ring = Files.readAllLines(Path.of("/proc/" + pid + "/maps")).stream().filter(l -> l.contains(".ring")).findFirst().orElse(null);
            if (program == forever) {
                assertThat(ring).as("the ring is mapped").isNotNull();
                assertThat(ring).as("its name is gone once both sides have it mapped").endsWith(" (deleted)");
            }
            memtrace.destroyForcibly(); // SIGKILL
            memtrace.waitFor();
            awaitEnd(pid, 3000);
            assertThat(ended(pid)).as("the program died with memtrace").isTrue();
            if (ring != null) {
                String path = ring.substring(ring.indexOf('/'), ring.length() - " (deleted)".length());
                assertThat(Path.of(path)).doesNotExist();
            }
        } finally {
            memtrace.destroyForcibly();
            if (pid > 0 && !ended(pid)) new ProcessBuilder("kill", "-9", Long.toString(pid)).start().waitFor();
        }
    }

    @Test
    void sigkillOfMemtraceEndsAFaultModeProgramAndLeavesNoRing() throws Exception {
        killedMemtraceTakesTheProgramAlong(forever, "kill-fault");
    }

    @Test
    void sigkillOfMemtraceEndsACompiledInProgram() throws Exception {
        killedMemtraceTakesTheProgramAlong(foreverCc, "kill-cc");
    }

    /** Ctrl-C: SIGINT to memtrace's process group, as a terminal sends it (perl puts SIGINT back to its default). */
    private void ctrlC(Path program, String tag, boolean save) throws Exception {
        Path pidFile = dir.resolve(tag + ".pid");
        Path trace = dir.resolve(tag + ".trace");
        Path saved = dir.resolve(tag + ".saved");
        List<String> group = List.of("perl", "-e", "setpgrp(0, 0); $SIG{INT} = 'DEFAULT'; exec @ARGV or die");
        List<String> args = new ArrayList<>(List.of("run", "--mode", "fault", "-o", trace.toString()));
        if (save) args.addAll(List.of("--save-stream", saved.toString()));
        args.addAll(List.of("--", program.toString(), pidFile.toString()));
        ProcessBuilder pb = builder(command(group, List.of(), args.toArray(String[]::new)), Map.of(), tag);
        Process memtrace = pb.start();
        long pid = -1;
        try {
            for (int i = 0; i < 600 && !(Files.exists(pidFile) && Files.readString(pidFile).endsWith("\n")); i++) Thread.sleep(50);
            pid = Long.parseLong(Files.readString(pidFile).strip());
            Thread.sleep(500);
            long t0 = System.nanoTime();
            new ProcessBuilder("kill", "-INT", "--", "-" + memtrace.pid()).start().waitFor();
            assertThat(memtrace.waitFor(10, TimeUnit.SECONDS)).as("memtrace ended").isTrue();
            double seconds = (System.nanoTime() - t0) / 1e9;
            String err = Files.readString(dir.resolve(tag + ".stderr"));
            assertThat(memtrace.exitValue()).as(err).isEqualTo(130);
            // a bound that catches a run waiting for its program's end, not a timing promise: the stop budget
            // (3 s for a reader that fell behind) plus the 0.6 s the program gets; the time is printed below
            assertThat(seconds).as("seconds from Ctrl-C to the prompt").isLessThan(5.0);
            assertThat(ended(pid)).isTrue();
            assertThat(err).contains("the trace is incomplete: memtrace was interrupted", "killed by SIGINT", "memtrace summary");
            List<String> lines = Files.readAllLines(trace);
            TraceFile.parse(lines); // every line, the mark included, in the grammar of docs/trace-format.md
            assertThat(lines.getLast()).startsWith("# incomplete memtrace was interrupted");
            // what was recorded is written: the trace as far as memtrace got in its moment, the recording whole
            if (program == forever) assertThat(lines).anyMatch(l -> l.startsWith("S$"));
            // a compiled-in run without --save-stream keeps the whole .mtr beside the text trace, and it reads
            Path kept = Path.of(trace + ".mtr");
            if (program == foreverCc && !save) {
                assertThat(err).contains("the program's whole recording is kept in " + kept + " (memtrace print reads it)");
                Result printed = memtrace("print", "-q", "-o", dir.resolve(tag + ".printed").toString(), kept.toString());
                assertThat(Files.readAllLines(dir.resolve(tag + ".printed")).stream().filter(l -> l.startsWith("S$")).count())
                        // at least what the text trace got: equal when the replay read it all within its moment
                        .as(printed.stderr()).isGreaterThanOrEqualTo(lines.stream().filter(l -> l.startsWith("S$")).count());
            } else {
                assertThat(err).doesNotContain("recording is not kept").doesNotContain("recording is kept");
                assertThat(kept).doesNotExist();
            }
            if (save) assertThat(Files.size(saved)).isGreaterThan(4096);
            System.out.printf("%s: Ctrl-C to exit %.3f s, %d lines, %d bytes saved%n", tag, seconds, lines.size(), save ? Files.size(saved) : 0);
        } finally {
            memtrace.destroyForcibly();
            if (pid > 0 && !ended(pid)) new ProcessBuilder("kill", "-9", Long.toString(pid)).start().waitFor();
        }
    }

    @Test
    void ctrlCDuringAFaultModeRunEndsAtOnceWithTheTraceMarkedIncomplete() throws Exception {
        ctrlC(forever, "int-fault", true);
    }

    @Test
    void ctrlCDuringACompiledInRunEndsAtOnceWithTheTraceMarkedIncomplete() throws Exception {
        ctrlC(foreverCc, "int-cc", true);
    }

    @Test
    void ctrlCDuringACompiledInRunWithoutSaveStreamSaysTheRecordingIsNotKept() throws Exception {
        ctrlC(foreverCc, "int-cc-unsaved", false);
    }
}
