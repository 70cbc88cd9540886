package org.memtrace.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a run can tell about itself while it goes, written by the run's thread and read by another (the
 * progress line of {@code memtrace run}): when the program started and ended, the recording file a program
 * built with memtrace cc is writing, and how far the reading of that recording has come once it ended. Only
 * plain volatile fields: the run's thread pays a volatile store per chunk, nothing per event.
 */
public final class RunState {
    private volatile long programStarted, programEnded;
    private volatile Path recording;
    private volatile long readDone, readTotal, readStarted;

    void started(Path recordingFile) {
        recording = recordingFile;
        programStarted = System.nanoTime();
    }

    void ended() {
        if (programEnded == 0) programEnded = System.nanoTime();
    }

    void reading(long total) {
        readTotal = total;
        readStarted = System.nanoTime();
    }

    void read(long done) { readDone = done; }

    /** System.nanoTime() when the program started; 0 before. */
    public long programStarted() { return programStarted; }

    /** System.nanoTime() when the program was seen to end; 0 while it runs. */
    public long programEnded() { return programEnded; }

    /** The bytes of the recording the program has written so far (memtrace cc programs, while they run); 0 else. */
    public long recordingBytes() {
        Path r = recording;
        if (r == null || programEnded != 0) return 0;
        try {
            return Files.size(r);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** The stored bytes of the recording begun (of {@link #readTotal}) since the reading started. */
    public long readDone() { return readDone; }

    /** The recording's stored bytes in all, once its reading began; 0 before, and for a run read as it goes. */
    public long readTotal() { return readTotal; }

    /** System.nanoTime() when the reading of the finished recording began. */
    public long readStarted() { return readStarted; }
}
