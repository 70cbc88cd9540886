package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/** Bad input and bad output for cachesim, convert and report: one line, a non-zero status, no file that looks finished. */
class OfflineInputErrorsTest {
    @TempDir static Path dir;
    static Path stream;

    @BeforeAll
    static void record() throws Exception {
        Path exe = Gcc.compile(dir, "global_array.c", "global_array", "-g");
        stream = dir.resolve("good.stream");
        var r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", dir.resolve("good.trace").toString(), "--save-stream", stream.toString(), "--", exe.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
    }

    /** Runs memtrace in a fresh directory holding only the input; checks the one-line error and that nothing was written. */
    private static void fails(int status, String message, Path input, String... args) throws Exception {
        Path work = Files.createTempDirectory(dir, "work");
        Path in = input == null ? work.resolve("missing.stream") : Files.copy(input, work.resolve("in.stream"));
        String[] full = Stream.concat(Stream.of(args[0], in.toString()), Stream.of(args).skip(1)).toArray(String[]::new);
        var r = Cli.run(work, full);
        assertThat(r.status()).as(r.stderr()).isEqualTo(status);
        assertThat(r.stderr().lines().toList()).hasSize(1);
        assertThat(r.stderr()).startsWith("memtrace: ").contains(message);
        try (Stream<Path> files = Files.list(work)) {
            assertThat(files.map(p -> p.getFileName().toString()).filter(n -> !n.startsWith("std")))
                    .as("only the input is left").containsExactlyInAnyOrderElementsOf(input == null ? List.of() : List.of("in.stream"));
        }
    }

    @Test
    void aMissingTraceIsAUsageError() throws Exception {
        fails(2, "no trace file", null, "cachesim");
        fails(2, "no trace file", null, "convert", "--to", "csv", "-o", "out.csv");
        fails(2, "no trace file", null, "report", "-o", "out.html");
    }

    /**
     * Runs memtrace on a damaged copy of a trace: the reader reads up to the damage, writes its output from
     * that, says what was lost in lines starting "memtrace: " and exits 1 (docs/exit-status.md).
     */
    private static void readsUpToTheDamage(String message, Path input, String output, String... args) throws Exception {
        assertThat(output).isNotNull();
        Path work = Files.createTempDirectory(dir, "work");
        Path in = Files.copy(input, work.resolve("in.stream"));
        String[] full = Stream.concat(Stream.of(args[0], in.toString()), Stream.of(args).skip(1)).toArray(String[]::new);
        var r = Cli.run(work, full);
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        assertThat(r.stderr().lines().filter(l -> !l.contains("warning")).toList()).isNotEmpty().allMatch(l -> l.startsWith("memtrace: "));
        assertThat(r.stderr()).contains(message).doesNotContain("Exception");
        // the output of what precedes the damage (all of it may be in the damaged block of a small stream)
        if (output != null) assertThat(work.resolve(output)).exists();
    }

    @Test
    void aTruncatedStreamIsReadUpToTheCut() throws Exception {
        Path cut = dir.resolve("cut.stream");
        Files.copy(stream, cut);
        try (RandomAccessFile f = new RandomAccessFile(cut.toFile(), "rw")) {
            f.setLength(f.length() - 100);
        }
        readsUpToTheDamage("the stream is cut short", cut, "out.parquet", "convert", "--to", "parquet", "-o", "out.parquet");
        readsUpToTheDamage("the stream is cut short", cut, "out.txt", "convert", "--to", "lackey", "-o", "out.txt");
        readsUpToTheDamage("the stream is cut short", cut, "out.json", "cachesim", "--json", "out.json");
        readsUpToTheDamage("the stream is cut short", cut, "out.html", "report", "-o", "out.html");
    }

    @Test
    void aDamagedBlockIsSkippedAndSaid() throws Exception {
        Path bad = dir.resolve("bad.stream");
        Files.copy(stream, bad);
        try (RandomAccessFile f = new RandomAccessFile(bad.toFile(), "rw")) {
            // the header is one page, the block header 16 bytes; scribble over the records after the first few
            f.seek(4096 + 256);
            for (int i = 0; i < 64; i++) f.writeInt(0x7f7f7f7f);
        }
        readsUpToTheDamage("block 0 at offset 4096 is damaged (its checksum does not match)", bad, "out.csv", "convert", "--to", "csv", "-o", "out.csv");
        readsUpToTheDamage("block 0 at offset 4096 is damaged (its checksum does not match)", bad, "out.html", "report", "-o", "out.html");
    }

    @Test
    void aFileThatIsNoStreamIsRefused() throws Exception {
        Path text = dir.resolve("notes.txt");
        Files.writeString(text, "L$0:table+0,prog,main+4,4,1\n".repeat(500));
        fails(2, "neither a .mtr file nor an event stream", text, "cachesim");
        fails(2, "neither a .mtr file nor an event stream", text, "report", "-o", "out.html");
    }

    @Test
    void aTextTraceNamedMtrIsToldForWhatItIs() throws Exception {
        // what `memtrace run -o t.mtr` writes: a text trace, whatever the name says
        Path text = dir.resolve("t.mtr");
        Files.writeString(text, "# agent pid=1 page-size=4096 regions=0\n" + "L$0:table+0,prog,main+4,4,1\n".repeat(50));
        for (String[] command : List.of(new String[] {"print"}, new String[] {"cachesim"}, new String[] {"convert", "--to", "csv", "-o", "out.csv"}))
            fails(2, "in.stream is a text trace (what memtrace run and print write): read it as it is", text, command);
    }

    @Test
    void badOptionsAreUsageErrors() throws Exception {
        fails(2, "--bogus", stream, "cachesim", "--bogus");
        fails(2, "--l1", stream, "cachesim", "--l1", "32k:8:48");
        fails(2, "--l3 needs --l2", stream, "cachesim", "--l3", "8m:16:64");
        fails(2, "--policy", stream, "cachesim", "--policy", "mru");
        fails(2, "--to", stream, "convert", "--to", "xml", "-o", "out.xml");
        fails(2, "--to", stream, "convert", "-o", "out.xml");
        fails(2, "--top", stream, "report", "--top", "-1", "-o", "out.html");
    }

    @Test
    void anUnwritableOutputIsRefusedBeforeAnyWork() throws Exception {
        fails(2, "cannot write", stream, "convert", "--to", "csv", "-o", "/nonexistent/out.csv");
        fails(2, "it is a directory", stream, "convert", "--to", "csv", "-o", dir.toString());
        fails(2, "cannot write", stream, "cachesim", "--json", "/nonexistent/out.json");
        fails(2, "cannot write", stream, "report", "-o", "/nonexistent/out.html");
    }
}
