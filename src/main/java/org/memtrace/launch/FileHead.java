package org.memtrace.launch;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * The first bytes of a file, as the checks that decide whether an existing file may be replaced read them
 * (a text trace's first line, a recording's magic, an ELF header): one reader, so that all of them see a short
 * file, a file that grows and a read that returns less than asked alike.
 */
public final class FileHead {
    private FileHead() {}

    /** Up to {@code n} bytes from the start of {@code ch} (fewer when the file is shorter); its position is kept. */
    public static byte[] of(FileChannel ch, int n) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(n);
        while (head.hasRemaining() && ch.read(head, head.position()) > 0) {
            // a read may return less than asked before the end
        }
        byte[] bytes = new byte[head.position()];
        head.flip().get(bytes);
        return bytes;
    }
}
