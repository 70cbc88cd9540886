package org.memtrace.export;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.SequencedMap;
import java.util.concurrent.ExecutorService;
import java.util.function.Supplier;
import java.util.concurrent.Executors;
import org.memtrace.analysis.Ending;
import org.memtrace.trace.Naming;

/**
 * The rows of {@link NamedRows} as one Parquet file ({@link ParquetFile} says how it is laid out), with the
 * key/value metadata the caller adds ({@link #metadata}) in its footer.
 */
public final class ParquetRows extends NamedRows {
    static final int ROWS = ParquetFile.ROWS;

    /**
     * Compresses and writes the pages, in order, on a thread of its own: compression is most of the writer's
     * CPU time, and the thread that interprets the trace need not wait for it.
     */
    private final ExecutorService writer = writerThread();
    private final ParquetFile file;
    private Supplier<SequencedMap<String, String>> metadata = LinkedHashMap::new;

    public ParquetRows(Naming naming, OutputStream out) throws IOException {
        super(naming);
        this.file = new ParquetFile(out, this::utf8, writer);
    }

    /** The thread that compresses and writes a file's (or a dataset's) pages. */
    static ExecutorService writerThread() {
        return Executors.newSingleThreadExecutor(task -> Thread.ofPlatform().name("memtrace parquet writer").daemon().unstarted(task));
    }

    /**
     * What to put in the footer's metadata's key/value metadata, asked when a file is finished (so it may say what the trace
     * read so far told).
     */
    public void metadata(Supplier<SequencedMap<String, String>> metadata) {
        this.metadata = metadata;
    }

    @Override
    void row(long sequence, char kind, boolean store, long address, long size, long ip, int instruction, int tid,
             int region, int symbol, long offset, int source) {
        try {
            file.row(sequence, kind, store, address, size, ip, instruction, tid, region, symbol, offset, source);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }


    @Override
    public String name() { return "parquet export"; }

    @Override
    public void finish(Ending ending) throws IOException {
        try {
            file.finish(metadata.get());
        } finally {
            writer.shutdownNow();
        }
    }
}
