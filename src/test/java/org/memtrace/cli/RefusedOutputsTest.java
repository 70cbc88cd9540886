package org.memtrace.cli;

import static org.assertj.core.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/** What memtrace run refuses changes no file: every output is checked before anything is opened. */
class RefusedOutputsTest {
    @TempDir static Path dir;
    static Path program;

    @BeforeAll
    static void build() throws Exception {
        program = Gcc.compile(dir, "global_array.c", "global_array", "-no-pie");
    }

    private static void assertRefused(Cli.Result r, String why) {
        assertThat(r.status()).as(r.stderr()).isEqualTo(2);
        assertThat(r.stderr().lines().toList()).singleElement().asString().startsWith("memtrace: ").contains(why);
    }

    @Test
    void anOutputNamingTheProgramLeavesTheProgramWhole() throws Exception {
        byte[] before = Files.readAllBytes(program);
        assertRefused(Cli.run(dir, "run", "-o", program.toString(), "--", program.toString()), "is the program");
        assertRefused(Cli.run(dir, "run", "-o", "global_array", "--", "./global_array"), "is the program");
        assertRefused(Cli.run(dir, "run", "-o", "t.trace", "--save-stream", program.toString(), "--", program.toString()), "is the program");
        assertThat(Files.readAllBytes(program)).isEqualTo(before);
        assertThat(dir.resolve("t.trace")).doesNotExist();
    }

    @Test
    void twoOutputsNamingOneFileAreRefused() throws Exception {
        Path same = dir.resolve("same.out");
        assertRefused(Cli.run(dir, "run", "-o", same.toString(), "--save-stream", "./same.out", "--", program.toString()),
                "name the same file");
        assertRefused(Cli.run(dir, "run", "-o", "same.out", "--json-summary", same.toString(), "--", program.toString()),
                "name the same file");
        assertThat(same).doesNotExist();
    }

    @Test
    void aStreamFileThatIsADirectoryLeavesNoTraceBehind() throws Exception {
        Path sub = Files.createDirectory(dir.resolve("streams"));
        assertRefused(Cli.run(dir, "run", "-o", "dir.trace", "--save-stream", sub.toString(), "--", program.toString()),
                "is a directory");
        assertRefused(Cli.run(dir, "run", "-o", sub.toString(), "--", program.toString()), "is a directory");
        assertThat(dir.resolve("dir.trace")).doesNotExist();
        try (var files = Files.list(sub)) {
            assertThat(files.toList()).isEmpty();
        }
    }

    @Test
    void anExistingTraceIsKeptWhenTheRunIsRefused() throws Exception {
        Path old = Files.writeString(dir.resolve("old.trace"), "# stats faults=0 steps=0 syscalls=0 windows-at-risk=0 untraced-faults=0\n");
        assertRefused(Cli.run(dir, "run", "-o", old.toString(), "--", dir.resolve("missing").toString()), "no such file");
        assertThat(Files.readAllLines(old)).isEqualTo(List.of("# stats faults=0 steps=0 syscalls=0 windows-at-risk=0 untraced-faults=0"));
    }

    @Test
    void anOutputThatTheProgramsArgumentsNameIsRefusedAndKept() throws Exception {
        Path input = Files.writeString(dir.resolve("in.txt"), "hello\n");
        assertRefused(Cli.run(dir, "run", "-o", "in.txt", "--", "/bin/cat", "in.txt"), "the program's argument in.txt names");
        assertRefused(Cli.run(dir, "run", "-o", "t.trace", "--json-summary", input.toString(), "--", program.toString(), "--file=./in.txt"),
                "the program's argument --file=./in.txt names");
        // a name the program is to write, not made yet: the two would write one file
        assertRefused(Cli.run(dir, "run", "-o", "sorted.txt", "--", "/usr/bin/sort", "-o", "sorted.txt", "in.txt"),
                "the program's argument sorted.txt names");
        assertThat(Files.readString(input)).isEqualTo("hello\n");
        assertThat(dir.resolve("t.trace")).doesNotExist();
        assertThat(dir.resolve("sorted.txt")).doesNotExist();
    }

    @Test
    void theTraceIsNeverWrittenThroughALinkNorOverAFileThatIsNoTrace() throws Exception {
        Path precious = Files.writeString(dir.resolve("precious.txt"), "notes\n");
        Path link = Files.createSymbolicLink(dir.resolve("link.trace"), precious.getFileName());
        assertRefused(Cli.run(dir, "run", "-o", link.toString(), "--", program.toString()), "it is a symbolic link");
        assertRefused(Cli.run(dir, "run", "-o", "precious.txt", "--", program.toString()),
                "precious.txt: it exists and is not a memtrace text trace (it is left as it is)");
        assertThat(Files.readString(precious)).isEqualTo("notes\n");
        assertThat(Files.isSymbolicLink(link)).isTrue();
        // an earlier trace under the name is replaced, and so is an empty file
        Path again = dir.resolve("again.trace");
        for (int i = 0; i < 2; i++) {
            Cli.Result r = Cli.run(dir, "run", "-q", "-o", again.toString(), "--", program.toString());
            assertThat(r.status()).as(r.stderr()).isZero();
            assertThat(Files.readString(again)).startsWith(RunOutputs.TRACE_START);
        }
        Path empty = Files.createFile(dir.resolve("empty.trace"));
        assertThat(Cli.run(dir, "run", "-q", "-o", empty.toString(), "--", program.toString()).status()).isZero();
        assertThat(Files.readString(empty)).startsWith(RunOutputs.TRACE_START);
        // the trace of a program killed before its first event is its mark alone: it was refused as "not a trace"
        Path killed = Files.writeString(dir.resolve("killed.trace"),
                "# incomplete the program was killed by SIGKILL before it could record its end: the trace ends there or earlier\n");
        Cli.Result r = Cli.run(dir, "run", "-q", "-o", killed.toString(), "--", program.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(Files.readString(killed)).startsWith(RunOutputs.TRACE_START);
    }

    /**
     * The JSON summary is written beside its name and renamed over it: a symbolic link planted under the name is
     * replaced and the file it named left as it was (before, the summary was written through the link); no
     * partial file stays behind; a device is written as it is, never replaced by a file.
     */
    @Test
    void theJsonSummaryReplacesALinkPlantedUnderItsNameAndNeverWritesThroughIt() throws Exception {
        Path sub = Files.createDirectory(dir.resolve("json"));
        Path victim = Files.writeString(sub.resolve("victim.txt"), "keep me\n");
        Path json = Files.createSymbolicLink(sub.resolve("s.json"), victim.getFileName());
        Cli.Result r = Cli.run(sub, "run", "-q", "-o", "/dev/null", "--json-summary", json.toString(), "--", program.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(Files.readString(victim)).isEqualTo("keep me\n");
        assertThat(Files.isSymbolicLink(json)).isFalse();
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.toFile()).get("exitStatus").asInt()).isZero();
        try (var files = Files.list(sub)) {
            // (and the test's own files of the program's output)
            assertThat(files.map(p -> p.getFileName().toString()).filter(n -> !n.matches("std(out|err)\\d+\\.txt")))
                    .containsExactlyInAnyOrder("victim.txt", "s.json");
        }
        r = Cli.run(sub, "run", "-q", "-o", "/dev/null", "--json-summary", "/dev/null", "--", program.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(Files.isRegularFile(Path.of("/dev/null"))).isFalse();
    }

    @Test
    void theStreamFileReplacesOnlyAnEarlierRecordingInEitherMode() throws Exception {
        Path notes = Files.writeString(dir.resolve("notes.txt"), "notes\n");
        Path link = Files.createSymbolicLink(dir.resolve("link.stream"), notes.getFileName());
        for (String mode : List.of("rewrite", "fault")) {
            assertRefused(Cli.run(dir, "run", "--mode", mode, "-o", "/dev/null", "--save-stream", "notes.txt", "--", program.toString()),
                    "cannot write the stream file notes.txt: it exists and is not a recording memtrace saved (it is left as it is)");
            assertRefused(Cli.run(dir, "run", "--mode", mode, "-o", "/dev/null", "--save-stream", "link.stream", "--", program.toString()),
                    "it is a symbolic link");
            Path stream = dir.resolve(mode + ".stream");
            for (int i = 0; i < 2; i++) {
                Cli.Result r = Cli.run(dir, "run", "-q", "--mode", mode, "-o", "/dev/null", "--save-stream", stream.toString(), "--", program.toString());
                assertThat(r.status()).as(r.stderr()).isZero();
                assertThat(Files.size(stream)).isPositive();
            }
        }
        assertThat(Files.readString(notes)).isEqualTo("notes\n");
    }

    @Test
    void anArgumentNamesItselfAndWhatFollowsItsFirstEqualsSign() {
        assertThat(RunOutputs.named("--in=a=b")).containsExactly(Path.of("--in=a=b"), Path.of("a=b"));
        assertThat(RunOutputs.named("x")).containsExactly(Path.of("x"));
        assertThat(RunOutputs.named("-oout.txt")).containsExactly(Path.of("-oout.txt"), Path.of("out.txt"));
        assertThat(RunOutputs.named("--o")).containsExactly(Path.of("--o"));
        assertThat(RunOutputs.named("k=")).containsExactly(Path.of("k="));
        assertThat(RunOutputs.named("")).isEmpty();
    }
}
