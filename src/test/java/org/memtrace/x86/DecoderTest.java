package org.memtrace.x86;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.HexFormat;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class DecoderTest {
    private static final long AT = 0x401000;
    private final Decoder decoder = new Decoder();

    private Instruction decode(String hex) {
        byte[] code = HexFormat.of().parseHex(hex.replace(" ", ""));
        return decoder.decode(code, 0, AT).orElseThrow();
    }

    @Test
    void ripRelativeLoadIsResolvedToItsStaticAddress() {
        Instruction i = decode("8b 05 10 00 00 00"); // mov eax, [rip+0x10]
        assertThat(i.mnemonic()).isEqualTo("mov");
        assertThat(i.length()).isEqualTo(6);
        MemoryOperand m = i.memoryOperands().getFirst();
        assertThat(m.isRipRelative()).isTrue();
        assertThat(m.staticAddress()).hasValue(AT + 6 + 0x10);
        assertThat(i.accesses()).singleElement().satisfies(a -> {
            assertThat(a.sizeBytes()).isEqualTo(4);
            assertThat(a.read()).isTrue();
            assertThat(a.write()).isFalse();
        });
        assertThat(i.registersWritten()).containsExactly(Register.named("rax"));
    }

    @Test
    void addToMemoryIsOneReadModifyWriteAccessWithFullSib() {
        Instruction i = decode("01 44 8b 08"); // add [rbx+rcx*4+8], eax
        MemoryOperand m = i.memoryOperands().getFirst();
        assertThat(m.base().name()).isEqualTo("rbx");
        assertThat(m.index().name()).isEqualTo("rcx");
        assertThat(m.scale()).isEqualTo(4);
        assertThat(m.displacement()).isEqualTo(8);
        assertThat(m.segment().name()).isEqualTo("ds");
        assertThat(m.staticAddress()).isEmpty();
        assertThat(i.accesses()).singleElement().satisfies(a -> {
            assertThat(a.isReadModifyWrite()).isTrue();
            assertThat(a.sizeBytes()).isEqualTo(4);
            assertThat(a.implicitStack()).isFalse();
        });
    }

    @Test
    void leaOnlyComputesAnAddress() {
        Instruction i = decode("48 8d 43 08"); // lea rax, [rbx+8]
        assertThat(i.memoryOperands()).singleElement()
                .satisfies(m -> assertThat(m.use()).isEqualTo(MemoryOperand.Use.ADDRESS));
        assertThat(i.accesses()).isEmpty();
    }

    @Test
    void pushWritesTheImplicitStackSlotAndChangesRsp() {
        Instruction i = decode("53"); // push rbx
        assertThat(i.accesses()).singleElement().satisfies(a -> {
            assertThat(a.implicitStack()).isTrue();
            assertThat(a.write()).isTrue();
            assertThat(a.read()).isFalse();
            assertThat(a.sizeBytes()).isEqualTo(8);
        });
        assertThat(i.registersWritten()).contains(Register.named("rsp"));
        assertThat(i.accesses().getFirst().operand().displacement()).as("push writes [rsp-8]").isEqualTo(-8);
        assertThat(decode("e8 00 00 00 00").accesses().getFirst().operand().displacement()).isEqualTo(-8);
        assertThat(decode("5b").accesses().getFirst().operand().displacement()).as("pop reads [rsp]").isZero();
        assertThat(decode("ff 74 24 08").accesses()).extracting(a -> a.operand().displacement())
                .as("push [rsp+8] reads [rsp+8], writes [rsp-8]").containsExactly(8L, -8L);
    }

    @Test
    void repMovsbAccessesOneByteElementsThroughRsiAndRdi() {
        Instruction i = decode("f3 a4"); // rep movsb
        assertThat(i.rep()).isTrue();
        assertThat(i.accesses()).hasSize(2).allSatisfy(a -> {
            assertThat(a.sizeBytes()).isEqualTo(1);
            assertThat(a.rep()).isTrue();
            assertThat(a.implicitStack()).isFalse();
        });
        assertThat(i.accesses()).anySatisfy(a -> assertThat(a.read() && a.operand().base().name().equals("rsi")).isTrue());
        assertThat(i.accesses()).anySatisfy(a -> assertThat(a.write() && a.operand().base().name().equals("rdi")).isTrue());
    }

    @ParameterizedTest(name = "{1}")
    @CsvSource({
            "0f 1f 44 00 00, nop dword [rax+rax]",
            "66 0f 1f 84 00 00 00 00 00, nop word [rax+rax+0]",
            "0f 18 08, prefetcht0 [rax]",
            "0f 0d 08, prefetchw [rax]",
    })
    void hintsCarryAnAddressButNoAccess(String hex, String text) {
        Instruction i = decode(hex);
        assertThat(i.memoryOperands()).singleElement()
                .satisfies(m -> assertThat(m.use()).isEqualTo(MemoryOperand.Use.HINT));
        assertThat(i.accesses()).isEmpty();
    }

    @ParameterizedTest(name = "{0} -> {1} {2}")
    @CsvSource({
            "e8 00 01 00 00, CALL, 0x401105",
            "e9 fb ff ff ff, JUMP, 0x401000",
            "eb fe, JUMP, 0x401000",
            "75 10, CONDITIONAL_JUMP, 0x401012",
            "0f 84 00 10 00 00, CONDITIONAL_JUMP, 0x402006",
    })
    void directBranchTargets(String hex, Flow flow, String target) {
        Instruction i = decode(hex);
        assertThat(i.flow()).isEqualTo(flow);
        assertThat(i.branchTarget()).isEqualTo(OptionalLong.of(Long.decode(target)));
    }

    @Test
    void callPushesTheReturnAddressAndIndirectBranchesHaveNoTarget() {
        assertThat(decode("e8 00 00 00 00").accesses()).singleElement()
                .satisfies(a -> assertThat(a.implicitStack() && a.write()).isTrue());
        Instruction indirect = decode("ff 25 00 10 00 00"); // jmp [rip+0x1000]
        assertThat(indirect.flow()).isEqualTo(Flow.JUMP);
        assertThat(indirect.branchTarget()).isEmpty();
        assertThat(indirect.accesses()).singleElement().satisfies(a -> assertThat(a.read()).isTrue());
        Instruction ret = decode("c3");
        assertThat(ret.flow()).isEqualTo(Flow.RETURN);
        assertThat(ret.accesses()).singleElement().satisfies(a -> assertThat(a.implicitStack() && a.read()).isTrue());
    }

    @Test
    void segmentAndAbsoluteAddressing() {
        Instruction tls = decode("64 48 8b 04 25 28 00 00 00"); // mov rax, fs:[0x28]
        MemoryOperand m = tls.memoryOperands().getFirst();
        assertThat(m.segment().isSegmentWithBase()).isTrue();
        assertThat(m.staticAddress()).as("fs-relative is thread-local, not static").isEmpty();
        Instruction absolute = decode("8b 04 25 40 10 60 00"); // mov eax, [0x601040]
        assertThat(absolute.memoryOperands().getFirst().staticAddress()).hasValue(0x601040);
    }

    @Test
    void subRegisterWritesAreReportedAsTheEnclosingRegister() {
        assertThat(decode("0f 44 c1").registersWritten()).contains(Register.named("rax")); // cmove eax, ecx
        assertThat(decode("88 c8").registersWritten()).containsExactly(Register.named("rax")); // mov al, cl
        assertThat(Register.named("eax").enclosing()).isEqualTo(Register.named("rax"));
        assertThat(Register.named("r9b").enclosing()).isEqualTo(Register.named("r9"));
    }

    @Test
    void trapsAndInvalidBytes() {
        assertThat(decode("0f 0b").flow()).isEqualTo(Flow.TRAP);
        assertThat(decode("f4").flow()).isEqualTo(Flow.TRAP);
        assertThat(decode("0f 05").flow()).isEqualTo(Flow.SYSTEM_CALL);
        assertThat(decoder.decode(new byte[]{0x06}, 0, AT)).as("push es is invalid in 64-bit mode").isEmpty();
        assertThat(decoder.decode(new byte[]{0x48}, 0, AT)).as("a lone REX prefix").isEmpty();
    }

    @Test
    void decodeAllSkipsInvalidBytesAndKeepsAddresses() {
        byte[] code = HexFormat.of().parseHex("90" + "06" + "4889d8" + "c3");
        List<Instruction> all = decoder.decodeAll(code, 0, code.length, 0x1000);
        assertThat(all).extracting(Instruction::address).containsExactly(0x1000L, 0x1002L, 0x1005L);
        assertThat(all).extracting(Instruction::mnemonic).containsExactly("nop", "mov", "ret");
    }

    /** Random bytes never crash the binding, and whatever decodes is self-consistent. */
    @Test
    void randomBytesDecodeToConsistentInstructions() {
        Random random = new Random(20261121);
        byte[] code = new byte[64];
        for (int round = 0; round < 20_000; round++) {
            random.nextBytes(code);
            decoder.decode(code, 0, AT).ifPresent(i -> {
                assertThat(i.length()).isBetween(1, 15);
                for (MemoryAccess a : i.accesses()) {
                    assertThat(a.read() || a.write()).isTrue();
                    assertThat(a.sizeBytes()).isNotNegative();
                }
                for (MemoryOperand m : i.memoryOperands()) {
                    assertThat(m.scale()).isIn(0, 1, 2, 4, 8);
                }
            });
        }
    }

    @Test
    void cacheDecodesEachAddressOnce() {
        byte[] memory = HexFormat.of().parseHex("01448b08" + "53" + "c3");
        int[] reads = {0};
        var cache = new InstructionCache(new Decoder(), (address, into) -> {
            reads[0]++;
            int off = (int) (address - 0x7000);
            if (off < 0 || off >= memory.length) {
                return 0;
            }
            int n = Math.min(into.length, memory.length - off);
            System.arraycopy(memory, off, into, 0, n);
            return n;
        });
        for (int k = 0; k < 1000; k++) {
            assertThat(cache.accessesAt(0x7000)).singleElement().satisfies(a -> assertThat(a.isReadModifyWrite()).isTrue());
            assertThat(cache.accessesAt(0x7004)).singleElement().satisfies(a -> assertThat(a.implicitStack()).isTrue());
            assertThat(cache.instructionAt(0x7005)).hasValueSatisfying(i -> assertThat(i.flow()).isEqualTo(Flow.RETURN));
            assertThat(cache.instructionAt(0x9000)).isEmpty();
        }
        assertThat(reads[0]).isEqualTo(4);
        assertThat(cache.size()).isEqualTo(4);
    }

    @Test
    void cacheGrowsPastItsInitialCapacity() {
        var cache = new InstructionCache(new Decoder(), (address, into) -> {
            into[0] = (byte) 0x90;
            return 1;
        });
        for (long ip = 0; ip < 5000; ip++) {
            assertThat(cache.instructionAt(ip * 7)).isPresent();
        }
        assertThat(cache.size()).isEqualTo(5000);
        assertThat(cache.instructionAt(7 * 4999)).hasValueSatisfying(i -> assertThat(i.address()).isEqualTo(7 * 4999L));
    }
}
