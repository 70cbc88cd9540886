package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.Selections;

/**
 * {@code memtrace analyze} on a linked program built by {@code memtrace cc} reports exactly the build's
 * choice, though the rewriter selected on unlinked objects: static operands are places (symbol + offset)
 * in both views. The fixture has globals, statics and arrays of three units addressed RIP-relative (and
 * absolute with {@code -no-pie}), some less and some more than a chunk apart, and a GOT load of a function's
 * address that the linker relaxes (no memory reference on either side). The plain program built by
 * gcc gets the same selection.
 */
class AnalyzeLinkedCcBuildTest {
    private static final List<String> UNITS = List.of("exact_a.c", "exact_b.c", "exact_main.c");
    private static final Set<String> FUNCTIONS = Set.of("tally", "blend", "checksum", "main");

    @TempDir Path dir;

    @ParameterizedTest
    @CsvSource({"-O2,0.25", "-O2,0.1", "-O2 -no-pie,0.25", "-O0 -no-pie,0.1"})
    void aLinkedCcBuildReportsExactlyTheSelectedOnes(String flags, String omega) throws Exception {
        for (String f : List.of("exact.h", "exact_a.c", "exact_b.c", "exact_main.c")) copy(f);
        List<String> gccFlags = Arrays.asList(flags.split(" "));
        List<String> plain = new ArrayList<>(List.of("gcc"));
        plain.addAll(gccFlags);
        plain.addAll(List.of("-o", dir.resolve("plain").toString()));
        UNITS.forEach(u -> plain.add(dir.resolve(u).toString()));
        Gcc.run(plain);
        List<String> cc = new ArrayList<>(List.of("cc", "--omega", omega));
        cc.addAll(gccFlags);
        cc.addAll(List.of("-o", "prog"));
        cc.addAll(UNITS);
        Cli.Result build = Cli.run(dir, cc.toArray(String[]::new));
        assertThat(build.status()).as(build.stderr()).isZero();
        assertThat(Gcc.run(List.of(dir.resolve("prog").toString()))).isEqualTo(Gcc.run(List.of(dir.resolve("plain").toString())));

        Cli.Result text = Cli.run(dir, "analyze", "prog");
        assertThat(text.status()).as(text.stderr()).isZero();
        assertThat(text.stdout()).containsPattern("site table: \\d+ instrumented instructions .*exactly the selected ones");

        JsonNode instrumented = Selections.json(dir, "analyze", "--json", "prog");
        JsonNode recorded = instrumented.get("memtraceCc");
        assertThat(recorded.get("selectedWithoutProbe").asInt()).isZero();
        assertThat(recorded.get("probedNotSelected").asInt()).isZero();
        assertThat(recorded.get("instrumented").asInt()).isPositive();

        JsonNode reference = Selections.json(dir, "analyze", "--json", "--stack", "--omega", omega, "plain");
        JsonNode p = reference.get("runs").get(0), c = instrumented.get("runs").get(0);
        for (String field : List.of("memoryReferences", "classes", "selected", "minimalAccuracy", "alignmentIndependentAccuracy")) {
            assertThat(c.get("summary").get(field)).as(field).isEqualTo(p.get("summary").get(field));
        }
        List<String> chosen = Selections.describe(c, dir.resolve("prog"), FUNCTIONS::contains);
        assertThat(chosen).isEqualTo(Selections.describe(p, dir.resolve("plain"), FUNCTIONS::contains));
        assertThat(chosen).anyMatch(s -> s.startsWith("tally ")).anyMatch(s -> s.startsWith("blend "))
                .anyMatch(s -> s.startsWith("checksum "));

        // Stripped, the file no longer names the places and functions the build selected on: no verdict.
        Gcc.strip(dir.resolve("prog"), "stripped");
        Cli.Result stripped = Cli.run(dir, "analyze", "stripped");
        assertThat(stripped.status()).as(stripped.stderr()).isZero();
        assertThat(stripped.stdout()).contains("(not compared: the file is stripped: without its symbol table")
                .doesNotContain("exactly the selected ones").doesNotContain("have no probe");
    }

    private void copy(String source) throws IOException {
        try (InputStream in = AnalyzeLinkedCcBuildTest.class.getResourceAsStream("/c/exact/" + source)) {
            if (in == null) throw new IOException("no fixture " + source);
            Files.copy(in, dir.resolve(source));
        }
    }
}
