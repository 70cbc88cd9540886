package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * {@code memtrace convert --to drmemtrace} on a recorded trace, without DynamoRIO (DrcachesimComparisonTest
 * runs drcachesim on it): the directory's layout, its records against the xdin export of the same trace,
 * and the refusals every directory output has.
 */
class ConvertDrmemtraceTest {
    @TempDir static Path dir;
    static Path stream;

    @BeforeAll
    static void record() throws Exception {
        Path exe = Gcc.compile(dir, "dinero_mix.c", "mix", "-O1", "-g", "-no-pie");
        stream = dir.resolve("mix.stream");
        var r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", dir.resolve("mix.trace").toString(), "--save-stream", stream.toString(), "--", exe.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
    }

    /**
     * One thread, one file: every xdin line is one data entry of the same kind, address and size, in order,
     * each after an instruction entry of a decoded length (1 to 15 bytes), with the header before them and
     * the thread's exit and footer after; a branch through memory has its branch type.
     */
    @Test
    void theDataEntriesAreTheXdinExportsLines() throws Exception {
        Path out = dir.resolve("mix.drmemtrace"), xdin = dir.resolve("mix.xdin");
        var r = Cli.run(dir, "convert", stream.toString(), "--to", "drmemtrace", "-o", out.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).isEmpty();
        r = Cli.run(dir, "convert", stream.toString(), "--to", "xdin", "-o", xdin.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        List<Path> files;
        try (var list = Files.list(out.resolve("trace"))) {
            files = list.toList();
        }
        assertThat(files).hasSize(1);
        assertThat(files.getFirst().getFileName().toString()).matches("drmemtrace\\.memtrace\\.[0-9]+\\.trace\\.gz");
        ByteBuffer b;
        try (InputStream in = new GZIPInputStream(Files.newInputStream(files.getFirst()))) {
            b = ByteBuffer.wrap(in.readAllBytes()).order(ByteOrder.LITTLE_ENDIAN);
        }
        assertThat(b.getShort(0)).isEqualTo((short) 25);        // the header
        assertThat(b.getShort(b.limit() - 12)).isEqualTo((short) 26);   // the footer
        assertThat(b.getShort(b.limit() - 24)).isEqualTo((short) 23);   // the thread's exit
        StringBuilder data = new StringBuilder();
        boolean lastInstructionOrData = false;
        long instructions = 0, branches = 0;
        while (b.hasRemaining()) {
            int type = b.getShort() & 0xffff, size = b.getShort() & 0xffff;
            long addr = b.getLong();
            // INSTR, or a branch: DIRECT_JUMP, INDIRECT_JUMP, DIRECT_CALL, INDIRECT_CALL, RETURN
            boolean instruction = type == 10 || type == 11 || type == 12 || type == 14 || type == 15 || type == 16;
            if (instruction) {
                assertThat(size).isBetween(1, 15);
                instructions++;
                if (type != 10) branches++;
            }
            if (type == 0 || type == 1) {
                assertThat(lastInstructionOrData).as("a data entry follows its instruction or another data entry").isTrue();
                data.append(type == 0 ? 'r' : 'w').append(' ').append(Long.toHexString(addr)).append(' ')
                        .append(Integer.toHexString(size)).append('\n');
            }
            lastInstructionOrData = instruction || type == 0 || type == 1;
        }
        assertThat(data.toString()).isEqualTo(Files.readString(xdin));
        assertThat(instructions).isGreaterThan(40_000);
        // printf's PLT entry jumps through the GOT: an instruction that reads memory and branches
        assertThat(branches).isPositive();
    }

    @Test
    void anExistingDirectoryStandardOutputAndTheTraceItselfAreRefused() throws Exception {
        Path exists = Files.createDirectories(dir.resolve("exists"));
        var r = Cli.run(dir, "convert", stream.toString(), "--to", "drmemtrace", "-o", exists.toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).isEqualTo("memtrace: cannot write " + exists + ": it exists; the drmemtrace export is written to a new directory\n");
        r = Cli.run(dir, "convert", stream.toString(), "--to", "drmemtrace", "-o", "-");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).isEqualTo("memtrace: the drmemtrace export is a directory: name one with -o, not standard output\n");
        r = Cli.run(dir, "convert", stream.toString(), "--to", "drmemtrace", "-o", stream.toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).doesNotContain("Exception").hasLineCount(1);
        r = Cli.run(dir, "convert", dir.resolve("missing.stream").toString(), "--to", "drmemtrace", "-o", dir.resolve("y").toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).contains("no trace file").hasLineCount(1);
        assertThat(dir.resolve("y")).doesNotExist();
        try (var list = Files.list(dir)) {
            assertThat(list.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".partial"));
        }
    }
}
