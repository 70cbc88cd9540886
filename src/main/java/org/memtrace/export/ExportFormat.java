package org.memtrace.export;

/** The formats {@code memtrace convert} writes (docs/convert.md gives each one's grammar). */
public enum ExportFormat {
    /** Valgrind Lackey's {@code --trace-mem=yes} data lines: {@code " L addr,size"}, {@code " S …"}, {@code " M …"}. */
    LACKEY,
    /** Pin's pinatrace tool: {@code "0xip: R 0xaddr"}, {@code W} for writes, {@code #eof} at the end. */
    PINATRACE,
    /** Dinero's din: {@code "0 addr"} for a read, {@code "1 addr"} for a write, hexadecimal without 0x. */
    DIN,
    /**
     * Dinero IV's extended din ({@code -informat D}): {@code "r addr size"}, {@code w} for writes, address and
     * size hexadecimal without 0x; the size lets Dinero split an access over two lines as cachesim does.
     */
    XDIN,
    /** One row per access with a header line: the columns of {@link NamedRows#COLUMNS}. */
    CSV,
    /** The CSV's rows and columns as a Parquet file with typed columns, and each row's allocation stack ({@link ParquetRows}). */
    PARQUET,
    /**
     * DynamoRIO's drmemtrace offline trace, a directory that {@code drcachesim -indir} reads: one gzip file of
     * 12-byte records per thread, instruction- and data-filtered ({@link Drmemtrace}).
     */
    DRMEMTRACE
}
