package org.memtrace.select;

import org.memtrace.x86.Register;

/**
 * A memory address expression in the BID model (§III-A). {@code segment} is fs or gs when the address is
 * relative to a thread-local segment base, {@link Register#NONE} otherwise; two expressions with different
 * segments never denote the same location, so the segment takes part in equality and distance.
 */
public record BidExpression(Template template, BidParameter base, BidParameter index, BidParameter displacement,
                            Register segment) {

    @Override
    public String toString() {
        String body = template + "{" + base + ", " + index + ", " + displacement + "}";
        return segment.isNone() ? body : segment.name() + ":" + body;
    }
}
