package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.RandomAccessFile;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * The user's data (issue 26): no output may destroy an input or a program, '-' is standard output for every
 * command that writes a file, a write error is one line and status 1, and every reader reads a trace cut
 * short or damaged up to the damage, says so, and exits 1 (docs/exit-status.md).
 */
class UserDataTest {
    @TempDir static Path dir;
    static Path prog, trace;
    static byte[] whole;

    @BeforeAll
    static void record() throws Exception {
        Files.copy(UserDataTest.class.getResourceAsStream("/c/user_data.c"), dir.resolve("user_data.c"));
        Cli.Result build = Cli.run(dir, "cc", "-O1", "-pthread", "-o", "prog", "user_data.c");
        assertThat(build.status()).as(build.stderr()).isZero();
        prog = dir.resolve("prog");
        trace = dir.resolve("t.mtr");
        Process p = start(trace.toString(), "64");
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        whole = Files.readAllBytes(trace);
    }

    static Process start(String out, String bufferKb) throws Exception {
        return start(out, bufferKb, "5");
    }

    static Process start(String out, String bufferKb, String codec) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(dir.resolve("prog").toString()).directory(dir.toFile());
        pb.environment().put("MEMTRACE_CODEC", codec);
        pb.environment().put("MEMTRACE_OUT", out);
        pb.environment().put("MEMTRACE_BUFFER_KB", bufferKb);
        pb.redirectOutput(dir.resolve("prog.out").toFile()).redirectError(dir.resolve("prog.err").toFile());
        return pb.start();
    }

    record Outcome(int status, String out, String err) {}

    static Outcome memtrace(String... args) {
        StringWriter out = new StringWriter(), err = new StringWriter();
        int status = Main.execute(new PrintWriter(out), new PrintWriter(err), args);
        return new Outcome(status, out.toString(), err.toString());
    }

    private static void refused(Outcome o, String why) {
        assertThat(o.status()).as(o.err()).isEqualTo(2);
        assertThat(o.err().lines().toList()).singleElement().asString().startsWith("memtrace: ").contains(why);
    }

    @Test
    void noCommandWritesOverItsInputUnderAnyName() throws Exception {
        Path in = Files.copy(trace, dir.resolve("in.mtr"));
        Path link = Files.createSymbolicLink(dir.resolve("link.mtr"), in);
        Path hard = Files.createLink(dir.resolve("hard.mtr"), in);
        for (Path name : List.of(in, link, hard)) {
            String o = name.toString();
            refused(memtrace("print", "-q", "-o", o, in.toString()), "is the input");
            refused(memtrace("report", "-o", o, in.toString()), "is the input");
            refused(memtrace("convert", "--to", "csv", "-o", o, in.toString()), "is the input");
            refused(memtrace("cachesim", "--json", o, in.toString()), "is the input");
            refused(memtrace("skeleton", "--emit-c", "-o", o, in.toString()), "is the input");
            refused(memtrace("skeleton", "--emit-c", "-o", dir.resolve("s.c").toString(), "--input", o, in.toString()), "is the input");
            assertThat(Files.readAllBytes(in)).as(o).isEqualTo(whole);
        }
        assertThat(dir.resolve("s.c")).doesNotExist();
    }

    @Test
    void noOutputOverwritesAProgramOrALibrary() throws Exception {
        byte[] program = Files.readAllBytes(prog);
        refused(memtrace("print", "-q", "-o", prog.toString(), trace.toString()), "an existing program or library");
        refused(memtrace("convert", "--to", "csv", "-o", prog.toString(), trace.toString()), "an existing program or library");
        // `memtrace run -o libfoo.so` where the program loads libfoo.so truncated the library
        Path library = Files.copy(Path.of("/lib/x86_64-linux-gnu/libm.so.6"), dir.resolve("libfoo.so"));
        byte[] lib = Files.readAllBytes(library);
        refused(memtrace("run", "--mode", "fault", "-o", library.toString(), "--", prog.toString()), "an existing program or library");
        refused(memtrace("run", "--mode", "fault", "-o", "t.txt", "--report", library.toString(), "--", prog.toString()), "an existing program or library");
        assertThat(Files.readAllBytes(prog)).isEqualTo(program);
        assertThat(Files.readAllBytes(library)).isEqualTo(lib);
    }

    @Test
    void aDashIsStandardOutputForEveryCommand() throws Exception {
        Path work = Files.createTempDirectory(dir, "dash");
        Cli.Result report = Cli.run(work, "report", "-o", "-", trace.toString());
        assertThat(report.status()).as(report.stderr()).isZero();
        assertThat(report.stdout()).startsWith("<!DOCTYPE html>").contains("</html>");
        Cli.Result convert = Cli.run(work, "convert", "--to", "lackey", "-o", "-", trace.toString());
        assertThat(convert.status()).as(convert.stderr()).isZero();
        Path lackey = dir.resolve("lackey.txt");
        assertThat(memtrace("convert", "--to", "lackey", "-o", lackey.toString(), trace.toString()).status()).isZero();
        assertThat(convert.stdout()).isEqualTo(Files.readString(lackey)).contains(" S ");
        Cli.Result json = Cli.run(work, "cachesim", "--json", "-", trace.toString());
        assertThat(json.status()).as(json.stderr()).isZero();
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.stdout()).has("levels")).isTrue();
        assertThat(json.stderr()).contains("L1"); // the text results go to stderr, the JSON alone to stdout
        assertThat(work.resolve("-")).doesNotExist();
    }

    @Test
    void runToStandardOutputKeepsTheProgramsOutputOutOfTheTrace() throws Exception {
        // stderr is a file opened without O_APPEND: the summary must not overwrite the program's line
        Cli.Result r = Cli.run(dir, "run", "--mode", "fault", "-o", "-", "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).doesNotContain("hello from the program").contains("S$");
        assertThat(r.stdout().lines()).allMatch(l -> l.startsWith("#") || l.matches("[A-Z]\\$.*"));
        assertThat(r.stderr()).contains("hello from the program 167944\n").contains("memtrace summary");
    }

    @Test
    void aFullDiskIsOneLineAndStatusOne() throws Exception {
        Path full = Path.of("/dev/full");
        for (String[] args : List.of(new String[] {"print", "-q", trace.toString()}, new String[] {"report", "-o", "-", trace.toString()},
                new String[] {"convert", "--to", "din", "-o", "-", trace.toString()}, new String[] {"run", "--mode", "fault", "-q", "-o", "-", "--", prog.toString()})) {
            Path err = dir.resolve("full.err");
            Process p = Cli.start(dir, full, err, args);
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
            String said = Files.readString(err);
            assertThat(p.exitValue()).as(args[0] + ": " + said).isEqualTo(1);
            assertThat(said).as(args[0]).contains("No space left on device").doesNotContain("Exception");
            assertThat(said.lines()).as(args[0]).allMatch(l -> l.startsWith("memtrace: ") || l.startsWith("hello from the program"));
        }
        Outcome o = memtrace("print", "-q", "-o", "/dev/full", trace.toString());
        assertThat(o.status()).isEqualTo(1);
        assertThat(o.err()).contains("cannot write").contains("No space left on device").doesNotContain("keeps running");
        assertThat(Files.isRegularFile(full)).as("/dev/full is never replaced by a regular file").isFalse();
    }

    @Test
    void aFullFileSystemLeavesNoPartialOutputAndAnIncompleteTrace() throws Exception {
        Path small = Files.createDirectories(dir.resolve("small"));
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", small.toString())
                .redirectErrorStream(true).start();
        boolean mounted = mount.waitFor(10, TimeUnit.SECONDS) && mount.exitValue() == 0;
        Assumptions.assumeTrue(mounted, "cannot mount a small tmpfs (not root?): " + new String(mount.getInputStream().readAllBytes()));
        try {
            Outcome o = memtrace("print", "-q", "-o", small.resolve("t.txt").toString(), trace.toString());
            assertThat(o.status()).isEqualTo(1);
            assertThat(o.err()).contains("No space left on device");
            try (var files = Files.list(small)) {
                assertThat(files.toList()).as("no output, no partial file").isEmpty();
            }
            // the cc runtime on a full disk: one line, the program's own status, a trace readers call incomplete
            Files.write(small.resolve("filler"), new byte[200 * 1024]);
            Process p = start(small.resolve("cut.mtr").toString(), "64", "0"); // stored slots: 770 KB
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).isZero();
            assertThat(Files.readString(dir.resolve("prog.out"))).startsWith("hello from the program");
            assertThat(Files.readString(dir.resolve("prog.err")).lines().toList()).singleElement().asString()
                    .startsWith("memtrace: cannot write the trace " + small.resolve("cut.mtr") + ": no space left on device");
            Outcome read = memtrace("print", "-q", "-o", dir.resolve("cut.txt").toString(), small.resolve("cut.mtr").toString());
            assertThat(read.status()).as(read.err()).isEqualTo(1);
            assertThat(read.err()).contains("the trace");
            // memtrace run --save-stream on a disk with no byte free: the runtime's header write fails, so the file
            // is empty; that is said as an incomplete trace, not as a runtime that never started
            Files.delete(small.resolve("cut.mtr"));
            Files.write(small.resolve("filler2"), new byte[(int) Files.getFileStore(small).getUsableSpace()]);
            Path err = dir.resolve("run-full.err"), text = dir.resolve("run-full.trace");
            Process run = Cli.start(dir, dir.resolve("run-full.out"), err, "run", "-q", "-o", text.toString(),
                    "--save-stream", small.resolve("s.mtr").toString(), "--", prog.toString());
            assertThat(run.waitFor(120, TimeUnit.SECONDS)).isTrue();
            String said = Files.readString(err);
            assertThat(run.exitValue()).as(said).isEqualTo(1);
            assertThat(Files.readString(dir.resolve("run-full.out"))).startsWith("hello from the program");
            assertThat(said).contains("memtrace: cannot write the trace " + small.resolve("s.mtr") + ": no space left on device",
                    "memtrace: nothing of the trace could be written to " + small.resolve("s.mtr")
                            + " (the line above says why): it is empty and incomplete",
                    "memtrace: the trace is incomplete: the program ended without recording its end")
                    .doesNotContain("wrote no trace");
            assertThat(Files.readAllLines(text).getLast()).startsWith("# incomplete the program ended without recording its end");
        } finally {
            new ProcessBuilder("umount", small.toString()).start().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void theRuntimeSaysAFailedWriteOnce() throws Exception {
        Process p = start("/dev/full", "64");
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        assertThat(Files.readString(dir.resolve("prog.out"))).startsWith("hello from the program");
        assertThat(Files.readString(dir.resolve("prog.err")).lines().toList()).singleElement().asString()
                .isEqualTo("memtrace: cannot write the trace /dev/full: no space left on device; it stops here and is incomplete (the program runs on)");
    }

    @Test
    void aFileSizeLimitCutsTheTraceWithOneLineAndTheProgramRunsOn() throws Exception {
        Path cut = dir.resolve("limited.mtr");
        // 100 blocks of 1 KiB: the stored slots (770 KB) do not fit; SIGXFSZ must not kill the program
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", "ulimit -f 100 && exec \"$0\"", prog.toString()).directory(dir.toFile());
        pb.environment().put("MEMTRACE_OUT", cut.toString());
        pb.environment().put("MEMTRACE_CODEC", "0");
        pb.environment().put("MEMTRACE_BUFFER_KB", "64");
        Path err = dir.resolve("limited.err");
        Process p = pb.redirectOutput(dir.resolve("limited.out").toFile()).redirectError(err.toFile()).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        assertThat(Files.readString(dir.resolve("limited.out"))).startsWith("hello from the program");
        assertThat(Files.readString(err).lines().toList()).singleElement().asString()
                .isEqualTo("memtrace: cannot write the trace " + cut + ": file too large; it stops here and is incomplete (the program runs on)");
        assertThat(Files.size(cut)).isBetween(1L, 100L * 1024); // ulimit's blocks: 512 bytes (dash) or 1 KiB (bash)
        Outcome read = memtrace("print", "-q", "-o", dir.resolve("limited.txt").toString(), cut.toString());
        assertThat(read.status()).isEqualTo(1);
        assertThat(read.err()).contains("truncated");
    }

    @Test
    void everyReaderReadsAKilledProgramsTraceUpToTheCut() throws Exception {
        // SIGKILL: no end record, the last chunk cut in the middle
        Path cut = Files.write(dir.resolve("killed.mtr"), Arrays.copyOf(whole, whole.length - 32 - 20));
        String o = dir.resolve("out").toString();
        for (String[] args : List.of(new String[] {"print", "-q", "-o", o + ".txt"}, new String[] {"report", "-o", o + ".html"},
                new String[] {"convert", "--to", "csv", "-o", o + ".csv"}, new String[] {"cachesim", "--json", o + ".json"},
                new String[] {"skeleton", "--emit-c", "-o", o + ".c"})) {
            String[] all = Arrays.copyOf(args, args.length + 1);
            all[args.length] = cut.toString();
            Outcome r = memtrace(all);
            assertThat(r.status()).as(args[0] + ": " + r.err()).isEqualTo(1);
            assertThat(r.err()).as(args[0]).contains("truncated").doesNotContain("internal error");
            assertThat(Path.of(o + args[args.length - 1].substring(args[args.length - 1].lastIndexOf('.')))).as(args[0]).isNotEmptyFile();
        }
    }

    @Test
    void aDamagedChunkIsSaidWithItsPlaceAndNeverPrinted() throws Exception {
        Path good = dir.resolve("good.txt");
        assertThat(memtrace("print", "-q", "-o", good.toString(), trace.toString()).status()).isZero();
        List<String> real = Files.readAllLines(good).stream().map(UserDataTest::withoutNumber).toList();
        // one flipped byte in the second chunk's payload (the first chunk's header is at 64, 40 bytes)
        byte[] bytes = whole.clone();
        long second = 64 + 40 + ((le32(bytes, 64 + 16) + 7) & ~7L);
        bytes[(int) second + 40 + 5] ^= 0x10;
        Path flipped = Files.write(dir.resolve("flipped.mtr"), bytes);
        Path printed = dir.resolve("flipped.txt");
        Outcome o = memtrace("print", "-q", "-o", printed.toString(), flipped.toString());
        assertThat(o.status()).isEqualTo(1);
        assertThat(o.err()).containsPattern("memtrace: thread \\d+, chunk 1: the chunk at offset " + second
                + " is damaged \\(its checksum does not match\\); the rest of this thread's trace is lost");
        assertThat(real).containsAll(Files.readAllLines(printed).stream().map(UserDataTest::withoutNumber).toList());

        // a chunk whose thread id was set to 0xffffffff printed tid -1 and 500 k accesses to <freed:…>
        bytes = whole.clone();
        Arrays.fill(bytes, (int) second + 4, (int) second + 8, (byte) 0xff);
        Outcome t = memtrace("print", "-q", "-o", printed.toString(), Files.write(dir.resolve("tid.mtr"), bytes).toString());
        assertThat(t.status()).isEqualTo(1);
        assertThat(t.err()).contains("chunk 1 at offset " + second + " has a damaged header (its checksum does not match)");
        assertThat(Files.readString(printed)).doesNotContain("tid=-1").doesNotContain("<freed:");
    }

    private static String withoutNumber(String line) { return line.replaceFirst("\\$\\d+:", "\\$:"); }

    private static long le32(byte[] b, int at) {
        return (b[at] & 0xffL) | (b[at + 1] & 0xffL) << 8 | (b[at + 2] & 0xffL) << 16 | (b[at + 3] & 0xffL) << 24;
    }

    @Test
    void aSavedStreamCutTwelveBytesShortPrintsWhatPrecedesTheCut() throws Exception {
        Path plain = Gcc.compile(dir, "user_data.c", "plain", "-pthread");
        Path stream = dir.resolve("s.stream");
        Cli.Result r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", dir.resolve("s.txt").toString(), "--save-stream", stream.toString(), "--", plain.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        try (RandomAccessFile f = new RandomAccessFile(stream.toFile(), "rw")) {
            f.setLength(f.length() - 12);
        }
        Outcome o = memtrace("print", "-q", "-o", dir.resolve("s2.txt").toString(), stream.toString());
        assertThat(o.status()).as(o.err()).isEqualTo(1);
        assertThat(o.err()).contains("the stream is cut short");
        assertThat(dir.resolve("s2.txt")).isNotEmptyFile();
    }

    /** An argument as the launcher passes a name that is not UTF-8: its bytes in hex (RawPaths). */
    private static String raw(byte[] name) { return RawPaths.PREFIX + java.util.HexFormat.of().formatHex(name); }

    @Test
    void namesThatAreNotUtf8AreReadAndWrittenByteForByte() throws Exception {
        byte[] in = {'n', (byte) 0xff, 'x', '.', 'm', 't', 'r'}, out = {'o', (byte) 0xfe, (byte) 0x80, '.', 't', 'x', 't'};
        byte[] parent = (dir + "/").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Path input = RawPaths.path(raw(concat(parent, in)));
        Files.copy(trace, input);
        String output = raw(concat(parent, out));
        Outcome o = memtrace("print", "-q", "-o", output, raw(concat(parent, in)));
        assertThat(o.status()).as(o.err()).isZero();
        try (var names = Files.list(dir)) {
            assertThat(names.map(p -> bytes(p.getFileName())).filter(b -> Arrays.equals(b, out)).count()).as("a file named o\\xfe\\x80.txt").isOne();
        }
        Path good = dir.resolve("utf8.txt");
        assertThat(memtrace("print", "-q", "-o", good.toString(), trace.toString()).status()).isZero();
        assertThat(Files.readAllLines(RawPaths.path(output))).isEqualTo(Files.readAllLines(good));
    }

    @Test
    void aTraceNamedInBytesGetsItsBinaryTraceNameInBytesToo() {
        // run -o $'t\xff' ended in "internal error: ... not hex": ".mtr" was appended to the hex as text
        byte[] name = {'/', 't', (byte) 0xff, (byte) 0xfe};
        assertThat(bytes(RawPaths.withSuffix(raw(name), ".mtr"))).isEqualTo(concat(name, new byte[] {'.', 'm', 't', 'r'}));
        assertThat(RawPaths.withSuffix("/t.txt", ".mtr")).isEqualTo(Path.of("/t.txt.mtr"));
    }

    @Test
    void aProgramInADirectoryNamedInBytesIsRunAndItsAccessesNamed() throws Exception {
        byte[] parent = (dir + "/").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Path sub = Files.createDirectory(RawPaths.path(raw(concat(parent, new byte[] {'d', (byte) 0xff}))));
        Path program = Files.copy(prog, sub.resolve(RawPaths.path(raw(new byte[] {'p', (byte) 0xfe}))));
        Path text = dir.resolve("bytes.txt");
        // "no such file" before: the name reached the JVM as text with U+FFFD; and the site table was not found
        Outcome o = memtrace("run", "--mode", "fault", "-q", "-o", text.toString(), "--", raw(bytes(program)));
        assertThat(o.status()).as(o.err()).isZero();
        Path same = dir.resolve("utf8-run.txt");
        assertThat(memtrace("run", "--mode", "fault", "-q", "-o", same.toString(), "--", prog.toString()).status()).isZero();
        assertThat(accesses(text)).isEqualTo(accesses(same)).isGreaterThan(96_000); // two threads x 3000 elements x 8 rounds, load and store
        assertThat(o.err()).doesNotContain("no site table");
    }

    private static long accesses(Path text) throws java.io.IOException {
        try (var lines = Files.lines(text)) {
            return lines.filter(l -> l.matches("[LS]\\$.*")).count();
        }
    }

    /** A path's bytes, as the file system has them (a directory listing keeps them whole). */
    private static byte[] bytes(Path p) {
        try {
            java.lang.reflect.Method m = p.getClass().getDeclaredMethod("asByteArray");
            m.setAccessible(true);
            return (byte[]) m.invoke(p);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) b.writeBytes(p);
        return b.toByteArray();
    }

    @Test
    void analyzeCallsAMissingFileAUsageErrorAsEveryCommandDoes() {
        Outcome o = memtrace("analyze", dir.resolve("missing").toString());
        assertThat(o.status()).isEqualTo(2);
        assertThat(o.err().lines().toList()).singleElement().asString().startsWith("memtrace: ");
    }
}
