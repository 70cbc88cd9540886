package org.memtrace.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class AnalyzeCommandTest {
    @TempDir
    Path dir;

    record Result(int exit, String out, String err) {
    }

    private static Result analyze(String... args) {
        var out = new StringWriter();
        var err = new StringWriter();
        String[] all = new String[args.length + 1];
        all[0] = "analyze";
        System.arraycopy(args, 0, all, 1, args.length);
        int exit = Main.execute(new PrintWriter(out), new PrintWriter(err), all);
        return new Result(exit, out.toString(), err.toString());
    }

    private Path object() throws Exception {
        Path s = dir.resolve("f.s");
        Files.writeString(s, """
                .intel_syntax noprefix
                .text
                .globl f
                .type f, @function
                f:
                mov eax, [rdi+8]
                mov ecx, [rdi+16]
                add [rdi+8], ecx
                mov edx, [rsi+rdx*4]
                mov r8d, [rdi+8192]
                ret
                .size f, .-f
                """);
        Path o = dir.resolve("f.o");
        run("as", "--64", "-o", o.toString(), s.toString());
        return o;
    }

    private void run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(output).isZero();
    }

    @Test
    void summaryAndFunctionTable() throws Exception {
        Result r = analyze(object().toString());
        assertThat(r.exit()).isZero();
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).contains("relocatable object")
                .contains("functions 1, blocks 1, instructions 6, memory-referencing 5, classes 4, selected 1")
                .containsPattern("(?m)^f\\s+1\\s+6\\s+5\\s+4\\s+1");
    }

    @Test
    void functionDetailShowsExpressionsClassesAndSelection() throws Exception {
        Result r = analyze("--function", "f", "--omega", "0.5", object().toString());
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains("function f at 0x0")
                .contains("n=5, m=4, W=2")
                .contains("RRI{rdi#0, nil, 0x8}")
                .contains("class 1: |[e]|=2")
                .contains("class 2: |[e]|=1 value ⟨1, 2.33⟩  not selected, counted under AIA by class 1")
                .contains("selected: stands for 2 under MA, 3 under AIA");
    }

    @Test
    void omegaSweepPrintsTheAccuracyCurve() throws Exception {
        Result r = analyze("--omega", "0.1,0.25,0.5,1", object().toString());
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains(" omega  selected      MA     AIA")
                .containsPattern("(?m)^\\s+1\\.00\\s+4\\s+1\\.0000\\s+1\\.0000");
    }

    @Test
    void jsonListsEverySelectedInstructionWithItsWeights() throws Exception {
        Result r = analyze("--json", "--omega", "0.5,1", object().toString());
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode root = new ObjectMapper().readTree(r.out());
        assertThat(root.get("schema").asInt()).isEqualTo(1);
        assertThat(root.get("chunk").asLong()).isEqualTo(4096);
        assertThat(root.get("runs")).hasSize(2);
        JsonNode half = root.get("runs").get(0);
        assertThat(half.get("summary").get("selected").asInt()).isEqualTo(2);
        List<Integer> ma = new ArrayList<>(), aia = new ArrayList<>();
        half.get("selected").forEach(s -> {
            ma.add(s.get("ma").asInt());
            aia.add(s.get("aia").asInt());
            assertThat(s.get("function").asText()).isEqualTo("f");
            assertThat(s.get("class")).hasSize(s.get("ma").asInt());
            assertThat(s.get("class").size() + s.get("associated").size()).isEqualTo(s.get("aia").asInt());
        });
        assertThat(ma).containsExactly(2, 1);
        assertThat(aia).containsExactly(3, 1);
        assertThat(root.get("runs").get(1).get("summary").get("minimalAccuracy").asDouble()).isEqualTo(1.0);
    }

    @Test
    void badInputGivesOneLineWithoutAStackTrace() throws Exception {
        Path text = Files.writeString(dir.resolve("notes.txt"), "hello, not an ELF file\n");
        Path corrupt = dir.resolve("corrupt.o");
        byte[] good = Files.readAllBytes(object());
        byte[] broken = java.util.Arrays.copyOf(good, 80); // header intact, section headers cut off
        Files.write(corrupt, broken);
        Path noText = dir.resolve("notext.o");
        run("objcopy", "-R", ".text", object().toString(), noText.toString());
        String o = object().toString();

        List<Result> failures = List.of(
                analyze(dir.resolve("missing").toString()),
                analyze(text.toString()),
                analyze(corrupt.toString()),
                analyze(noText.toString()),
                analyze("--omega", "0.1,x", o),
                analyze("--omega", "1.5", o),
                analyze("--scores", "1,2,3", o),
                analyze("--chunk", "0", o),
                analyze("--function", "nope", o),
                analyze("--frobnicate", o),
                analyze());
        for (Result r : failures) {
            assertThat(r.exit()).isNotZero();
            assertThat(r.out()).isEmpty();
            assertThat(r.err()).startsWith("memtrace: ").doesNotContain("Exception").doesNotContain("\tat ");
            assertThat(r.err().strip().lines()).hasSize(1);
        }
        assertThat(failures.get(0).err()).contains("no such file");
        assertThat(failures.get(1).err()).contains("not an ELF file");
        assertThat(failures.get(2).err()).contains("corrupt");
        assertThat(failures.get(3).err()).contains("no .text");
        assertThat(failures.get(4).err()).contains("--omega");
        assertThat(failures.get(9).err()).contains("--frobnicate");
    }

    @ParameterizedTest
    @CsvSource({"'0.1, 0.5', 2", "1, 1", "'0,0.25,0.5,0.75,1', 5"})
    void omegaListsParse(String text, int count) {
        assertThat(AnalyzeCommand.parseOmegas(text)).hasSize(count).allSatisfy(w -> assertThat(w).isBetween(0.0, 1.0));
    }
}
