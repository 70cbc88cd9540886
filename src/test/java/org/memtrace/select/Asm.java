package org.memtrace.select;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Assembles Intel-syntax source with binutils' {@code as} and analyzes the object's .text. */
final class Asm {
    private Asm() {
    }

    static Path assemble(Path dir, String source) throws IOException, InterruptedException {
        Path s = Files.createTempFile(dir, "block", ".s");
        Path o = dir.resolve(s.getFileName().toString().replace(".s", ".o"));
        Files.writeString(s, ".intel_syntax noprefix\n.text\n" + source + "\n");
        run(dir, "as", "--64", "-o", o.toString(), s.toString());
        return o;
    }

    static List<FunctionModel> analyze(Path dir, String source, AnalysisOptions options) throws Exception {
        ElfText elf = ElfText.read(assemble(dir, source));
        return new BinaryAnalyzer(options).analyze(elf, elf.functions());
    }

    static List<BlockModel> blocks(Path dir, String source, AnalysisOptions options) throws Exception {
        return analyze(dir, source, options).stream().flatMap(f -> f.blocks().stream()).toList();
    }

    static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("%s failed:%n%s", String.join(" ", command), out).isZero();
        return out;
    }
}
