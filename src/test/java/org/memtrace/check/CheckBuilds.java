package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.memtrace.testutil.Cli;

/** Test helpers: builds with {@code memtrace cc --check} and runs of what they built. */
final class CheckBuilds {
    record Run(int status, String stdout, String stderr) {}

    private CheckBuilds() {}

    static Path fixture(Path dir, String name) throws IOException {
        try (InputStream in = CheckBuilds.class.getResourceAsStream("/c/check/" + name)) {
            if (in == null) throw new IOException("no fixture " + name);
            Path p = dir.resolve(name);
            Files.copy(in, p);
            return p;
        }
    }

    /**
     * The fixture {@code name} built by plain {@code compiler} (gcc or g++) at -O0 -g as {@code exe} and at -O2 -g as
     * {@code exe-O2}, for run --check; returns the -O0 build's {@code objdump -d} (C++ names demangled for g++).
     */
    static String plainBuilds(Path dir, String compiler, String name, String exe) throws Exception {
        tool(dir, compiler, "-O0", "-g", "-o", exe, name);
        tool(dir, compiler, "-O2", "-g", "-w", "-o", exe + "-O2", name);
        return compiler.equals("g++") ? tool(dir, "objdump", "-d", "-C", "--no-show-raw-insn", exe)
                : tool(dir, "objdump", "-d", "--no-show-raw-insn", exe);
    }

    /** {@code memtrace cc|c++ --check [--no-prune] ARGS...} in dir; fails the test on a non-zero status. */
    static void build(Path dir, boolean cxx, boolean prune, String... gccArgs) throws Exception {
        List<String> args = new ArrayList<>(List.of(cxx ? "c++" : "cc", "--check"));
        if (!prune) args.add("--no-prune");
        args.addAll(List.of(gccArgs));
        Cli.Result r = Cli.run(dir, args.toArray(String[]::new));
        assertThat(r.status()).as(r.stderr()).isZero();
    }

    /** A build tool (gcc, objdump) in {@code dir}: it must succeed; its output, both streams. */
    static String tool(Path dir, String... args) throws Exception {
        Process p = new ProcessBuilder(args).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
        return out;
    }

    /** COMMAND (a built program) in {@code dir}, with the checker's variables of {@code env} only. */
    static Run run(Path dir, Map<String, String> env, String... command) throws Exception {
        return finish(new ProcessBuilder(command), dir, env, 120, command);
    }

    /**
     * {@code memtrace run --check OPTIONS -- COMMAND} in {@code dir}, with the checker's variables of {@code env}
     * only and no input; longer allowed than a built program, since a JVM starts and the program may be rewritten.
     */
    static Run runCheck(Path dir, List<String> options, Map<String, String> env, String... command) throws Exception {
        List<String> args = new ArrayList<>(List.of("run", "--check"));
        args.addAll(options);
        args.add("--");
        args.addAll(List.of(command));
        ProcessBuilder pb = new ProcessBuilder(Cli.command(args.toArray(String[]::new))).redirectInput(Path.of("/dev/null").toFile());
        return finish(pb, dir, env, 180, command);
    }

    private static Run finish(ProcessBuilder pb, Path dir, Map<String, String> env, int seconds, String... command) throws Exception {
        pb.directory(dir.toFile());
        pb.environment().keySet().removeIf(k -> k.startsWith("MEMTRACE_CHECK"));
        pb.environment().putAll(env);
        Path out = Files.createTempFile(dir, "out", ".txt"), err = Files.createTempFile(dir, "err", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + String.join(" ", command));
        }
        return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    /**
     * The fixture {@code NAME.c} copied into {@code dir} and built four ways: {@code memtrace cc --check} at -O0,
     * -O2 and -O2 -D_FORTIFY_SOURCE=2 ({@code NAME-O0}, {@code NAME-O2}, {@code NAME-O2F}) and plain gcc -O0
     * ({@code NAME-plain}, for the twins' output and {@code memtrace run --check}); the source's path.
     */
    static Path buildFourWays(Path dir, String name) throws Exception {
        Path source = fixture(dir, name + ".c");
        build(dir, false, true, "-O0", "-g", "-o", name + "-O0", name + ".c");
        build(dir, false, true, "-O2", "-g", "-o", name + "-O2", name + ".c");
        build(dir, false, true, "-O2", "-g", "-D_FORTIFY_SOURCE=2", "-o", name + "-O2F", name + ".c");
        Process p = new ProcessBuilder("gcc", "-O0", "-g", "-o", name + "-plain", name + ".c").directory(dir.toFile())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
        return source;
    }

    /** A report as a pattern: each {@code {KEY}} the line of its marker in {@code source}, each {@code +N} any offset. */
    static String reportPattern(Path source, String report) throws IOException {
        StringBuilder b = new StringBuilder();
        Matcher m = Pattern.compile("\\{(\\w+)\\}").matcher(report);
        int at = 0;
        while (m.find()) {
            b.append(Pattern.quote(report.substring(at, m.start()))).append(line(source, m.group(1)));
            at = m.end();
        }
        return b.append(Pattern.quote(report.substring(at))).toString().replace("+N", "+\\E\\d+\\Q");
    }

    /** {@code report} with its one {@code {KEY}} replaced by the line of that marker in {@code source}. */
    static String atLine(Path source, String report) throws IOException {
        Matcher m = Pattern.compile("\\{(\\w+)\\}").matcher(report);
        return m.find() ? report.replace(m.group(), Integer.toString(line(source, m.group(1)))) : report;
    }

    /** Where a report says it happened: {@code symbol+offset}, and that instruction's link-time address. */
    record Reported(long offset, long address) {}

    /**
     * Asserts that {@code first} is the report line {@code memtrace: WANT, at SITE (SYMBOL+N), thread T} and finds
     * the instruction: SYMBOL's start in {@code disassembly} (objdump -d) plus N.
     */
    static Reported reportedAt(String first, String want, String site, String symbol, String disassembly) {
        assertThat(first).startsWith("memtrace: " + want + ", at " + site + " (" + symbol + "+")
                .matches(".*, at " + Pattern.quote(site) + " \\(" + Pattern.quote(symbol) + "\\+\\d+\\), thread \\d+");
        long offset = Long.parseLong(first.replaceAll(".*\\+(\\d+)\\), thread \\d+$", "$1")); // a C++ symbol has spaces
        Matcher start = Pattern.compile("(?m)^([0-9a-f]+) <" + Pattern.quote(symbol) + ">:$").matcher(disassembly);
        assertThat(start.find()).as(symbol).isTrue();
        return new Reported(offset, Long.parseLong(start.group(1), 16) + offset);
    }

    /** Asserts a report's frames: {@code #0} the reported instruction in {@code function}, {@code #1} in main. */
    static void assertFramesToMain(List<String> lines, String site, String function, long offset, String fixture) {
        assertThat(lines.get(1)).isEqualTo("    #0 " + site + " (" + function + "+" + offset + ") in " + function);
        assertThat(lines.get(2)).matches("    #1 " + Pattern.quote(fixture) + ":\\d+ \\(main\\+\\d+\\) in main");
    }

    /**
     * Asserts that {@code EXE ARG bad} under {@code run --check} stops with the one report {@code report} (its
     * {@code {KEY}} the line of that marker) at the access marked {@code access} in FUNCTION, framed to main, made
     * through a register that a pointer was followed into: neither %rbp nor %rip in the instruction's operand
     * (so a check of a frame or global operand cannot pass for it); nothing printed on stdout.
     */
    static void assertReportThroughRegister(Path dir, Path source, String disassembly, String exe, String arg, String function,
            String report, String access) throws Exception {
        String fixture = source.getFileName().toString();
        Run r = runCheck(dir, List.of(), Map.of(), exe, arg, "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines).as(r.stderr()).hasSize(3);
        String site = fixture + ":" + line(source, access);
        Reported at = reportedAt(lines.get(0), atLine(source, report), site, function, disassembly);
        assertFramesToMain(lines, site, function, at.offset(), fixture);
        String insn = "(?m)^\\s+" + Long.toHexString(at.address()) + ":";
        assertThat(disassembly).containsPattern(insn + "\\s+mov\\w*\\s+\\S*\\((%r[a-z0-9]+)(,%r\\w+,\\d)?\\)")
                .doesNotContainPattern(insn + ".*\\(%r(bp|ip)");
        assertThat(r.stdout()).isEmpty(); // stopped at the report
    }

    /** Asserts that {@code command} under {@code run --check OPTIONS} reports nothing and prints what it prints natively. */
    static void assertSilentAsNative(Path dir, List<String> options, String... command) throws Exception {
        Run native_ = run(dir, Map.of(), command);
        Run checked = runCheck(dir, options, Map.of(), command);
        assertThat(checked.stderr()).as(String.join(" ", command)).isEmpty();
        assertThat(checked.status()).isZero();
        assertThat(checked.stdout()).isEqualTo(native_.stdout()).startsWith("done ");
    }

    /** The line of the marker comment {@code / * KEY * /} in the source, 1-based. */
    static int line(Path source, String key) throws IOException {
        List<String> lines = Files.readAllLines(source);
        for (int i = 0; i < lines.size(); i++) if (lines.get(i).contains("/* " + key + " */")) return i + 1;
        throw new AssertionError("no marker " + key);
    }
}
