package org.memtrace.instrument;

import org.memtrace.format.SiteFormat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * AsStep behind gcc's -wrapper, with a minimal wrapper script in the role of the one memtrace ships: compiler
 * output is instrumented, a hand-written .s is assembled unchanged with a note.
 */
class AsStepTest {
    @TempDir
    Path dir;

    @Test
    void gccWrapperBuildIsInstrumentedAndHandWrittenAssemblyIsNot() throws Exception {
        Path state = Files.createDirectories(dir.resolve("state"));
        Path wrapper = dir.resolve("wrap.sh");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Files.writeString(wrapper, """
                #!/bin/sh
                prog="$1"; shift
                case "$(basename "$prog")" in
                  cc1) prev=""; for a in "$@"; do [ "$prev" = "-o" ] && echo "$a" >> "$MEMTRACE_CC_STATE/cc1-outputs"; prev="$a"; done
                       exec "$prog" "$@" ;;
                  as) exec %s --enable-native-access=ALL-UNNAMED -cp '%s' org.memtrace.instrument.AsStep "$prog" "$@" ;;
                  *) exec "$prog" "$@" ;;
                esac
                """.formatted(java, System.getProperty("java.class.path")));
        Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path hand = dir.resolve("answer.s");
        Files.writeString(hand, "\t.text\n\t.globl answer\n\t.type answer, @function\nanswer:\n\tmovl $42, %eax\n\tret\n"
                + "\t.size answer, .-answer\n\t.section .note.GNU-stack,\"\",@progbits\n");
        Path main = dir.resolve("main.c");
        Files.writeString(main, "#include <stdio.h>\nint answer(void);\nint g[4];\n"
                + "int main(void) { g[1] = answer(); printf(\"%d\\n\", g[1]); return 0; }\n");
        Path exe = dir.resolve("prog");
        var command = new ArrayList<>(List.of("gcc", "-wrapper", wrapper.toString(), "-O2", "-no-pie", "-o", exe.toString(),
                main.toString(), hand.toString(), Instrumented.stub(dir).toString()));
        var pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("MEMTRACE_CC_STATE", state.toString());
        pb.environment().put("MEMTRACE_CC_OPTIONS", "--omega 1 --mode ma");
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(output).isZero();
        assertThat(output).contains("memtrace cc: note: " + hand + " is not compiler output, assembled uninstrumented");

        Instrumented.Run run = Instrumented.run(exe, Map.of());
        assertThat(run.stdout()).isEqualTo("42\n");
        long g = Instrumented.symbol(exe, "g");
        long[] answer = Instrumented.functions(exe).get("answer");
        assertThat(run.records()).anySatisfy(r -> {
            assertThat(r.w0()).isEqualTo(g + 4);
            assertThat(r.kind()).isEqualTo(SiteFormat.STORE);
            assertThat(r.flags() & 0x0c).as("mode bits of ma").isEqualTo(0x04);
        });
        assertThat(run.records()).as("the hand-written function has no probe")
                .noneMatch(r -> r.insn() >= answer[0] && r.insn() < answer[1]);
    }

    @Test
    void inputIsTheOneOperandOfTheAssembler() {
        assertThat(AsStep.inputIndex(List.of("--64", "-o", "x.o", "/tmp/cc1.s"))).isEqualTo(3);
        assertThat(AsStep.inputIndex(List.of("-I", "inc", "a.s", "--64"))).isEqualTo(2);
        assertThat(AsStep.inputIndex(List.of("--64", "-o", "x.o"))).isEqualTo(-1);
        assertThat(AsStep.inputIndex(List.of("--64", "-o", "x.o", "-"))).isEqualTo(-1);
        assertThat(AsStep.inputIndex(List.of("a.s", "b.s"))).isEqualTo(-1);
    }
}
