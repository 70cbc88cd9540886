package org.memtrace.cli;

import static org.assertj.core.api.Assertions.*;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.memtrace.event.TestRecords;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.MtrWriter;
import org.memtrace.testutil.MtrWriter.Slots;
import org.memtrace.testutil.TraceFile;

/**
 * memtrace print on .mtr files written per docs/compiled-in.md against a real site table (the sites.c
 * fixture, built -no-pie so its link-time addresses are its run-time ones): exact lines across two threads,
 * rep blocks, weights, and what a damaged or cut-short file still prints.
 */
class PrintCommandTest {
    static final int T1 = 100, T2 = 101;
    static final long HEAP = 0x4c4000;

    @TempDir Path dir;
    Path program;
    Map<String, Long> sym;

    record Outcome(int status, List<String> trace, String err) {}

    @BeforeEach
    void build() throws Exception {
        program = Gcc.compile(dir, "sites.c", "sites", "-no-pie");
        sym = symbols(program);
    }

    static Map<String, Long> symbols(Path elf) throws IOException {
        Map<String, Long> m = new HashMap<>();
        for (ElfSymbol s : ElfFile.read(elf).symtab()) m.put(s.name(), s.value());
        return m;
    }

    long s(String label) { return sym.get(label); }

    /** How the trace names the instruction at a label: work+offset. */
    String at(String label) { return "work+" + (s(label) - s("work")); }

    Outcome print(Path file, String... options) throws IOException {
        Path out = dir.resolve("trace.txt");
        Files.deleteIfExists(out);
        var err = new StringWriter();
        String[] args = new String[options.length + 4];
        args[0] = "print";
        System.arraycopy(options, 0, args, 1, options.length);
        args[options.length + 1] = "-o";
        args[options.length + 2] = out.toString();
        args[options.length + 3] = file.toString();
        int status = Main.execute(new PrintWriter(new StringWriter()), new PrintWriter(err), args);
        List<String> lines = Files.exists(out) ? Files.readAllLines(out) : List.of();
        TraceFile.parse(lines);
        assertThat(err.toString()).doesNotContain("Exception", "\tat ");
        return new Outcome(status, lines, err.toString());
    }

    /** Thread 1 up to its first access records: hello, module, malloc; then its loads, stores and a rep movsb. */
    Slots thread1Start() {
        return new Slots()
                .event(0, TestRecords.hello(T1, 4242))
                .event(1, TestRecords.module(T1, 0, new byte[0], program.toString()))
                .event(2, TestRecords.alloc(T1, 1, s("mt_i1"), HEAP, 64, 64))
                .access(sym.get("table") + 4, s("mt_s1"))
                .access(sym.get("big") + 16, s("mt_s2"));
    }

    Slots thread1End() {
        return new Slots()
                .access(HEAP, s("mt_s4"))
                .access(sym.get("big"), s("mt_s5"))
                .access(16, s("mt_s6"))
                .event(7, TestRecords.alloc(T1, 4, s("mt_i3"), 0, 0, HEAP))
                .access(sym.get("table") + 4, s("mt_s1"))
                .event(8, TestRecords.exit(T1, 1, 0, 0, 0, ""));
    }

    /** Thread 2: starts after the malloc, modifies, loads from the block, runs a rep stosq, exits before the free. */
    Slots thread2() {
        return new Slots()
                .event(4, TestRecords.thread(T2, true, T1))
                .access(sym.get("table") + 8, s("mt_s3"))
                .access(HEAP + 8, s("mt_s9"))
                .access(sym.get("big") + 64, s("mt_s7"))
                .access(4, s("mt_s8"))
                .access(sym.get("big"), s("mt_s7"))
                .access(0, s("mt_s8"))
                .event(6, TestRecords.thread(T2, false, 0));
    }

    String block() { return "<malloc0001@" + at("mt_i1") + ">"; }

    List<String> thread2Lines(int from) {
        return List.of(
                "# thread 101 start parent=100",
                "L$" + from + ":table+8,sites," + at("mt_i3") + ",4,101",
                "S$" + (from + 1) + ":table+8,sites," + at("mt_i3") + ",4,101",
                "L$" + (from + 2) + ":" + block() + "+8,[heap]," + at("mt_i9") + ",8,101",
                "W$" + (from + 3) + ":big+64,sites,32," + at("mt_i5") + ",101,rep_stos",
                "# thread 101 exit code=0");
    }

    Path wholeTrace(boolean end) throws IOException {
        MtrWriter w = new MtrWriter(4242)
                .chunk(T1, thread1Start(), true)
                .chunk(T2, thread2(), true)
                .chunk(T1, thread1End(), false);
        if (end) w.end(0);
        return w.write(dir.resolve("prog.mtr"));
    }

    @Test
    void mergesThreadsByEventSequenceAndNamesEveryAccess() throws Exception {
        Outcome o = print(wholeTrace(true));
        assertThat(o.status()).as(o.err()).isZero();
        List<String> numbered = o.trace().stream().filter(l -> !l.startsWith("# agent") && !l.startsWith("# module")).toList();
        List<String> expected = new java.util.ArrayList<>();
        expected.add("M$0:" + block() + ",64,100");
        expected.addAll(thread2Lines(1));
        expected.addAll(List.of(
                "L$5:table+4,sites," + at("mt_i1") + ",4,100",
                "S$6:big+16,sites," + at("mt_i2") + ",8,100",
                "Y$7:" + block() + "+0,[heap],big+0,sites,16," + at("mt_i4") + ",100,rep_movs",
                "F$8:<freed:0001@" + at("mt_i1") + ">,100",
                "L$9:table+4,sites," + at("mt_i1") + ",4,100",
                "# exit status=0 tid=100"));
        assertThat(numbered).containsExactlyElementsOf(expected);
        assertThat(o.trace().getFirst()).isEqualTo("# agent pid=4242 page-size=4096 regions=15");
        assertThat(o.err()).contains("only code built with memtrace cc is traced")
                .containsPattern("loads\\s+4\\n").containsPattern("stores\\s+2\\n")
                .containsPattern("block copies\\s+1\\n").containsPattern("block stores\\s+1\\n")
                .containsPattern("allocations\\s+1\\n").containsPattern("releases\\s+1\\n")
                .containsPattern("threads\\s+2\\n").containsPattern("probes\\s+7\\n")
                .doesNotContain("faults", "accuracy", "memtrace: ");
    }

    @Test
    void rawLinesCarryTheNumbers() throws Exception {
        Outcome o = print(wholeTrace(true), "--addresses", "both", "-q");
        assertThat(o.status()).isZero();
        assertThat(o.trace()).contains(
                "L#5:0x" + Long.toHexString(s("table") + 4) + ",sites,0x" + Long.toHexString(s("mt_i1")) + ",4,100",
                "L$5:table+4,sites," + at("mt_i1") + ",4,100");
        assertThat(o.err()).isEmpty();
    }

    @Test
    void anEventSplitAcrossTwoChunksIsReadWhole() throws Exception {
        byte[] first = thread1Start().bytes();
        int cut = 16 * 3; // the hello tag, two of its three record slots
        Path file = new MtrWriter(4242)
                .chunk(T1, Arrays.copyOfRange(first, 0, cut), true)
                .chunk(T2, thread2(), true)
                .chunk(T1, Arrays.copyOfRange(first, cut, first.length), true)
                .chunk(T1, thread1End(), true)
                .end(0).write(dir.resolve("split.mtr"));
        Outcome o = print(file, "-q");
        assertThat(o.status()).as(o.err()).isZero();
        assertThat(o.trace()).contains("M$0:" + block() + ",64,100", "# exit status=0 tid=100");
        assertThat(o.trace().stream().filter(l -> l.startsWith("L$") || l.startsWith("S$"))).hasSize(6);
    }

    /**
     * {@code memtrace print t.mtr | head -1} (and {@code convert -o -}): once the pipe's reader has gone, the
     * command stops reading at once and exits as a tool killed by SIGPIPE would (141), with nothing on standard
     * error, instead of reading the whole trace for nobody and calling the closed pipe an error.
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', ignoreLeadingAndTrailingWhitespace = false,
            value = {"print|# agent", "convert --to csv -o -|seq,kind,", "convert --to lackey -o -| L "})
    void aPipeWhoseReaderStopsEndsTheCommandQuietly(String command, String firstLine) throws Exception {
        Slots t = thread1Start();
        for (int i = 0; i < 400_000; i++) t.access(sym.get("big") + 8 * (i % 64), s("mt_s2"));
        Path file = new MtrWriter(4242).chunk(T1, t, true).chunk(T1, thread1End(), true).end(0).write(dir.resolve("long.mtr"));
        Path err = dir.resolve("err.txt");
        List<String> args = new ArrayList<>(List.of(command.split(" ")));
        args.add(file.toString());
        Process p = new ProcessBuilder(org.memtrace.testutil.Cli.command(args.toArray(String[]::new)))
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectError(err.toFile()).start();
        try (var out = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream()))) {
            assertThat(out.readLine()).startsWith(firstLine);
        } // the reader goes, as head's does after its lines
        assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).as("the command stops once the reader has gone").isTrue();
        assertThat(p.exitValue()).isEqualTo(TraceInput.READER_GONE);
        assertThat(Files.readString(err)).isEmpty();
    }

    @Test
    void aKilledProgramsTracePrintsWhatItHoldsThenSaysSo() throws Exception {
        Outcome o = print(wholeTrace(false), "-q");
        assertThat(o.status()).isEqualTo(1);
        assertThat(o.trace()).contains("L$9:table+4,sites," + at("mt_i1") + ",4,100");
        assertThat(o.err().lines().toList()).singleElement().asString().startsWith("memtrace: the trace has no end record");
    }

    @Test
    void aTruncatedFileDeliversTheWholeChunksBeforeTheCut() throws Exception {
        byte[] whole = Files.readAllBytes(wholeTrace(true));
        Path cut = Files.write(dir.resolve("cut.mtr"), Arrays.copyOf(whole, whole.length - 32 - 40));
        Outcome o = print(cut, "-q");
        assertThat(o.status()).isEqualTo(1);
        // Thread 1's second chunk is gone: its first accesses come after thread 2's, at the end of what was read.
        List<String> expected = new java.util.ArrayList<>();
        expected.add("M$0:" + block() + ",64,100");
        expected.addAll(thread2Lines(1));
        expected.add("L$5:table+4,sites," + at("mt_i1") + ",4,100");
        expected.add("S$6:big+16,sites," + at("mt_i2") + ",8,100");
        assertThat(o.trace().stream().filter(l -> !l.startsWith("# agent") && !l.startsWith("# module")).toList())
                .containsExactlyElementsOf(expected);
        assertThat(o.err().lines().toList()).singleElement().asString()
                .startsWith("memtrace: the trace is truncated at offset ").contains("after 2 whole chunks");
    }

    @Test
    void aCorruptCompressedChunkLosesOnlyItsThread() throws Exception {
        byte[] bytes = Files.readAllBytes(wholeTrace(true));
        // The second chunk (thread 2) starts after the header and the first chunk: damage its zstd frame's magic.
        int second = second(bytes);
        bytes[second + 32] ^= 0x55;
        Outcome o = print(Files.write(dir.resolve("bad.mtr"), bytes), "-q");
        assertThat(o.status()).isEqualTo(1);
        assertThat(o.trace()).contains("L$1:table+4,sites," + at("mt_i1") + ",4,100", "F$4:<freed:0001@" + at("mt_i1") + ">,100", "# exit status=0 tid=100")
                .noneMatch(l -> l.endsWith(",101"));
        assertThat(o.err().lines().toList()).singleElement().asString()
                .startsWith("memtrace: thread 101, chunk 1: zstd: ").endsWith("the rest of this thread's trace is lost");
    }

    @Test
    void aDamagedChunkHeaderEndsTheFileThere() throws Exception {
        byte[] bytes = Files.readAllBytes(wholeTrace(true));
        bytes[second(bytes)] = 'X';
        Outcome o = print(Files.write(dir.resolve("bad.mtr"), bytes), "-q");
        assertThat(o.status()).isEqualTo(1);
        assertThat(o.trace()).contains("M$0:" + block() + ",64,100", "L$1:table+4,sites," + at("mt_i1") + ",4,100");
        assertThat(o.err().lines().toList()).singleElement().asString()
                .isEqualTo("memtrace: corrupt chunk at offset " + second(Files.readAllBytes(wholeTrace(true)))
                        + " (bad magic 0x4b4e4858); the rest of the file is ignored");
    }

    @Test
    void anUnknownVersionIsRefusedInOneLine() throws Exception {
        byte[] bytes = Files.readAllBytes(wholeTrace(true));
        bytes[8] = 3;
        Outcome o = print(Files.write(dir.resolve("v3.mtr"), bytes));
        assertThat(o.status()).isEqualTo(1);
        assertThat(o.trace()).isEmpty();
        assertThat(o.err().lines().toList()).singleElement().asString().endsWith(".mtr version 3 is not supported (this memtrace reads versions 1 and 2)");
    }

    @Test
    void aFileThatIsNoTraceIsAUsageError() throws Exception {
        Outcome o = print(program);
        assertThat(o.status()).isEqualTo(2);
        assertThat(o.err().lines().toList()).singleElement().asString().contains("is neither a .mtr file nor an event stream");
    }

    @Test
    void aSelectiveBuildWeighsItsLinesAndReportsItsAccuracy() throws Exception {
        Path selective = Gcc.compile(dir, "sites.c", "sites-ma", "-no-pie", "-DSELECTIVE");
        Map<String, Long> m = symbols(selective);
        Slots t = new Slots()
                .event(0, TestRecords.module(T1, 0, new byte[0], selective.toString()));
        for (int i = 0; i < 3; i++) t.access(m.get("table") + 4, m.get("mt_s1")).access(m.get("table") + 8, m.get("mt_s3"));
        t.access(m.get("big"), m.get("mt_s9"));
        t.event(1, TestRecords.exit(T1, 1, 0, 0, 0, ""));
        Outcome o = print(new MtrWriter(1).chunk(T1, t, true).end(0).write(dir.resolve("ma.mtr")));
        assertThat(o.status()).as(o.err()).isZero();
        String i1 = "work+" + (m.get("mt_i1") - m.get("work")), i3 = "work+" + (m.get("mt_i3") - m.get("work"));
        assertThat(o.trace()).contains("L$0:table+4,sites-ma," + i1 + ",4,100,2", "L$1:table+8,sites-ma," + i3 + ",4,100,1",
                "S$2:table+8,sites-ma," + i3 + ",4,100,1", "L$9:big+0,sites-ma,work+" + (m.get("mt_i9") - m.get("work")) + ",8,100,1");
        // Block A ran 3 times (refs 4, ma 3, aia 4), block B once (3, 3, 3): MA 12/15, AIA 15/15.
        assertThat(o.err()).containsPattern("block executions\\s+4\\n")
                .containsPattern("accuracy ma\\s+80\\.00 %").containsPattern("accuracy aia\\s+100\\.00 %");
    }

    @Test
    void aModuleWhoseBuildIdChangedIsNotNamedFromTheNewFile() throws Exception {
        Slots t = new Slots()
                .event(0, TestRecords.module(T1, 0, new byte[] {1, 2, 3, 4}, program.toString()))
                .access(s("table"), s("mt_s1"))
                .event(1, TestRecords.exit(T1, 1, 0, 0, 0, ""));
        Outcome o = print(new MtrWriter(1).chunk(T1, t, false).end(0).write(dir.resolve("old.mtr")), "-q");
        assertThat(o.status()).isEqualTo(1);
        assertThat(o.trace()).noneMatch(l -> l.startsWith("L"));
        assertThat(o.err().lines().toList()).containsExactly(
                "memtrace: " + program + " changed since the recording (its build-id differs): its probes cannot be named and are left out",
                "memtrace: 1 access records name a site no site table describes (the first 0x" + Long.toHexString(s("mt_s1")) + "); they are left out");
    }

    @Test
    void aStreamSavedByRunPrintsTheSameTraceAsTheRun() throws Exception {
        Path prog = Gcc.compile(dir, "heap_block.c", "heap_block");
        Path live = dir.resolve("live.txt");
        Path stream = dir.resolve("heap.stream");
        var err = new StringWriter();
        int status = Main.execute(new PrintWriter(new StringWriter()), new PrintWriter(err),
                "run", "--mode", "fault", "-q", "-o", live.toString(), "--save-stream", stream.toString(), "--", prog.toString());
        assertThat(status).as(err.toString()).isEqualTo(7);
        Outcome o = print(stream);
        assertThat(o.status()).as(o.err()).isZero();
        assertThat(o.trace()).isEqualTo(Files.readAllLines(live)).anyMatch(l -> l.startsWith("F$"));
        long stores = o.trace().stream().filter(l -> l.startsWith("S$")).count();
        assertThat(o.err()).containsPattern("stores\\s+" + stores + "\\n").contains("faults").doesNotContain("probes", "memtrace: ");
    }

    /** File offset of the second chunk: after the 64-byte header and the first chunk with its padding. */
    static int second(byte[] file) {
        int stored = java.nio.ByteBuffer.wrap(file, 64 + 16, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt();
        return 64 + 32 + ((stored + 7) & ~7);
    }
}
