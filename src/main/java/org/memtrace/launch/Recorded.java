package org.memtrace.launch;

/**
 * What a record-only run (memtrace run --record-only) can say without decoding its recording.
 *
 * @param result  how the program ended; incomplete when the recording is cut short or damaged (said through the problems)
 * @param records the records in the file: the ring's records in fault mode, the end record's count of a .mtr (0 without one)
 * @param bytes   the size of the file
 * @param unit    what {@code records} counts, for the user's line
 */
public record Recorded(RunResult result, long records, long bytes, String unit) {}
