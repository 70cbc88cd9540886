package org.memtrace.select;

/**
 * The distance functions δ_RRI and δ_IRR of Fig. 1. For each of b, i, d that differs between the two
 * expressions the parameter's score is added; a register parameter differs when register, incarnation or
 * scale differ, an immediate one when the two values are at least a chunk apart, a place when it is
 * another object or at least a chunk further into the same one. The parameter scores are
 * the figure caption's triplets: RRI ⟨s_b, s_i, s_d⟩ = ⟨s2, s1, s3⟩, IRR ⟨s3, s2, s1⟩. A different segment
 * (fs/gs) counts as a different base. Distance 0 therefore means: same registers, same incarnations, and
 * constants less than a chunk apart.
 */
public record ExpressionDistance(ScoreTriplet scores, long chunkSize) {

    public ExpressionDistance {
        if (chunkSize <= 0) {
            throw new IllegalArgumentException("chunk size must be positive, not " + chunkSize);
        }
    }

    /** Only expressions of one template are related by a distance. */
    public static boolean comparable(BidExpression e, BidExpression f) {
        return e.template() == f.template();
    }

    public int distance(BidExpression e, BidExpression f) {
        if (!comparable(e, f)) {
            throw new IllegalArgumentException("expressions of templates " + e.template() + " and " + f.template()
                    + " have no distance");
        }
        int sb, si, sd;
        if (e.template() == Template.RRI) {
            sb = scores.s2();
            si = scores.s1();
            sd = scores.s3();
        } else {
            sb = scores.s3();
            si = scores.s2();
            sd = scores.s1();
        }
        int delta = 0;
        if (differ(e.base(), f.base()) || !e.segment().equals(f.segment())) {
            delta += sb;
        }
        if (differ(e.index(), f.index())) {
            delta += si;
        }
        if (differ(e.displacement(), f.displacement())) {
            delta += sd;
        }
        return delta;
    }

    private boolean differ(BidParameter p, BidParameter q) {
        if (p instanceof BidParameter.Immediate(long a) && q instanceof BidParameter.Immediate(long b)) {
            return apart(a, b);
        }
        if (p instanceof BidParameter.Place(long x, _, long a, _) && q instanceof BidParameter.Place(long y, _, long b, _)) {
            return x != y || apart(a, b);
        }
        return !p.equals(q);
    }

    private boolean apart(long a, long b) {
        long magnitude = a >= b ? a - b : b - a; // exact as an unsigned value even when it overflows a long
        return Long.compareUnsigned(magnitude, chunkSize) >= 0;
    }
}
