package org.memtrace.check;

import java.util.Map;
import java.util.TreeMap;

/**
 * A value the pruner knows as a linear function of registers' values at a reference point (the start of a
 * straight-line block, or the top of a loop's iteration): {@code sum(coef[r] * r) + constant}. The pruner's
 * whole static analysis is in these: an address is "base + constant" when its only term is one register,
 * and "affine in the loop" when every register it reads is invariant or an induction register.
 *
 * @param terms register (64-bit name, without %) to coefficient; no zero coefficients
 */
record Linear(Map<String, Long> terms, long constant) {
    Linear {
        terms = Map.copyOf(terms);
    }

    static Linear register(String r) {
        return new Linear(Map.of(r, 1L), 0);
    }

    static Linear constant(long c) {
        return new Linear(Map.of(), c);
    }

    Linear plus(long c) {
        return new Linear(terms, constant + c);
    }

    Linear plus(Linear o) {
        Map<String, Long> sum = new TreeMap<>(terms);
        o.terms.forEach((r, k) -> sum.merge(r, k, Long::sum));
        sum.values().removeIf(k -> k == 0);
        return new Linear(sum, constant + o.constant);
    }

    Linear times(long k) {
        if (k == 0) return constant(0);
        Map<String, Long> product = new TreeMap<>();
        terms.forEach((r, c) -> product.put(r, c * k));
        return new Linear(product, constant * k);
    }

    Linear minus(Linear o) {
        return plus(o.times(-1));
    }

    /** The same terms: two values that differ by a constant known at build time. */
    boolean sameTerms(Linear o) {
        return terms.equals(o.terms);
    }
}
