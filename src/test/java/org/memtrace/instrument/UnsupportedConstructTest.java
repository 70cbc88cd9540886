package org.memtrace.instrument;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** What the probe cannot reproduce leaves its function (or its rep instruction) alone, with a warning. */
class UnsupportedConstructTest {
    @TempDir
    Path dir;

    @Test
    void gsOperandLeavesItsWholeFunctionAndConditionalRepOnlyItself() throws Exception {
        Path s = dir.resolve("odd.s");
        Files.writeString(s, """
                \t.text
                \t.globl usesgs
                \t.type usesgs, @function
                usesgs:
                \tmovl (%rdi), %eax
                \taddl %gs:8, %eax
                \tret
                \t.size usesgs, .-usesgs
                \t.globl compare
                \t.type compare, @function
                compare:
                \tmovl (%rdx), %eax
                \trepz cmpsb
                \tret
                \t.size compare, .-compare
                \t.globl gather
                \t.type gather, @function
                gather:
                \tvpgatherdd %xmm2, (%rax,%xmm1,4), %xmm0
                \tret
                \t.size gather, .-gather
                \t.section .note.GNU-stack,"",@progbits
                """);
        Path out = dir.resolve("odd.mt.s");
        Rewriter.Result r = Instrumented.rewrite(s, out, CcOptions.DEFAULTS);
        assertThat(r.warnings()).hasSize(3);
        assertThat(r.warnings().get(0)).startsWith("function usesgs left uninstrumented: 'addl %gs:8, %eax' (%gs segment)");
        assertThat(r.warnings().get(1)).isEqualTo("function compare: conditional rep string instruction 'repz cmpsb' left uninstrumented");
        assertThat(r.warnings().get(2)).startsWith("function gather left uninstrumented: 'vpgatherdd");
        // compare: its load and its ret; nothing of usesgs nor gather.
        assertThat(r.instrumented()).isEqualTo(2);
        assertThat(r.sites()).isEqualTo(2);
        String text = Files.readString(out);
        assertThat(text.substring(text.indexOf("usesgs:"), text.indexOf("compare:"))).doesNotContain(".Lmt_s");
        Gcc.run(List.of("as", "--64", "-o", dir.resolve("odd.o").toString(), out.toString()));
    }

    @Test
    void intelSyntaxIsCopiedUnchanged() throws Exception {
        Path s = dir.resolve("intel.s");
        Files.writeString(s, "\t.intel_syntax noprefix\n\t.text\nf:\n\tmov eax, DWORD PTR [rdi]\n\tret\n");
        Path out = dir.resolve("intel.mt.s");
        Rewriter.Result r = Instrumented.rewrite(s, out, CcOptions.DEFAULTS);
        assertThat(r.warnings()).containsExactly("Intel syntax is not supported; assembled uninstrumented");
        assertThat(Files.readString(out)).isEqualTo(Files.readString(s));
    }

    /**
     * Issue 26: an inline {@code rep stosb} was missing from the trace and nothing said so, though the
     * README says inline assembly is reported. Each function whose inline assembly may access memory is
     * named once, with its instructions; inline assembly that touches no memory is not reported.
     */
    @Test
    void inlineAssemblyThatMayAccessMemoryIsReportedOncePerFunction() throws Exception {
        Path s = dir.resolve("inline.s");
        Files.writeString(s, """
                \t.text
                \t.globl fill
                \t.type fill, @function
                fill:
                \tmovq (%rdi), %rax
                #APP
                # 5 "inline.c" 1
                \trep stosb
                # 0 "" 2
                #NO_APP
                #APP
                \tmovl 8(%rsi), %ecx; addl %ecx, %eax
                \tpushq %rax
                \tpopq %rax
                #NO_APP
                \tret
                \t.size fill, .-fill
                \t.globl quiet
                \t.type quiet, @function
                quiet:
                #APP
                \tpause
                \trdtsc
                #NO_APP
                \tret
                \t.size quiet, .-quiet
                \t.section .note.GNU-stack,"",@progbits
                """);
        Path out = dir.resolve("inline.mt.s");
        Rewriter.Result r = Instrumented.rewrite(s, out, CcOptions.DEFAULTS);
        assertThat(r.warnings()).containsExactly("function fill: inline assembly is not traced: 4 instructions that may access "
                + "memory (rep stosb; movl 8(%rsi), %ecx; pushq %rax; ...)");
        String text = Files.readString(out);
        assertThat(text).contains("\trep stosb\n#");
        Gcc.run(List.of("as", "--64", "-o", dir.resolve("inline.o").toString(), out.toString()));
    }
}
