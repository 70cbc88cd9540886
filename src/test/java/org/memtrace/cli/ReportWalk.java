package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * The browser tests' fixture: reportwalk.c (a global table, three heap blocks, a use after free) built
 * {@code -O1 -g -no-pie}, traced in fault mode into a saved stream, its report, and its CSV export's rows
 * (seq,kind,store,address,size,ip,instruction,thread,region,symbol,offset,source), against which a test checks
 * what the page shows.
 */
record ReportWalk(Path html, List<String[]> rows) {
    /** Built in {@code dir}; {@code runOptions} go to {@code memtrace run} (e.g. {@code --stack-depth 1}). */
    static ReportWalk build(Path dir, String... runOptions) throws Exception {
        Path exe = Gcc.compile(dir, "reportwalk.c", "reportwalk", "-O1", "-g", "-no-pie");
        Path stream = dir.resolve("rw.stream");
        List<String> run = new ArrayList<>(List.of("run", "--mode", "fault", "-q"));
        run.addAll(List.of(runOptions));
        run.addAll(List.of("-o", "/dev/null", "--save-stream", stream.toString(), "--", exe.toString()));
        var r = Cli.run(dir, run.toArray(String[]::new));
        assertThat(r.status()).as(r.stderr()).isZero();
        Path html = dir.resolve("report.html");
        r = Cli.run(dir, "report", stream.toString(), "-o", html.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).isEmpty();
        Path csv = dir.resolve("rw.csv");
        r = Cli.run(dir, "convert", stream.toString(), "--to", "csv", "-o", csv.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        List<String> lines = Files.readAllLines(csv);
        return new ReportWalk(html, lines.subList(1, lines.size()).stream().map(l -> l.split(",", -1)).toList());
    }
}
