package org.memtrace.export;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Locale;
import org.memtrace.analysis.Access;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.Ending;
import org.memtrace.analysis.BlockChunks;
import org.memtrace.event.Event;

/**
 * The address-only text formats simulators read (Lackey, pinatrace, din, Dinero IV's extended din). Block operations become the
 * line-sized chunks of {@link BlockChunks}, charged to the instruction that called the block function (or
 * made the system call). A read-modify-write arrives as a load and a store of the same instruction, address
 * and thread in a row: Lackey prints it as one {@code M} line, the others as a read and a write.
 */
public final class SimulatorText implements Analysis {
    /** Block operations are cut at this boundary, the line size of today's x86 caches. */
    public static final int CHUNK = 64;

    private final ExportFormat format;
    private final AsciiOut out;
    /** Lackey: a load held back until the next access says whether it was the first half of an M. */
    private boolean pending;
    private long pendingIp, pendingAddress;
    private int pendingSize, pendingTid;

    public SimulatorText(ExportFormat format, OutputStream out) {
        if (format != ExportFormat.LACKEY && format != ExportFormat.PINATRACE && format != ExportFormat.DIN && format != ExportFormat.XDIN)
            throw new IllegalArgumentException(format + " is not an address-only text format");
        this.format = format;
        this.out = new AsciiOut(out);
    }

    @Override
    public void access(Access t) {
        try {
            if (format != ExportFormat.LACKEY) {
                line(t.ip(), t.address(), t.size(), t.store() ? 'S' : 'L');
                return;
            }
            if (pending) {
                pending = false;
                if (t.store() && t.ip() == pendingIp && t.address() == pendingAddress && t.tid() == pendingTid
                        && t.size() == pendingSize) {
                    line(t.ip(), t.address(), t.size(), 'M');
                    return;
                }
                line(pendingIp, pendingAddress, pendingSize, 'L');
            }
            if (t.store()) {
                line(t.ip(), t.address(), t.size(), 'S');
            } else {
                pending = true;
                pendingIp = t.ip();
                pendingAddress = t.address();
                pendingSize = t.size();
                pendingTid = t.tid();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void block(long sequence, Event.Block b) {
        try {
            flushPending();
            BlockChunks.expand(b, CHUNK, (address, size, write) -> {
                try {
                    line(b.ip(), address, size, write ? 'S' : 'L');
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void flushPending() throws IOException {
        if (!pending) return;
        pending = false;
        line(pendingIp, pendingAddress, pendingSize, 'L');
    }

    /** {@code kind} is L, S or M. */
    private void line(long ip, long address, int size, char kind) throws IOException {
        switch (format) {
            case LACKEY -> out.put(' ').put(kind).put(' ').hex(address, 8).put(',').dec(size).put('\n');
            case PINATRACE -> out.put("0x").hex(ip, 1).put(": ").put(kind == 'L' ? 'R' : 'W').put(" 0x").hex(address, 1).put('\n');
            case DIN -> out.put(kind == 'L' ? '0' : '1').put(' ').hex(address, 1).put('\n');
            // size 0 (shape unknown) is one byte, as cachesim counts it; Dinero would take 0 bytes as the line before
            case XDIN -> out.put(kind == 'L' ? 'r' : 'w').put(' ').hex(address, 1).put(' ').hex(Math.max(size, 1), 1).put('\n');
            default -> throw new AssertionError(format);
        }
    }

    @Override
    public String name() { return format.name().toLowerCase(Locale.ROOT) + " export"; }

    @Override
    public void finish(Ending ending) throws IOException {
        flushPending();
        if (format == ExportFormat.PINATRACE) out.put("#eof\n");
        out.close();
    }
}
