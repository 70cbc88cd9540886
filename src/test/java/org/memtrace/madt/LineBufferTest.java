package org.memtrace.madt;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LineBufferTest {
    /** What {@code numbers} put through putSequence, one per line. */
    private static String sequences(long... numbers) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        LineBuffer out = new LineBuffer(bytes, p -> { throw new AssertionError(p); });
        for (long n : numbers) {
            out.room(32);
            out.putSequence(n);
            out.put((byte) '\n');
        }
        out.close();
        return bytes.toString(StandardCharsets.US_ASCII);
    }

    @Test
    void countedUpLineNumbersCarryAndGrowADigit() {
        assertEquals("0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n", sequences(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
        assertEquals("98\n99\n100\n101\n", sequences(98, 99, 100, 101));
        assertEquals("1099\n1100\n1999\n2000\n", sequences(1099, 1100, 1999, 2000));
        assertEquals("2147483647\n2147483648\n9999999999\n10000000000\n", sequences(2147483647L, 2147483648L, 9999999999L, 10000000000L));
        assertEquals("9223372036854775806\n9223372036854775807\n", sequences(Long.MAX_VALUE - 1, Long.MAX_VALUE));
    }

    @Test
    void aNumberAgainOrAfterAGapIsWrittenAsItIs() {
        // raw and symbolic lines have the same number; other lines (allocations, blocks) take numbers between
        assertEquals("5\n5\n6\n6\n9\n10\n3\n4\n", sequences(5, 5, 6, 6, 9, 10, 3, 4));
        assertEquals("-1\n0\n-1\n-1\n1\n", sequences(-1, 0, -1, -1, 1));
    }
}
