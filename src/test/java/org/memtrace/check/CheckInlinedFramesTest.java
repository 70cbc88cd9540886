package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Inlined frames in check reports (docs/check.md, "Inlined frames"): inline_check.c and inline_check.cc built
 * -O2 -g, where gcc inlines the static helpers that allocate, overflow and free into main, checked by
 * {@code memtrace run --check} (plain gcc builds) and built by {@code memtrace cc --check}. Each report's frames
 * are asserted line by line (file:line from the fixture's markers, function, "(inlined)") and each frame's
 * function and line against {@code addr2line -i -f -C} at the frame's address; the JSON record and the SARIF
 * result carry the same frames.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckInlinedFramesTest {
    Path dir, c, cxx;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        c = CheckBuilds.fixture(dir, "inline_check.c");
        cxx = CheckBuilds.fixture(dir, "inline_check.cc");
        exec("gcc", "-O2", "-g", "-o", "plain_c", "inline_check.c");
        exec("g++", "-O2", "-g", "-o", "plain_cxx", "inline_check.cc");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "cc_c", "inline_check.c");
        CheckBuilds.build(dir, true, true, "-O2", "-g", "-o", "cc_cxx", "inline_check.cc");
    }

    private String exec(String... args) throws Exception {
        Process p = new ProcessBuilder(args).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
        return out;
    }

    /** The program of a mode ("run": plain gcc under run --check, "cc": built --check) run with its arguments. */
    private CheckBuilds.Run run(String mode, boolean cplus, Map<String, String> env, List<String> options, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("./" + (mode.equals("run") ? "plain_" : "cc_") + (cplus ? "cxx" : "c")));
        command.addAll(List.of(args));
        List<String> fault = new ArrayList<>(List.of("--mode", "fault")); // the frames of fault mode's reports
        fault.addAll(options);
        return mode.equals("run") ? CheckBuilds.runCheck(dir, fault, env, command.toArray(String[]::new))
                : CheckBuilds.run(dir, env, command.toArray(String[]::new));
    }

    /** One frame line: "    #K FILE:LINE (CODE) in FUNCTION[ (inlined)]". */
    record Frame(String line, String code, String function, boolean inlined) {}

    /** The report's frames by section: "access" (under the line), "allocated", "freed". */
    private static Map<String, List<Frame>> frames(List<String> lines) {
        Map<String, List<Frame>> out = new LinkedHashMap<>();
        String section = "access";
        for (String l : lines.subList(1, lines.size())) {
            if (l.equals("  allocated at:") || l.equals("  freed at:")) {
                section = l.trim().replace(" at:", "");
                continue;
            }
            assertThat(l).matches("    #\\d+ \\S+:\\d+ \\(\\S+\\) in .+");
            String rest = l.replaceFirst("    #\\d+ ", "");
            boolean inlined = rest.endsWith(" (inlined)");
            if (inlined) rest = rest.substring(0, rest.length() - " (inlined)".length());
            String line = rest.substring(0, rest.indexOf(' '));
            String code = rest.substring(rest.indexOf('(') + 1, rest.indexOf(')'));
            String function = rest.substring(rest.indexOf(") in ") + 5);
            int k = Integer.parseInt(l.replaceAll("    #(\\d+) .*", "$1"));
            List<Frame> list = out.computeIfAbsent(section, s -> new ArrayList<>());
            assertThat(k).isEqualTo(list.size());
            list.add(new Frame(line, code, function, inlined));
        }
        return out;
    }

    /** The link-time address of a frame's code, function+offset in both modes (run --check's by the .symtab). */
    private long address(String program, String code) throws Exception {
        String name = code.substring(0, code.lastIndexOf('+'));
        long offset = Long.parseLong(code.substring(code.lastIndexOf('+') + 1));
        for (String l : exec("nm", program).lines().toList())
            if (l.endsWith(" T " + name)) return Long.parseLong(l.substring(0, l.indexOf(' ')), 16) + offset;
        throw new AssertionError("no symbol " + name + " in " + program);
    }

    /** addr2line -i -f -C's chain at an address: function and basename:line pairs, innermost first. */
    private List<String[]> addr2line(String program, long address) throws Exception {
        List<String> out = exec("addr2line", "-i", "-f", "-C", "-e", program, "0x" + Long.toHexString(address)).lines().toList();
        List<String[]> chain = new ArrayList<>();
        for (int i = 0; i + 1 < out.size(); i += 2) {
            String where = out.get(i + 1).replaceAll(" \\(discriminator \\d+\\)", "");
            chain.add(new String[] {out.get(i), where.substring(where.lastIndexOf('/') + 1)});
        }
        return chain;
    }

    /** Each frame of a list is addr2line's at its address (an instruction, or a return address's call). */
    private void agreesWithAddr2line(String program, List<Frame> frames, boolean returnAddress) throws Exception {
        long at = address(program, frames.getFirst().code()) - (returnAddress ? 1 : 0);
        List<String[]> chain = addr2line(program, at);
        assertThat(frames).as("frames at 0x%x", at).hasSize(chain.size());
        for (int i = 0; i < frames.size(); i++) {
            assertThat(frames.get(i).code()).isEqualTo(frames.getFirst().code());
            assertThat(frames.get(i).function()).as("frame %d", i).isEqualTo(chain.get(i)[0]);
            assertThat(frames.get(i).line()).as("frame %d", i).isEqualTo(chain.get(i)[1]);
            assertThat(frames.get(i).inlined()).as("frame %d", i).isEqualTo(i < frames.size() - 1);
        }
    }

    private String at(Path source, String key) throws Exception {
        return source.getFileName() + ":" + CheckBuilds.line(source, key);
    }

    private static List<String> lines(List<Frame> frames) {
        return frames.stream().map(f -> f.line() + " in " + f.function() + (f.inlined() ? " (inlined)" : "")).toList();
    }

    @ParameterizedTest
    @ValueSource(strings = {"run", "cc"})
    void anOverflowInInlinedCodeShowsEveryInlinedFunction(String mode) throws Exception {
        CheckBuilds.Run r = run(mode, false, Map.of(), List.of(), "overflow");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines.getFirst()).startsWith("memtrace: heap overflow: <malloc0001@")
                .contains("+16 (a block of 16 bytes, allocated at ").contains(") written 1 byte, 0 bytes past its end, at ");
        Map<String, List<Frame>> f = frames(lines);
        assertThat(f.keySet()).containsExactly("access", "allocated");
        assertThat(lines(f.get("access"))).containsExactly(at(c, "SET") + " in set (inlined)",
                at(c, "PUT_LAST") + " in put_last (inlined)", at(c, "MAIN_PUT") + " in main");
        assertThat(lines(f.get("allocated"))).containsExactly(at(c, "MAKE") + " in make (inlined)", at(c, "MAIN_MAKE") + " in main");
        String program = mode.equals("run") ? "plain_c" : "cc_c";
        // a fault's frame is its instruction; a check call's, an allocation's and a free's a return address
        agreesWithAddr2line(program, f.get("access"), mode.equals("cc"));
        agreesWithAddr2line(program, f.get("allocated"), true);
        assertThat(lines.getFirst()).contains(", at " + at(c, "SET") + " (" + f.get("access").getFirst().code() + "), thread ");
        assertThat(lines.getFirst()).startsWith("memtrace: heap overflow: <malloc0001@" + f.get("allocated").getFirst().code() + ">+16 "
                + "(a block of 16 bytes, allocated at " + at(c, "MAKE") + ") ");
        CheckBuilds.Run good = run(mode, false, Map.of(), List.of(), "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.status()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"run", "cc"})
    void aUseAfterFreeShowsTheInlinedAllocatingAndFreeingCalls(String mode) throws Exception {
        CheckBuilds.Run r = run(mode, false, Map.of(), List.of(), "uaf");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines.getFirst()).startsWith("memtrace: use after free: <freed:0001@");
        Map<String, List<Frame>> f = frames(lines);
        // the read itself is main's own code: no frames of its own without return addresses above it
        assertThat(f.keySet()).containsExactly("allocated", "freed");
        assertThat(lines(f.get("allocated"))).containsExactly(at(c, "MAKE") + " in make (inlined)", at(c, "MAIN_MAKE") + " in main");
        assertThat(lines(f.get("freed"))).containsExactly(at(c, "DROP") + " in drop (inlined)", at(c, "MAIN_DROP") + " in main");
        String program = mode.equals("run") ? "plain_c" : "cc_c";
        agreesWithAddr2line(program, f.get("allocated"), true);
        agreesWithAddr2line(program, f.get("freed"), true);
    }

    @ParameterizedTest
    @ValueSource(strings = {"run", "cc"})
    void cxxInlinedFunctionsAreDemangled(String mode) throws Exception {
        CheckBuilds.Run r = run(mode, true, Map.of(), List.of(), "overflow");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines.getFirst()).startsWith("memtrace: heap overflow: <new[]0001@");
        Map<String, List<Frame>> f = frames(lines);
        assertThat(lines(f.get("access"))).containsExactly(at(cxx, "CXX_PUT") + " in store::put(store::Buf&, int, char) (inlined)",
                at(cxx, "CXX_PUT_LAST") + " in store::put_last(store::Buf&) (inlined)", at(cxx, "CXX_MAIN") + " in main");
        agreesWithAddr2line(mode.equals("run") ? "plain_cxx" : "cc_cxx", f.get("access"), mode.equals("cc"));
        // MEMTRACE_CHECK=mangled keeps the linkage names
        CheckBuilds.Run raw = run(mode, true, Map.of("MEMTRACE_CHECK", "mangled"), List.of(), "overflow");
        assertThat(lines(frames(raw.stderr().lines().toList()).get("access")).getFirst()).endsWith(" in _ZN5store3putERNS_3BufEic (inlined)");
    }

    /** The JSON record's frames and the SARIF result's stacks are the text's, inlined ones marked. */
    @ParameterizedTest
    @ValueSource(strings = {"run", "cc"})
    void jsonAndSarifCarryTheSameFrames(String mode) throws Exception {
        Path json = dir.resolve(mode + "-inl.json"), sarif = dir.resolve(mode + "-inl.sarif");
        CheckBuilds.Run r = run(mode, false, Map.of("MEMTRACE_CHECK_JSON", json.toString(), "MEMTRACE_CHECK_SARIF", sarif.toString()),
                List.of(), "overflow");
        assertThat(r.status()).isEqualTo(1);
        Map<String, List<Frame>> text = frames(r.stderr().lines().toList());
        List<JsonNode> records = CheckJson.records(Files.readString(json));
        assertThat(records).hasSize(1);
        JsonNode n = records.getFirst();
        assertJsonFrames(n.get("frames"), text.get("access"));
        assertJsonFrames(n.get("object").get("allocated").get("frames"), text.get("allocated"));
        // the site's own line: the call-site table's (cc --check), the DWARF line table's (run --check)
        assertThat(n.get("object").get("allocated").get("line").asText()).isEqualTo(text.get("allocated").getFirst().line());

        JsonNode result = new ObjectMapper().readTree(Files.readString(sarif)).get("runs").get(0).get("results").get(0);
        JsonNode stacks = result.get("stacks");
        assertThat(stacks).hasSize(2);
        assertThat(stacks.get(0).has("message")).isFalse();
        assertSarifFrames(stacks.get(0).get("frames"), text.get("access"));
        assertThat(stacks.get(1).get("message").get("text").asText()).isEqualTo("allocated");
        assertSarifFrames(stacks.get(1).get("frames"), text.get("allocated"));
    }

    private static void assertJsonFrames(JsonNode frames, List<Frame> want) {
        assertThat(frames).hasSize(want.size());
        for (int i = 0; i < want.size(); i++) {
            JsonNode f = frames.get(i);
            assertThat(f.get("code").asText()).isEqualTo(want.get(i).code());
            assertThat(f.get("line").asText()).isEqualTo(want.get(i).line());
            assertThat(f.get("function").asText()).isEqualTo(want.get(i).function());
            assertThat(f.path("inlined").asBoolean(false)).isEqualTo(want.get(i).inlined());
        }
    }

    private static void assertSarifFrames(JsonNode frames, List<Frame> want) {
        assertThat(frames).hasSize(want.size());
        for (int i = 0; i < want.size(); i++) {
            JsonNode loc = frames.get(i).get("location");
            String line = want.get(i).line();
            assertThat(loc.get("physicalLocation").get("artifactLocation").get("uri").asText()).isEqualTo(line.substring(0, line.indexOf(':')));
            assertThat(loc.get("physicalLocation").get("region").get("startLine").asInt()).isEqualTo(Integer.parseInt(line.substring(line.indexOf(':') + 1)));
            assertThat(loc.get("logicalLocations").get(0).get("fullyQualifiedName").asText()).isEqualTo(want.get(i).code());
            assertThat(loc.get("logicalLocations").get(1).get("name").asText()).isEqualTo(want.get(i).function());
            assertThat(loc.get("logicalLocations").get(1).get("kind").asText()).isEqualTo("function");
            assertThat(frames.get(i).path("properties").path("inlined").asBoolean(false)).isEqualTo(want.get(i).inlined());
        }
    }

    /** --stack-depth 1 (run --check) and MEMTRACE_STACK_DEPTH=1 (a --check build): the report's line alone. */
    @ParameterizedTest
    @ValueSource(strings = {"run", "cc"})
    void depthOneIsTheLineAlone(String mode) throws Exception {
        CheckBuilds.Run r = mode.equals("run") ? run(mode, false, Map.of(), List.of("--stack-depth", "1"), "overflow")
                : run(mode, false, Map.of("MEMTRACE_STACK_DEPTH", "1"), List.of(), "overflow");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.stderr().lines().toList()).hasSize(1).first().asString().startsWith("memtrace: heap overflow: ");
    }
}
