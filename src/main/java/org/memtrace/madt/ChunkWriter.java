package org.memtrace.madt;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * Writes the text trace's chunks on a thread of its own, so that the reading thread formats the next chunk
 * while the kernel copies the last one: python3's JSON run prints 60 M lines, 4.6 GB, seconds of system time
 * that were the reading thread's. The bytes reach the stream in the order handed over, the same bytes as a
 * direct write. At most {@link #IN_FLIGHT} chunks wait (their buffers are reused), so a slow disk holds the
 * reading thread back instead of filling memory. The first write error stops the writing (nothing after it
 * is written) and is kept for the reading thread, which says it ({@link #error}).
 */
final class ChunkWriter {
    private static final int IN_FLIGHT = 3;

    private record Chunk(byte[] bytes, int length) {}

    /** Hands the thread its end. */
    private static final Chunk END = new Chunk(new byte[0], 0);

    private final OutputStream out;
    private final BlockingQueue<Chunk> full = new ArrayBlockingQueue<>(IN_FLIGHT);
    /** Written buffers, for the reading thread to fill again; one more than can wait, the one being filled. */
    private final BlockingQueue<byte[]> free = new ArrayBlockingQueue<>(IN_FLIGHT + 1);
    private final int bufferSize;
    private int buffers;
    private volatile IOException error;
    private Thread thread;

    ChunkWriter(OutputStream out, int bufferSize) {
        this.out = out;
        this.bufferSize = bufferSize;
    }

    /** The first write error, or null: from here on nothing is written. */
    IOException error() { return error; }

    /**
     * Queues the first {@code length} bytes of {@code bytes} (no longer the caller's), and returns a buffer to
     * fill next: a written one, a new one while fewer than {@link #IN_FLIGHT} + 1 exist, else the next one
     * the thread writes out.
     */
    byte[] hand(byte[] bytes, int length) throws InterruptedIOException {
        if (thread == null) {
            thread = Thread.ofPlatform().daemon().name("memtrace-text-writer").start(this::writeAll);
            buffers = 1;
        }
        try {
            full.put(new Chunk(bytes, length));
            byte[] next = free.poll();
            if (next != null) return next;
            if (buffers <= IN_FLIGHT) {
                buffers++;
                return new byte[bufferSize];
            }
            return free.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while writing the trace");
        }
    }

    /** Waits until every chunk handed over is written (or dropped after an error); the stream is left open. */
    void finish() throws InterruptedIOException {
        if (thread == null) return;
        try {
            full.put(END);
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while writing the trace");
        }
        thread = null;
    }

    private void writeAll() {
        try {
            for (Chunk c = full.take(); c != END; c = full.take()) {
                if (error == null) {
                    try {
                        out.write(c.bytes(), 0, c.length());
                    } catch (IOException e) {
                        error = e;
                    }
                }
                free.offer(c.bytes());
            }
        } catch (InterruptedException e) {
            // nobody interrupts this thread: the JVM is going
        }
    }
}
