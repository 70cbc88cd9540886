package org.memtrace.export;

import java.io.OutputStream;
import org.memtrace.trace.Naming;

/**
 * The rows of {@link NamedRows} as one Parquet file on a stream: a dataset of one file, unpartitioned
 * ({@link ParquetFile} says how the file is laid out); the key/value metadata as {@link #metadata} gives it.
 */
public final class ParquetRows extends ParquetDataset {
    static final int ROWS = ParquetFile.ROWS;

    public ParquetRows(Naming naming, OutputStream out) {
        super(naming, path -> out, Partitioning.NONE);
    }
}
