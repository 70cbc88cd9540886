package org.memtrace.export;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SequencedMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.memtrace.analysis.Ending;
import org.memtrace.trace.Naming;

/**
 * The rows of {@link NamedRows} as a Hive-style Parquet dataset: a directory of files, each a
 * {@link ParquetFile} with every column, that an engine reads as one table ({@code read_parquet('out/**')}
 * in DuckDB, {@code spark.read.parquet("out")}). Partitioned by thread, a thread's rows go to
 * {@code thread=TID/part-00000.parquet} (the thread column is kept in the file too, so a reader that ignores
 * the directory names loses nothing, and DuckDB's {@code hive_partitioning} finds the same value); with a
 * row limit a file holds at most that many rows and the next {@code part-00001.parquet} starts. Every file
 * carries the key/value metadata {@link #metadata} gives when the file is finished.
 *
 * <p>All files share one writer thread, so a trace of many threads holds one thread's worth of compression
 * work in flight; a partition's row arrays grow with its rows (up to a row group, 2^20 rows, each).
 */
public sealed class ParquetDataset extends NamedRows permits ParquetRows {

    /** Opens a file of the dataset by its path relative to the dataset's directory ({@code thread=3/part-00000.parquet}). */
    @FunctionalInterface
    public interface Files {
        OutputStream create(String relativePath) throws IOException;
    }

    /** How rows are spread over files: by thread or not, and at most {@code maxRows} rows per file. */
    public record Partitioning(boolean byThread, long maxRows) {
        /** One file with every row. */
        static final Partitioning NONE = new Partitioning(false, Long.MAX_VALUE);

        public Partitioning {
            if (maxRows <= 0) throw new IllegalArgumentException("rows per file must be positive: " + maxRows);
        }
    }

    /** One partition's file being written, and how many it has written before. */
    private static final class Partition {
        ParquetFile file;
        int parts;
    }

    private final Files files;
    private final Partitioning partitioning;
    /**
     * Compresses and writes the pages, in order, on a thread of its own (one for every file): compression
     * is most of the writer's CPU time, and the thread that interprets the trace need not wait for it.
     */
    private final ExecutorService writer = Executors.newSingleThreadExecutor(
            task -> Thread.ofPlatform().name("memtrace parquet writer").daemon().unstarted(task));
    private final Map<Integer, Partition> partitions = new LinkedHashMap<>();
    private Supplier<SequencedMap<String, String>> metadata = LinkedHashMap::new;
    /** The partition of the last row's thread: rows come in runs of one thread. */
    private int lastTid = Integer.MIN_VALUE;
    private Partition last;

    public ParquetDataset(Naming naming, Files files, Partitioning partitioning) {
        super(naming);
        this.files = files;
        this.partitioning = partitioning;
    }

    /**
     * What to put in every file's key/value metadata, asked when a file is finished (so it may say what the
     * trace read so far told).
     */
    public void metadata(Supplier<SequencedMap<String, String>> metadata) {
        this.metadata = metadata;
    }

    @Override
    final void row(long sequence, char kind, boolean store, long address, long size, long ip, int instruction, int tid,
             int region, int symbol, long offset, int source, int stack, int freeStack) {
        try {
            Partition p = tid == lastTid ? last : partition(tid);
            if (p.file != null && p.file.rows() == partitioning.maxRows()) {
                p.file.finish(metadata.get());
                p.file = null;
            }
            if (p.file == null) p.file = open(tid, p.parts++);
            p.file.row(sequence, kind, store, address, size, ip, instruction, tid, region, symbol, offset, source, stack, freeStack);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Partition partition(int tid) {
        Partition p = partitions.computeIfAbsent(partitioning.byThread() ? tid : 0, k -> new Partition());
        lastTid = tid;
        last = p;
        return p;
    }

    private ParquetFile open(int tid, int part) throws IOException {
        String name = String.format(Locale.ROOT, "part-%05d.parquet", part);
        String path = partitioning.byThread() ? "thread=" + tid + "/" + name : name;
        return new ParquetFile(new BufferedOutputStream(files.create(path), 1 << 16), this::utf8, writer);
    }


    @Override
    public final String name() { return "parquet export"; }

    /** Closes every open file; a trace without rows leaves one empty file, so the dataset has its columns. */
    @Override
    public final void finish(Ending ending) throws IOException {
        try {
            if (partitions.isEmpty()) open(0, 0).finish(metadata.get());
            for (Partition p : partitions.values()) if (p.file != null) p.file.finish(metadata.get());
        } finally {
            writer.shutdownNow();
        }
    }
}
