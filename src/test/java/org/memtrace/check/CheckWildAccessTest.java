package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A load or store through a pointer to unmapped memory (wild.c), which no check foresees: the report must say
 * the operand's size and direction as every other report does ("written 8 bytes"), read off the faulting
 * instruction: by the check runtime's own reading of it in a --check build and in run --check's rewrite mode,
 * by the agent's Zydis in fault mode; run --check names the site by its line in both modes. One size of each form the compilers emit (byte, word, long and quad
 * stores, an SSE scalar double, a 16-byte vector store, a 2-byte load), then the program dies of SIGSEGV as
 * natively; a program with its own SIGSEGV handler gets the fault instead, and nothing is said.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckWildAccessTest {
    private static final Map<String, String> CASES = Map.of("char", "written 1 byte", "short", "written 2 bytes",
            "int", "written 4 bytes", "long", "written 8 bytes", "double", "written 8 bytes",
            "vector", "written 16 bytes", "read16", "read 2 bytes");
    private static final String HEAD = "memtrace: wild access: 0x500000000000 (SEGV on unknown address: unmapped memory) ";
    private Path dir, source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "wild.c");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "wild-O0", "wild.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "wild-O2", "wild.c");
        // in dir, by its relative name: the DWARF line table names wild.c as the reports show it
        Process gcc = new ProcessBuilder("gcc", "-O0", "-g", "-o", "wild-plain", "wild.c").directory(dir.toFile())
                .redirectErrorStream(true).start();
        String out = new String(gcc.getInputStream().readAllBytes());
        assertThat(gcc.waitFor()).as(out).isZero();
    }

    private static final Map<String, String> MARKS = Map.of("char", "PUT1", "short", "PUT2", "int", "PUT4", "long", "PUT8",
            "double", "PUTD", "vector", "PUTV", "read16", "GET2");

    /** The function of a case's access (wild.c's noinline helpers). */
    private static String function(String kind) {
        String mark = MARKS.get(kind);
        return mark.equals("GET2") ? "get2" : "put" + mark.substring(3).toLowerCase();
    }

    /** "wild.c:LINE (fn+N)", LINE the marker's. */
    private String line(String kind) throws Exception {
        return "wild\\.c:" + CheckBuilds.line(source, MARKS.get(kind)) + " \\(" + function(kind) + "(\\.constprop\\.0)?\\+\\d+\\)";
    }

    /** The report's first line, the program's output up to the fault and its death by SIGSEGV. */
    private static void dies(CheckBuilds.Run r, String kind, String site) {
        assertThat(r.stderr().lines().findFirst().orElse("")).as(kind + "\n" + r.stderr())
                .matches(Pattern.quote(HEAD + CASES.get(kind) + ", at ") + site + ", thread \\d+");
        assertThat(r.stdout()).as(kind).isEqualTo("before\n");
        assertThat(r.status()).as(kind).isEqualTo(128 + 11);
    }

    private static void handled(CheckBuilds.Run r) {
        assertThat(r.stderr()).isEmpty();
        assertThat(r.stdout()).isEqualTo("before\nhandled\n");
        assertThat(r.status()).isEqualTo(3);
    }

    /**
     * A --check build: the site is named by the call-site table, which has rows for calls only: a store a check's
     * call returns to has its line, any other its function alone (put4+36; gcc -O2 may clone it, .constprop.0).
     */
    @ParameterizedTest
    @ValueSource(strings = {"O0", "O2"})
    void aCheckedBuildSaysTheSizeOfEachAccess(String level) throws Exception {
        for (String kind : CASES.keySet())
            dies(CheckBuilds.run(dir, Map.of(), "./wild-" + level, kind), kind,
                    "(" + line(kind) + "|" + function(kind) + "(\\.constprop\\.0)?\\+\\d+)");
        handled(CheckBuilds.run(dir, Map.of(), "./wild-" + level, "handled"));
        Path json = dir.resolve("wild-" + level + ".json");
        CheckBuilds.Run r = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK_JSON", json.toString()), "./wild-" + level, "read16");
        assertThat(r.status()).isEqualTo(128 + 11);
        List<JsonNode> records = CheckJson.records(Files.readString(json));
        assertThat(records).hasSize(1);
        CheckJson.validate(records.getFirst());
        assertThat(records.getFirst().get("kind").asText()).isEqualTo("wild-access");
        assertThat(records.getFirst().get("access").asText()).isEqualTo("read");
        assertThat(records.getFirst().get("size").asInt()).isEqualTo(2);
    }

    /**
     * Both modes of run --check name the site by its line and function, and the frames below it as other reports
     * give them: rewrite mode the instruction a trampoline moved by the address its check's words give.
     */
    @ParameterizedTest
    @ValueSource(strings = {"rewrite", "fault"})
    void runCheckSaysTheSizeOfEachAccess(String mode) throws Exception {
        for (String kind : CASES.keySet()) {
            String fn = function(kind), line = line(kind);
            CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", mode), Map.of(), "./wild-plain", kind);
            dies(r, kind, line);
            List<String> lines = r.stderr().lines().toList();
            assertThat(lines).as(r.stderr()).hasSize(4);
            assertThat(lines.get(1)).isEqualTo("    #0 " + lines.getFirst().replaceAll(".*, at (\\S+ \\(\\S+\\)), thread.*", "$1") + " in " + fn);
            assertThat(lines.get(2)).matches("    #1 wild\\.c:\\d+ \\(main\\+\\d+\\) in main");
            assertThat(lines.get(3)).startsWith("memtrace: the program was killed by SIGSEGV");
        }
        handled(CheckBuilds.runCheck(dir, List.of("--mode", mode), Map.of(), "./wild-plain", "handled"));
    }
}
