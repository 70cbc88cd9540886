package org.memtrace.select;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.memtrace.x86.Register;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ExpressionDistanceTest {
    private static final ScoreTriplet S = new ScoreTriplet(1, 2, 4);
    private static final long C = 4096;
    private final ExpressionDistance delta = new ExpressionDistance(S, C);

    private static BidParameter reg(String name, int incarnation) {
        return name.equals("nil") ? BidParameter.NIL
                : new BidParameter.IncarnatedRegister(Register.named(name), incarnation, 1);
    }

    private static BidExpression rri(String b, String i, long d) {
        return new BidExpression(Template.RRI, reg(b, 0), reg(i, 0), new BidParameter.Immediate(d), Register.NONE);
    }

    private static BidExpression irr(long b, String i, String d) {
        return new BidExpression(Template.IRR, new BidParameter.Immediate(b), reg(i, 0), reg(d, 0), Register.NONE);
    }

    @ParameterizedTest(name = "RRI [{0}+{1}+{2}] vs [{3}+{4}+{5}] = {6}")
    @CsvSource({
            "rbx, rcx, 8,    rbx, rcx, 8,    0",
            "rbx, rcx, 8,    rbx, rcx, 4095, 0",
            "rbx, rcx, 8,    rbx, rcx, 4104, 4",   // displacement a chunk apart: s_d = s3
            "rbx, rcx, 8,    rbx, rdx, 8,    1",   // index: s_i = s1
            "rbx, rcx, 8,    rsi, rcx, 8,    2",   // base: s_b = s2
            "rbx, rcx, 8,    rsi, rdx, 8,    3",
            "rbx, rcx, 8,    rsi, rdx, 9000, 7",
            "rbx, nil, 0,    rbx, rcx, 0,    1",
    })
    void rri(String b1, String i1, long d1, String b2, String i2, long d2, int expected) {
        assertThat(delta.distance(rri(b1, i1, d1), rri(b2, i2, d2))).isEqualTo(expected);
        assertThat(delta.distance(rri(b2, i2, d2), rri(b1, i1, d1))).isEqualTo(expected);
    }

    @ParameterizedTest(name = "IRR [{0}+{1}+{2}] vs [{3}+{4}+{5}] = {6}")
    @CsvSource({
            "0x601000, nil, nil,   0x601000, nil, nil,  0",
            "0x601000, nil, nil,   0x601ff0, nil, nil,  0",
            "0x601000, nil, nil,   0x602000, nil, nil,  4",   // static address a chunk apart: s_b = s3
            "0x601000, rcx, nil,   0x601000, rdx, nil,  2",   // index: s_i = s2
            "0x601000, rcx, rax,   0x601000, rcx, rbx,  1",   // displacement register: s_d = s1
            "0x601000, rcx, rax,   0x700000, rdx, rbx,  7",
    })
    void irr(String b1, String i1, String d1, String b2, String i2, String d2, int expected) {
        assertThat(delta.distance(irr(Long.decode(b1), i1, d1), irr(Long.decode(b2), i2, d2))).isEqualTo(expected);
    }

    @Test
    void differentIncarnationsOfOneRegisterAreDifferentParameters() {
        var e = new BidExpression(Template.RRI, reg("rbx", 0), BidParameter.NIL, new BidParameter.Immediate(0), Register.NONE);
        var f = new BidExpression(Template.RRI, reg("rbx", 1), BidParameter.NIL, new BidParameter.Immediate(0), Register.NONE);
        assertThat(e).isNotEqualTo(f);
        assertThat(delta.distance(e, f)).isEqualTo(S.s2());
    }

    @Test
    void differentTemplatesHaveNoDistance() {
        assertThat(ExpressionDistance.comparable(rri("rbx", "nil", 0), irr(0x601000, "nil", "nil"))).isFalse();
        assertThatThrownBy(() -> delta.distance(rri("rbx", "nil", 0), irr(0x601000, "nil", "nil")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void extremeDisplacementsDoNotOverflow() {
        assertThat(delta.distance(rri("rbx", "nil", Long.MIN_VALUE), rri("rbx", "nil", Long.MAX_VALUE))).isEqualTo(4);
    }

    /**
     * Random pairs: distance is symmetric, zero exactly when registers agree and constants are within a
     * chunk, and never smaller than that of a pair that differs in a subset of the parameters.
     */
    @Test
    void randomPairsRespectTheScoreOrder() {
        Random random = new Random(42);
        String[] regs = {"rax", "rbx", "rcx", "nil"};
        for (int k = 0; k < 5000; k++) {
            String b = regs[random.nextInt(3)], i = regs[random.nextInt(4)];
            long d = random.nextInt(20000) - 10000;
            BidExpression e = rri(b, i, d);
            BidExpression sameRegs = rri(b, i, d + random.nextInt(8192) - 4096);
            BidExpression otherBase = rri(b.equals("rax") ? "rbx" : "rax", i, sameRegs.displacement() instanceof BidParameter.Immediate(long v) ? v : 0);
            int near = delta.distance(e, sameRegs);
            assertThat(near).isEqualTo(delta.distance(sameRegs, e));
            assertThat(near == 0).isEqualTo(Math.abs(((BidParameter.Immediate) sameRegs.displacement()).value() - d) < C);
            assertThat(delta.distance(e, otherBase)).isEqualTo(near + S.s2());
        }
    }

    @ParameterizedTest(name = "{0},{1},{2} is invalid")
    @CsvSource({"1,2,3", "2,1,4", "1,1,4", "0,2,4", "1,3,2", "3,4,6"})
    void invalidScoreTripletsAreRejected(int s1, int s2, int s3) {
        assertThatThrownBy(() -> new ScoreTriplet(s1, s2, s3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("s1 + s2 < s3");
    }

    @Test
    void chunkMustBePositive() {
        assertThatThrownBy(() -> new ExpressionDistance(S, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
