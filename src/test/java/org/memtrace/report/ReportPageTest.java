package org.memtrace.report;

import static org.assertj.core.api.Assertions.*;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.analysis.Ending;
import org.memtrace.heap.SymbolicNaming;

/** Where the page goes, and what a failure to write it says: the page's name, never its partial file's. */
class ReportPageTest {
    @TempDir Path dir;

    private static Ending none() { return Ending.offline(0, 0, 0, Map.of()); }

    @Test
    void aPageTheCallerNamesIsLeftInItsPartialFile() throws IOException {
        Path partial = dir.resolve(".p.html.1.partial");
        new Report(new SymbolicNaming(), false).writeTo(partial, null, "p.html", 10, 0).finish(none());
        assertThat(Files.readString(partial)).startsWith("<!DOCTYPE html>");
        assertThat(dir.resolve("p.html")).doesNotExist();
    }

    @Test
    void aPageThatCannotBeWrittenIsNamedAsTheUserNamedIt() throws IOException {
        // memtrace report -o p.html on a full disk said "cannot write /dir/.p.html.1234.partial: ..."
        Path partial = Files.createDirectory(dir.resolve(".p.html.1.partial"));
        Report report = new Report(new SymbolicNaming(), false).writeTo(partial, null, "p.html", 10, 0);
        assertThatThrownBy(() -> report.finish(none())).isInstanceOf(IOException.class)
                .hasMessage("cannot write p.html: Is a directory");
    }
}
