package org.memtrace.select;

/**
 * The scores s1 &lt; s2 &lt; s3 (with s1 + s2 &lt; s3) that the distance functions add per differing
 * parameter (§III-C). s3 outweighs the other two together, so one difference in the heaviest parameter
 * puts two expressions further apart than differences in both lighter ones.
 */
public record ScoreTriplet(int s1, int s2, int s3) {
    public static final ScoreTriplet DEFAULT = new ScoreTriplet(1, 2, 4);

    public ScoreTriplet {
        if (s1 <= 0 || !(s1 < s2 && s2 < s3) || !(s1 + s2 < s3)) {
            throw new IllegalArgumentException(
                    "scores %d,%d,%d must satisfy 0 < s1 < s2 < s3 and s1 + s2 < s3".formatted(s1, s2, s3));
        }
    }

    @Override
    public String toString() {
        return s1 + "," + s2 + "," + s3;
    }
}
