package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import org.memtrace.select.ElfText;
import org.memtrace.select.FunctionSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.x86.Decoder;

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
        JsonNode plain = json(plainArgs.toArray(String[]::new));
        JsonNode instrumented = json("analyze", "--json", "cc.o"); // the build's options, from the object

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
        assertThat(selection(c, dir.resolve("cc.o"))).isEqualTo(selection(p, dir.resolve("plain.o")));
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

    /** Each selected instruction as its function, its mnemonic and the accesses it stands for: what the layout does not change. */
    private static List<String> selection(JsonNode run, Path object) throws Exception {
        ElfText elf = ElfText.read(object);
        Decoder decoder = new Decoder();
        List<String> result = new ArrayList<>();
        for (JsonNode s : run.get("selected")) {
            long address = s.get("address").asLong();
            FunctionSymbol f = elf.functions().stream().filter(x -> x.name().equals(s.get("function").asText())).findFirst().orElseThrow();
            String mnemonic = decoder.decode(elf.text(), elf.offsetOf(f) + (int) (address - f.address()), address).orElseThrow().mnemonic();
            result.add(f.name() + " " + mnemonic + " ma " + s.get("ma") + " aia " + s.get("aia") + " class " + s.get("class").size()
                    + " associated " + s.get("associated").size());
        }
        return result;
    }

    private JsonNode json(String... args) throws Exception {
        Cli.Result r = Cli.run(dir, args);
        assertThat(r.status()).as(r.stderr()).isZero();
        return new ObjectMapper().readTree(r.stdout());
    }

    private void copy(String source) throws IOException {
        try (InputStream in = AnalyzeCcBuildTest.class.getResourceAsStream("/c/wordfreq/" + source)) {
            if (in == null) throw new IOException("no fixture " + source);
            Files.copy(in, dir.resolve(source));
        }
    }
}
