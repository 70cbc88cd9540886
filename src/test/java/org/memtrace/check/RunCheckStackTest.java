package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code memtrace run --check}'s stack variables from DWARF (docs/check.md, "Stack variables"): run_stack.c built
 * by plain gcc -O0 -g overflows a local by memcpy, by memset in a callee writing into its caller's struct, by
 * strcpy and by sprintf; each is reported with the variable, its function and declaration line, the bytes and
 * the distance, as the compiled-in checker says it, and --stack-depth prints the frames with file:line, which
 * the JSON record ("frames") and the SARIF result ("stacks") carry too. The twins are silent; without -g nothing
 * is known of the stack and the run is as native.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCheckStackTest {
    Path dir;
    Path source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "run_stack.c");
        gcc("gcc", "-O0", "-g", "-o", "run_stack", "run_stack.c");
        gcc("gcc", "-O0", "-o", "run_stack_nodwarf", "run_stack.c");
    }

    private void gcc(String... args) throws Exception {
        Process p = new ProcessBuilder(args).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
    }

    private int line(String key) throws Exception {
        return CheckBuilds.line(source, key);
    }

    /** The report (after "memtrace: ", before ", at") of each case, and the function it is in. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "memcpy  | stack overflow: <stack:buf@copy_in>+16 (a variable of 16 bytes, declared at line {BUF} of copy_in) written 32 bytes by memcpy, 0 bytes past its end | MEMCPY  | copy_in      | MAIN_MEMCPY",
        "callee  | stack overflow: <stack:rec@callee_fills>+24 (a variable of 24 bytes, declared at line {REC} of callee_fills) written 24 bytes by memset, 0 bytes past its end | FILL | fill | CALLEE",
        "strcpy  | stack overflow: <stack:name@name_copy>+8 (a variable of 8 bytes, declared at line {NAME} of name_copy) written 9 bytes by strcpy, 0 bytes past its end | STRCPY | name_copy | MAIN_STRCPY",
        "sprintf | stack overflow: <stack:line@formatted>+12 (a variable of 12 bytes, declared at line {LINE} of formatted) written 14 bytes by sprintf, 0 bytes past its end | SPRINTF | formatted | MAIN_SPRINTF",
    })
    void aStackOverflowNamesTheVariableItsFunctionAndTheLines(String name, String report, String at, String function, String caller)
            throws Exception {
        String want = report.replaceAll("\\{(\\w+)\\}", "%s");
        String decl = report.replaceAll(".*\\{(\\w+)\\}.*", "$1");
        want = want.formatted(line(decl));
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", "fault", "--stack-depth", "2"), Map.of(), "./run_stack", name, "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines).as(r.stderr()).hasSize(3);
        // the site as a --check build names it: file:line from the DWARF line table, the function from the .symtab
        String site = "run_stack.c:" + line(at);
        assertThat(lines.get(0)).startsWith("memtrace: " + want + ", at " + site + " (" + function + "+")
                .matches(".*, at run_stack\\.c:\\d+ \\(" + function + "\\+\\d+\\), thread \\d+");
        String code = lines.get(0).replaceAll(".*, at run_stack\\.c:\\d+ \\((" + function + "\\+\\d+)\\), thread.*", "$1");
        assertThat(lines.get(1)).isEqualTo("    #0 " + site + " (" + code + ") in " + function);
        String up = name.equals("callee") ? "callee_fills" : "main";
        assertThat(lines.get(2)).matches("    #1 run_stack\\.c:" + line(caller) + " \\(" + up + "\\+\\d+\\) in " + up);
        assertThat(r.stdout()).isEmpty(); // stopped at the report, before main printed
        // with --stack-depth 1: the one line (the default, 12, gives the frames as above)
        CheckBuilds.Run one = CheckBuilds.runCheck(dir, List.of("--mode", "fault", "--stack-depth", "1"), Map.of(), "./run_stack", name, "bad");
        assertThat(one.stderr().lines().toList()).hasSize(1).first().asString().startsWith("memtrace: " + want + ", at " + site + " (" + code + "), thread ");
    }

    /**
     * Rewrite mode's check runtime gets the same table (agent/check/check_stackvars.c): its wrappers give fault
     * mode's line, the same site included (the call's return address), and the twins stay silent.
     */
    @ParameterizedTest
    @CsvSource({"memcpy", "callee", "strcpy", "sprintf"})
    void rewriteModeGivesFaultModesLine(String name) throws Exception {
        CheckBuilds.Run fault = CheckBuilds.runCheck(dir, List.of("--mode", "fault", "--stack-depth", "1"), Map.of(), "./run_stack", name, "bad");
        CheckBuilds.Run rewrite = CheckBuilds.runCheck(dir, List.of("--mode", "rewrite", "--stack-depth", "1"), Map.of(), "./run_stack", name, "bad");
        assertThat(rewrite.status()).as(rewrite.stderr()).isEqualTo(1);
        List<String> lines = rewrite.stderr().lines().toList();
        assertThat(lines).as(rewrite.stderr()).hasSize(1);
        String faultLine = fault.stderr().lines().findFirst().orElseThrow();
        assertThat(lines.getFirst().replaceAll("thread \\d+$", "")).startsWith("memtrace: stack overflow: <stack:")
                .isEqualTo(faultLine.replaceAll("thread \\d+$", ""));
        assertThat(rewrite.stdout()).isEmpty();
    }

    @Test
    void rewriteModesTwinsAreSilentWithTheNativeOutput() throws Exception {
        CheckBuilds.Run native_ = CheckBuilds.run(dir, Map.of(), "./run_stack", "all", "good");
        CheckBuilds.Run good = CheckBuilds.runCheck(dir, List.of("--mode", "rewrite"), Map.of(), "./run_stack", "all", "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.status()).isZero();
        assertThat(good.stdout()).isEqualTo(native_.stdout()).startsWith("done ");
    }

    @Test
    void theTwinsAreSilentWithTheNativeOutput() throws Exception {
        CheckBuilds.Run native_ = CheckBuilds.run(dir, Map.of(), "./run_stack", "all", "good");
        CheckBuilds.Run good = CheckBuilds.runCheck(dir, List.of("--mode", "fault", "--stack-depth", "4"), Map.of(), "./run_stack", "all", "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.status()).isZero();
        assertThat(good.stdout()).isEqualTo(native_.stdout()).startsWith("done ");
    }

    /** Without DWARF (no -g) no frame layout is known: the overflows that do not crash natively run as natively. */
    @Test
    void withoutDwarfTheStackIsNotChecked() throws Exception {
        for (String c : List.of("memcpy", "callee")) {
            CheckBuilds.Run native_ = CheckBuilds.run(dir, Map.of(), "./run_stack_nodwarf", c, "bad");
            CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", "fault"), Map.of(), "./run_stack_nodwarf", c, "bad");
            assertThat(r.stderr()).as(c).isEmpty();
            assertThat(r.status()).isZero();
            assertThat(r.stdout()).isEqualTo(native_.stdout());
        }
    }

    /** The frames in the JSON record and as the SARIF result's stack, with their file:line where known. */
    @Test
    void framesGoIntoTheJsonAndSarifRecords() throws Exception {
        Path json = dir.resolve("stack.json"), sarif = dir.resolve("stack.sarif");
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", "fault", "--stack-depth", "3"),
                Map.of("MEMTRACE_CHECK_JSON", json.toString(), "MEMTRACE_CHECK_SARIF", sarif.toString()), "./run_stack", "callee", "bad");
        assertThat(r.status()).isEqualTo(1);
        List<JsonNode> records = CheckJson.records(Files.readString(json));
        assertThat(records).hasSize(1);
        JsonNode n = records.getFirst();
        assertThat(n.get("kind").asText()).isEqualTo("stack-overflow");
        assertThat(n.get("object").get("name").asText()).isEqualTo("<stack:rec@callee_fills>");
        assertThat(n.get("object").get("region").asText()).isEqualTo("stack");
        assertThat(n.get("by").asText()).isEqualTo("memset");
        JsonNode frames = n.get("frames");
        assertThat(frames).hasSize(3);
        String[][] want = {{"FILL", "fill"}, {"CALLEE", "callee_fills"}, {"MAIN_CALLEE", "main"}};
        for (int i = 0; i < 3; i++) {
            assertThat(frames.get(i).get("line").asText()).isEqualTo("run_stack.c:" + line(want[i][0]));
            assertThat(frames.get(i).get("function").asText()).isEqualTo(want[i][1]);
            assertThat(frames.get(i).get("code").asText()).matches(want[i][1] + "\\+\\d+");
        }
        assertThat(frames.get(0).get("code").asText()).isEqualTo(n.get("at").get("code").asText());

        JsonNode log = new ObjectMapper().readTree(Files.readString(sarif));
        JsonNode result = log.get("runs").get(0).get("results").get(0);
        assertThat(result.get("ruleId").asText()).isEqualTo("stack-overflow");
        JsonNode stack = result.get("stacks").get(0).get("frames");
        assertThat(stack).hasSize(3);
        for (int i = 0; i < 3; i++) {
            JsonNode loc = stack.get(i).get("location");
            assertThat(loc.get("physicalLocation").get("artifactLocation").get("uri").asText()).isEqualTo("run_stack.c");
            assertThat(loc.get("physicalLocation").get("artifactLocation").get("uriBaseId").asText()).isEqualTo("%SRCROOT%");
            assertThat(loc.get("physicalLocation").get("region").get("startLine").asInt()).isEqualTo(line(want[i][0]));
            assertThat(loc.get("logicalLocations").get(0).get("fullyQualifiedName").asText()).isEqualTo(frames.get(i).get("code").asText());
        }
    }
}
