package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.Selections;

/**
 * {@code memtrace analyze} on an object built by {@code memtrace cc} reports the selection it reports on
 * the plain object compiled with the same flags: it skips the probes, takes the build's recorded options,
 * and checks them against the site table.
 */
class AnalyzeCcBuildTest {
    @TempDir Path dir;

    @ParameterizedTest
    @CsvSource({"-O2,0.25,true", "-O0,0.1,false", "-O2,1,true"})
    void aCcBuiltObjectGetsThePlainObjectsSelection(String level, String omega, boolean stack) throws Exception {
        copy("wf_table.c");
        copy("wf.h");
        Gcc.run(List.of("gcc", level, "-c", "-o", dir.resolve("plain.o").toString(), dir.resolve("wf_table.c").toString()));
        List<String> cc = new ArrayList<>(List.of("cc", "--omega", omega));
        if (!stack) cc.add("--no-stack");
        cc.addAll(List.of(level, "-c", "-o", "cc.o", "wf_table.c"));
        Cli.Result build = Cli.run(dir, cc.toArray(String[]::new));
        assertThat(build.status()).as(build.stderr()).isZero();

        List<String> plainArgs = new ArrayList<>(List.of("analyze", "--json", "--omega", omega));
        if (stack) plainArgs.add("--stack");
        plainArgs.add("plain.o");
        JsonNode plain = Selections.json(dir, plainArgs.toArray(String[]::new));
        JsonNode instrumented = Selections.json(dir, "analyze", "--json", "cc.o"); // the build's options, from the object

        assertThat(plain.has("memtraceCc")).isFalse();
        JsonNode recorded = instrumented.get("memtraceCc");
        String w = Double.toString(Double.parseDouble(omega));
        assertThat(recorded.get("options").get(0).asText())
                .isEqualTo("memtrace cc --omega " + w + " --chunk 4096 --scores 1,2,4 --mode log" + (stack ? "" : " --no-stack"));
        assertThat(instrumented.get("includeStack").asBoolean()).isEqualTo(stack);
        assertThat(recorded.get("selectedWithoutProbe").asInt()).isZero();
        assertThat(recorded.get("probedNotSelected").asInt()).isZero();
        assertThat(recorded.get("functionsWithoutProbes").asInt()).isZero();

        JsonNode p = plain.get("runs").get(0), c = instrumented.get("runs").get(0);
        for (String field : List.of("omega", "memoryReferences", "classes", "selected", "minimalAccuracy",
                "alignmentIndependentAccuracy")) {
            assertThat(c.get("summary").get(field)).as(field).isEqualTo(p.get("summary").get(field));
        }
        assertThat(p.get("summary").get("selected").asInt()).isPositive();
        if (!omega.equals("1")) {
            assertThat(recorded.get("instrumented").asInt()).isEqualTo(c.get("summary").get("selected").asInt());
            assertThat(p.get("summary").get("minimalAccuracy").asDouble()).isLessThan(1);
        }
        assertThat(Selections.describe(c, dir.resolve("cc.o"), f -> true)).isEqualTo(Selections.describe(p, dir.resolve("plain.o"), f -> true));
    }

    @Test
    void theTextReportSaysWhoBuiltTheFile() throws Exception {
        copy("wf_table.c");
        copy("wf.h");
        Cli.Result build = Cli.run(dir, "cc", "--omega", "0.5", "-O1", "-c", "-o", "cc.o", "wf_table.c");
        assertThat(build.status()).as(build.stderr()).isZero();
        Cli.Result r = Cli.run(dir, "analyze", "cc.o");
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("built by memtrace cc --omega 0.5 --chunk 4096 --scores 1,2,4 --mode log: ")
                .containsPattern("site table: \\d+ instrumented instructions, exactly the selected ones")
                .contains("omega 0.5: ").contains("stack accesses included");
        Cli.Result other = Cli.run(dir, "analyze", "--omega", "0.2", "cc.o");
        assertThat(other.stdout()).contains("not compared: the analysis options are not the build's").contains("omega 0.2: ");
    }

    private void copy(String source) throws IOException {
        try (InputStream in = AnalyzeCcBuildTest.class.getResourceAsStream("/c/wordfreq/" + source)) {
            if (in == null) throw new IOException("no fixture " + source);
            Files.copy(in, dir.resolve(source));
        }
    }
}
