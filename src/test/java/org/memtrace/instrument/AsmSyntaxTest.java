package org.memtrace.instrument;

import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class AsmSyntaxTest {

    @Test
    void statementsSplitAtSemicolonsAndLabelsButNotInsideStringsOrComments() {
        assertThat(AsmSyntax.statements("\tlock; addl $1, x(%rip)  # count")).containsExactly("lock", "addl $1, x(%rip)");
        assertThat(AsmSyntax.statements("foo: movl (%rax), %eax")).containsExactly("foo:", "movl (%rax), %eax");
        assertThat(AsmSyntax.statements("\t.string \"a;b#c\"")).containsExactly(".string \"a;b#c\"");
        assertThat(AsmSyntax.statements("1: 2:")).containsExactly("1:", "2:");
        assertThat(AsmSyntax.statements("\tmovl %fs:8, %eax")).containsExactly("movl %fs:8, %eax");
        assertThat(AsmSyntax.statements("   # only a comment")).isEmpty();
    }

    @Test
    void instructionsComeApartIntoPrefixesMnemonicAndOperands() {
        var i = AsmSyntax.Instruction.parse("rep stosq");
        assertThat(i.prefixes()).containsExactly("rep");
        assertThat(i.mnemonic()).isEqualTo("stosq");
        assertThat(i.operands()).isEmpty();
        var m = AsmSyntax.Instruction.parse("movl 8(%rax,%rbx,4), %ecx");
        assertThat(m.operands()).containsExactly("8(%rax,%rbx,4)", "%ecx");
        assertThat(m.memoryOperands()).containsExactly("8(%rax,%rbx,4)");
        assertThat(AsmSyntax.Instruction.parse("call *8(%rax)").memoryOperands()).containsExactly("8(%rax)");
        assertThat(AsmSyntax.Instruction.parse("movl $table, %eax").memoryOperands()).isEmpty();
        assertThat(AsmSyntax.Instruction.parse("movl %fs:x@tpoff, %eax").memoryOperands()).containsExactly("%fs:x@tpoff");
        assertThat(AsmSyntax.Instruction.parse("fadd %st(1), %st").memoryOperands()).isEmpty();
        assertThat(AsmSyntax.Instruction.parse("movl counter, %eax").memoryOperands()).containsExactly("counter");
        assertThat(AsmSyntax.Instruction.parse("vmovdqu32 %zmm0, 64(%rdi){%k1}").memoryOperands()).containsExactly("64(%rdi)");
    }

    @Test
    void rspBasedOperandsAreMovedByTheProbesFrame() throws Exception {
        var d = new FunctionPlanner.Decoded(0, AsmSyntax.Instruction.parse("movq 8(%rsp), %rax"), null);
        assertThat(FunctionPlanner.explicitSite("8(%rsp)", d).address()).isEqualTo("152+8(%rsp)");
        assertThat(FunctionPlanner.explicitSite("(%rsp,%rax,8)", d).address()).isEqualTo("152(%rsp,%rax,8)");
        assertThat(FunctionPlanner.explicitSite("-8(%rbp)", d).address()).isEqualTo("-8(%rbp)");
        Site fs = FunctionPlanner.explicitSite("%fs:x@tpoff", d);
        assertThat(fs.address()).isEqualTo("x@tpoff");
        assertThat(fs.fs()).isTrue();
        assertThat(FunctionPlanner.explicitSite("x@gottpoff(%rip)", d)).as("a GOT slot, not program data").isNull();
    }

    @Test
    void walkerNumbersOnlyCodeOutsideInlineAssemblyAndKnowsFunctionsAndCfi() throws Exception {
        String s = """
                \t.text
                \t.type f, @function
                f:
                \t.cfi_startproc
                \tmovl (%rdi), %eax
                \tpushq %rbp
                \t.cfi_def_cfa_offset 16
                \tmovq %rsp, %rbp
                \t.cfi_def_cfa_register 6
                \t.section .rodata
                \tmovl (%rdi), %eax
                \t.text
                #APP
                \tmovl (%rsi), %eax
                #NO_APP
                \tlock; incl (%rdi)
                \tret
                \t.cfi_endproc
                \t.size f, .-f
                \t.section .text.unlikely
                \tnop
                """;
        var seen = new ArrayList<String>();
        var walker = new AsmWalker(new AsmWalker.Listener() {
            @Override public void rawLine(String line) { }
            @Override public void statement(String text) { }
            @Override public void instruction(int index, int function, AsmSyntax.Instruction instruction, boolean cfaOnRsp) {
                seen.add(index + " " + function + " " + instruction.text() + " " + cfaOnRsp);
            }
        });
        walker.walk(new BufferedReader(new StringReader(s)));
        assertThat(seen).containsExactly(
                "0 0 movl (%rdi), %eax true",
                "1 0 pushq %rbp true",
                "2 0 movq %rsp, %rbp true",
                "3 0 lock incl (%rdi) false",
                "4 0 ret false",
                "5 1 nop false");
        assertThat(walker.functions()).isEqualTo(List.of("f", "<.text.unlikely>"));
    }
}
