package org.memtrace.instrument;

import org.memtrace.format.SiteFormat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.memtrace.x86.Decoder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.memtrace.x86.Register.named;

/** Instructions share a probe exactly when their addresses are computable at its start, and keep their records. */
class ProbeGroupsTest {
    @TempDir
    Path dir;

    @Test
    void independentAccessesShareOneProbeAndDependentOnesDoNot() throws Exception {
        List<String> flags = List.of("-O1", "-no-pie");
        Path exe = Instrumented.program(dir, "rw_groups.c", "groups", CcOptions.parse(List.of("--no-stack")), flags);
        String text = Files.readString(dir.resolve("groups.mt.s"));
        assertThat(probes(text, "copy4")).as("copy4: one group").isEqualTo(1);
        assertThat(probes(text, "chase")).as("chase: the second load reads what the first wrote").isEqualTo(2);
        assertThat(text).as("an executable's group probe reads the cursor at its link-time offset")
                .contains("movq %fs:__memtrace_cursor@tpoff, ").contains(".weak __memtrace_cursor");

        assertThat(probes(text, "pair")).as("pair: one group").isEqualTo(1);
        assertThat(body(text, "pair")).as("pair: %rdx and %rax are dead at its probe: nothing saved, %rsp never moved")
                .doesNotContain("(%rsp)").doesNotContain("pushq").contains("movq %fs:__memtrace_cursor@tpoff, %rdx");
        assertThat(body(text, "sum2")).as("sum2: only %rax is dead, the cursor's register is saved")
                .contains("leaq -144(%rsp), %rsp").containsOnlyOnce("pushq").contains("leaq 8(%rdi), %rax");

        Instrumented.Run run = Instrumented.run(exe, Map.of());
        assertThat(run.status()).as("pair and sum2 compute what they did before").isEqualTo(42);
        long a = Instrumented.symbol(exe, "a");
        long b = Instrumented.symbol(exe, "b");
        List<Instrumented.Record> copy = Instrumented.in(run.records(), Instrumented.functions(exe).get("copy4"));
        assertThat(copy.stream().map(r -> r.kind() + "@" + Long.toHexString(r.w0())).toList()).containsExactly(
                "1@" + Long.toHexString(b), "2@" + Long.toHexString(a),
                "1@" + Long.toHexString(b + 8), "2@" + Long.toHexString(a + 8),
                "1@" + Long.toHexString(b + 16), "2@" + Long.toHexString(a + 16),
                "1@" + Long.toHexString(b + 24), "2@" + Long.toHexString(a + 24));
        long two = Instrumented.symbol(exe, "two");
        assertThat(Instrumented.in(run.records(), Instrumented.functions(exe).get("pair")).stream()
                .map(r -> r.kind() + "@" + Long.toHexString(r.w0())).toList())
                .containsExactly("1@" + Long.toHexString(two), "1@" + Long.toHexString(two + 8));
        assertThat(Instrumented.in(run.records(), Instrumented.functions(exe).get("sum2")).stream()
                .map(r -> r.kind() + "@" + Long.toHexString(r.w0())).toList())
                .containsExactly("1@" + Long.toHexString(two), "1@" + Long.toHexString(two + 8));
        List<Instrumented.Record> chase = Instrumented.in(run.records(), Instrumented.functions(exe).get("chase"));
        assertThat(chase).extracting(Instrumented.Record::kind).containsExactly(SiteFormat.LOAD, SiteFormat.LOAD);
        assertThat(chase.get(1).w0()).as("the second load reads where the first one's value points")
                .isNotEqualTo(chase.get(0).w0());
    }

    @Test
    void aRegisterIsDeadOnlyWhenOverwrittenWholeBeforeAnyRead() {
        byte[] movLoadEax = {(byte) 0x8b, 0x07}, addEaxEdx = {0x01, (byte) 0xc2}, ret = {(byte) 0xc3};
        byte[] movLoadAl = {(byte) 0x8a, 0x07}, cmovzRcxRax = {0x48, 0x0f, 0x44, (byte) 0xc1};
        byte[] movOneEax = {(byte) 0xb8, 1, 0, 0, 0}, popRbx = {0x5b}, jmpNext = {(byte) 0xeb, 0};
        byte[] imulThreeEdx = {0x6b, 0x17, 3}, imulEcxEdx = {0x0f, (byte) 0xaf, (byte) 0xd1}, xorEaxEax = {0x31, (byte) 0xc0};
        BitSet none = new BitSet();
        assertThat(ProbeGroups.dead(code(movLoadEax, addEaxEdx, ret), 0, none)).as("the load overwrites eax; edx is read")
                .containsExactly(named("rax"));
        assertThat(ProbeGroups.dead(code(movLoadAl, movOneEax), 0, none)).as("an 8-bit write keeps the rest").isEmpty();
        assertThat(ProbeGroups.dead(code(cmovzRcxRax, movOneEax), 0, none)).as("cmov may keep the old value").isEmpty();
        assertThat(ProbeGroups.dead(code(jmpNext, movOneEax), 0, none)).as("the search ends at a jump").isEmpty();
        BitSet labelAtOne = new BitSet();
        labelAtOne.set(1);
        assertThat(ProbeGroups.dead(code(popRbx, movOneEax), 0, labelAtOne)).as("and at a label").containsExactly(named("rbx"));
        assertThat(ProbeGroups.dead(code(imulThreeEdx, imulEcxEdx), 0, none)).as("three-operand imul overwrites")
                .containsExactly(named("rdx"));
        assertThat(ProbeGroups.dead(code(imulEcxEdx, movOneEax, xorEaxEax), 0, none)).as("two-operand imul reads")
                .containsExactly(named("rax"));
        assertThat(ProbeGroups.dead(code(xorEaxEax, movOneEax), 0, none)).as("a zeroing xor counts as a read").isEmpty();
        assertThat(ProbeGroups.dead(code(addEaxEdx, movLoadEax), 1, none)).as("from the second instruction on")
                .containsExactly(named("rax"));
    }

    /** Decoded instructions laid out one after the other, numbered from 0. */
    private static List<FunctionPlanner.Decoded> code(byte[]... instructions) {
        var result = new ArrayList<FunctionPlanner.Decoded>();
        var decoder = new Decoder();
        long address = 0x1000;
        for (byte[] bytes : instructions) {
            var insn = decoder.decode(bytes, 0, address).orElseThrow();
            result.add(new FunctionPlanner.Decoded(result.size(), AsmSyntax.Instruction.parse(insn.mnemonic()), insn));
            address += bytes.length;
        }
        return result;
    }

    /** Probes (their loads of the cursor, one per group) between the function's label and its .size directive. */
    private static int probes(String text, String function) {
        return body(text, function).split("movq %fs:__memtrace_cursor@tpoff, |__memtrace_cursor@gottpoff\\(%rip\\)", -1).length - 1;
    }

    private static String body(String text, String function) {
        int start = text.indexOf("\n" + function + ":\n");
        int end = text.indexOf(".size\t" + function, start);
        assertThat(start).as(function).isNotNegative();
        return text.substring(start, end);
    }
}
