package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * Code a program makes at run time (a JIT's: rewrite_jit.c maps anonymous memory executable and calls a store
 * it wrote there 1,000 times) has no plan: rewrite mode runs it as written, untraced, and the summary says so
 * in its own line, with how many executable mappings the program made and their bytes (issue 22: nothing lost
 * without a word). The program's other accesses are traced, and it exits as natively.
 */
class RewriteGeneratedCodeTest {
    @TempDir Path dir;

    @Test
    void codeMadeAtRunTimeIsSaidToRunUntraced() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_jit.c", "jit", "-O1", "-g");
        Path trace = dir.resolve("t.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).contains("memtrace: rewrite: code made at run time is not rewritten: 1 executable mapping the program mapped"
                + " (4,096 bytes) ran untraced\n");
        // the generated store's 1,000 writes of cell are not in the trace; main's own load of cell is
        long cellStores = TraceFile.read(trace).lines().stream().filter(l -> l.type() == 'S' && l.field(0).startsWith("cell")).count();
        assertThat(cellStores).isZero();
        assertThat(TraceFile.read(trace).lines()).anyMatch(l -> l.type() == 'L' && l.field(0).startsWith("cell"));
    }
}
