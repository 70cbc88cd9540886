package org.memtrace.madt;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.function.Consumer;
import org.memtrace.analysis.Access;
import org.memtrace.analysis.Allocation;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.Ending;
import org.memtrace.event.Event;
import org.memtrace.trace.Naming;

/**
 * The MadT text trace (docs/trace-format.md): one numbered line per Table I event, raw ({@code #}) and/or
 * symbolic ({@code $}), and {@code #} comment lines for the events outside Table I. One analysis among
 * others: the interpretation stage numbers the lines and keeps the naming current, the writer only reads
 * names. A write error stops the trace, not the run: it is reported once through {@code problems} and
 * {@link #complete()} says so.
 *
 * <p>The load and store lines, nearly every line, are written as bytes straight into the output buffer
 * ({@link LineBuffer}): numbers digit by digit, names as their escaped UTF-8 bytes, kept per name
 * ({@link NameBytes}), and a symbolic line's end after its region made once per instruction and thread
 * ({@link SiteTails}). The rare other lines go through a StringBuilder ({@link CommentLines} for the
 * {@code #} comments). The names are asked for here, on the stage's thread; the bytes are made and written
 * on a thread of the writer's own ({@link LinePipe}), in the same order.
 */
public final class MadtWriter implements Analysis {
    private final LinePipe lines;
    /** The code and source names of the lines' ends, as bytes (the data names' are the text writer's thread's). */
    private final NameBytes names = new NameBytes();
    /** Where a line's end is put together, to be cut out as its own bytes. */
    private final LineBuffer scratch = new LineBuffer(OutputStream.nullOutputStream(), p -> {});
    private final SiteTails tails = new SiteTails();
    private final AddressMode mode;
    private final Naming naming;
    private final StringBuilder text = new StringBuilder(512);
    /** The interpretation's stack ids of the stacks printed so far, and their ids in this trace. */
    private final java.util.Map<Integer, Integer> printedStacks = new java.util.HashMap<>();

    /** Prints the fields of one line; {@code symbolic} selects names over hex numbers. */
    @FunctionalInterface
    private interface Fields {
        void append(StringBuilder sb, boolean symbolic);
    }

    /**
     * {@code naming}: the stage's, read only, for the names of lines other than loads and stores. The lines
     * are made on the caller's thread: what {@code memtrace run} uses (see the other constructor for why).
     */
    public MadtWriter(OutputStream out, AddressMode mode, Naming naming, Consumer<String> problems) {
        this(out, mode, naming, problems, false);
    }

    /**
     * {@code threaded}: the lines' bytes made and written on a thread of their own ({@link LinePipe}), else on
     * the caller's. Measured at load 25 on two cores (bench/results/run-split.md, 2026-12-07): {@code print} of
     * gemm (C2), the reading thread 33-40 % less CPU and the two threads together what one took; {@code run -o
     * FILE} of python3 (C1, as the launcher runs {@code run}), the reading thread only 10 % less and 42 % more
     * CPU in all. So {@code print} asks for the thread and {@code run} does not.
     */
    public MadtWriter(OutputStream out, AddressMode mode, Naming naming, Consumer<String> problems, boolean threaded) {
        this.lines = new LinePipe(out, mode, problems, threaded);
        this.mode = mode;
        this.naming = naming;
    }

    /** Whether nothing failed: a failed trace is incomplete. */
    @Override
    public boolean complete() { return !lines.failed(); }

    /** The events outside Table I, as comments; the numbered ones come through the other methods. */
    @Override
    public void event(Event event) {
        if (lines.failed()) return;
        switch (event) {
            case Event.Access a -> {}
            case Event.Probe p -> {}
            case Event.Block b -> {}
            case Event.Alloc a -> {}
            case Event.Writer w -> {} // the summary's: the trace of a program is the same whatever its writer cost
            case Event.Fallback f -> {} // the summary's too
            default -> {
                CommentLines.append(text, event, mode.symbolic(), naming);
                flushText();
            }
        }
    }

    @Override
    public void access(Access t) {
        if (lines.failed()) return;
        // The names are the stage's objects, asked for here (the naming moves on with the trace); their bytes
        // and the line are made on the text writer's thread (LinePipe). A span names the data and region of
        // every address in it; the region is the same on the # and the $ line.
        Naming.Span span = t.span();
        String region = span == null ? t.region() : null;
        String dataName = span == null && mode.symbolic() ? t.data() : null;
        byte[] tail = mode.symbolic() ? siteTail(t) : null;
        lines.access(t.sequence(), t.address(), t.ip(), t.size(), t.tid(), t.weighted() ? t.weight() : Access.UNWEIGHTED,
                t.store(), span, dataName, region, tail);
    }

    /** The end of a symbolic access line after its region ({@link SiteTails}), made when the site has none. */
    private byte[] siteTail(Access t) {
        long ip = t.ip();
        long shape = SiteTails.shape(t.size(), t.tid());
        int weight = t.weight();
        byte[] tail = tails.find(ip, shape, weight);
        if (tail != null) return tail;
        byte[] code = names.name(t.code());
        String sourceName = t.source();
        byte[] source = sourceName == null ? null : names.name(sourceName);
        scratch.room(64 + code.length + (source == null ? 0 : source.length));
        scratch.put((byte) ',');
        scratch.put(code);
        putSizeThreadWeight(scratch, t.size(), t.tid(), t.weighted() ? t.weight() : Access.UNWEIGHTED);
        if (source != null) {
            scratch.put((byte) ',');
            scratch.put(source);
        }
        scratch.put((byte) '\n');
        tail = scratch.cut(0);
        tails.add(ip, shape, weight, tail);
        return tail;
    }

    /** Code names may differ from here on (a module, a mapping): the lines' ends made so far are stale. */
    @Override
    public void namesChanged() {
        tails.namesChanged();
    }

    /** The fields both forms of an access line end with: {@code ,size,tid} and {@code ,weight} when weighted. */
    static void putSizeThreadWeight(LineBuffer out, int size, int tid, int weight) {
        out.put((byte) ',');
        out.putDecimal(size);
        out.put((byte) ',');
        out.putDecimal(tid);
        if (weight != Access.UNWEIGHTED) {
            out.put((byte) ',');
            out.putDecimal(weight);
        }
    }

    @Override
    public void block(long sequence, Event.Block b) {
        if (lines.failed()) return;
        String via = b.syscall() ? Syscalls.name(b.what())
                : Event.BlockFunction.of(b.what()).name().toLowerCase(Locale.ROOT);
        switch (b.op()) {
            case COPY -> numbered('Y', sequence, (sb, sym) -> {
                data(sb, sym, b.destination()).append(',').append(field(naming.region(b.destination()))).append(',');
                data(sb, sym, b.source()).append(',').append(field(naming.region(b.source()))).append(',');
                tail(sb, sym, b, via);
            });
            case STORE -> numbered('W', sequence, (sb, sym) -> {
                data(sb, sym, b.destination()).append(',').append(field(naming.region(b.destination()))).append(',');
                tail(sb, sym, b, via);
            });
            case FETCH -> numbered('G', sequence, (sb, sym) -> {
                data(sb, sym, b.source()).append(',').append(field(naming.region(b.source()))).append(',');
                tail(sb, sym, b, via);
            });
        }
        flushText();
    }

    private void tail(StringBuilder sb, boolean sym, Event.Block b, String via) {
        sb.append(b.length()).append(',');
        code(sb, sym, b.ip()).append(',').append(b.tid()).append(',').append(via);
    }

    /** What an allocator call prints: its Table I letter, the size field and the old block (0 if none). */
    private record AllocLine(char letter, long size, long old) {
        static AllocLine of(Event.Alloc a) {
            return switch (a.function()) {
                case MALLOC, VALLOC, PVALLOC -> new AllocLine('M', a.arg(0), 0);
                case ALIGNED_ALLOC, MEMALIGN -> new AllocLine('M', a.arg(1), 0);
                case POSIX_MEMALIGN -> new AllocLine('M', a.arg(2), 0);
                case CALLOC -> new AllocLine('C', a.arg(0) * a.arg(1), 0);
                case MMAP -> new AllocLine('P', a.arg(1), 0);
                case REALLOC -> new AllocLine('R', a.arg(1), a.arg(0));
                case REALLOCARRAY -> new AllocLine('R', a.arg(1) * a.arg(2), a.arg(0));
                case MREMAP -> new AllocLine('E', a.arg(2), a.arg(0));
                case MUNMAP -> new AllocLine('U', a.arg(1), 0);
                case FREE -> new AllocLine('F', 0, 0);
            };
        }

        boolean releases() { return letter == 'F' || letter == 'U'; }

        boolean moves() { return letter == 'R' || letter == 'E'; }
    }

    /**
     * Allocation lines name the block after the naming has seen the event (so it knows the new block, or
     * the released name), but the old block of a realloc/mremap is named as it was before the call.
     */
    @Override
    public void allocation(Allocation allocation) {
        if (lines.failed()) return;
        Event.Alloc a = allocation.event();
        AllocLine line = AllocLine.of(a);
        if (allocation.sequence() < 0) return; // free(NULL) releases nothing and prints no line
        String oldName = line.old() == 0 || allocation.previous() == null ? "0x0" : field(blockName(allocation.previous()));
        long address = line.releases() ? a.arg(0) : a.result();
        // A failed call created no block: there is nothing to name.
        boolean failedCall = !line.releases() && (address == 0 || address == -1);
        // A block memtrace never saw created (allocated before the agent attached) has no name: its address.
        String known = failedCall ? null : allocation.block();
        String name = known == null || known.equals(Naming.NO_BLOCK) ? hex(address) : field(known);
        int stack = stackId(allocation.stack());
        numbered(line.letter(), allocation.sequence(), (sb, sym) -> {
            sb.append(sym ? name : hex(address));
            if (line.letter() != 'F') sb.append(',').append(Long.toUnsignedString(line.size()));
            if (line.moves()) sb.append(',').append(sym ? oldName : hex(line.old()));
            sb.append(',').append(a.tid());
            if (stack > 0) sb.append(",s").append(stack);
        });
        flushText();
    }

    /**
     * The id of a stack of more than one frame, written as a {@code # stack N FRAME…} line the first time
     * (symbolic frames, hex with {@code --addresses raw}); 0 for a call site alone, which the line's block
     * name already tells: traces of {@code --stack-depth 1} are as before stacks.
     */
    private int stackId(org.memtrace.analysis.Stack stack) {
        if (!stack.deep()) return 0;
        Integer id = printedStacks.get(stack.id());
        if (id != null) return id;
        id = printedStacks.size() + 1;
        printedStacks.put(stack.id(), id);
        text.append("# stack ").append(id);
        // symbolic: one name per frame, inlined functions included (docs/stacks.md); raw: one address per return address
        if (mode.symbolic()) for (String name : stack.names()) text.append(' ').append(field(name));
        else for (long frame : stack.frames()) text.append(' ').append(hex(frame));
        text.append('\n');
        return id;
    }

    /** A block's start is named {@code <…>+0} by {@link Naming#data}; the allocation field is the bare name. */
    private static String blockName(String dataName) {
        return dataName.endsWith("+0") ? dataName.substring(0, dataName.length() - 2) : dataName;
    }

    private StringBuilder data(StringBuilder sb, boolean sym, long address) {
        return sb.append(sym ? field(naming.data(address)) : hex(address));
    }

    private StringBuilder code(StringBuilder sb, boolean sym, long ip) {
        return sb.append(sym ? field(naming.code(ip)) : hex(ip));
    }

    private void numbered(char letter, long n, Fields fields) {
        if (mode.raw()) line(letter, '#', n, fields, false);
        if (mode.symbolic()) line(letter, '$', n, fields, true);
    }

    private void line(char letter, char kind, long n, Fields fields, boolean symbolic) {
        text.append(letter).append(kind).append(n).append(':');
        fields.append(text, symbolic);
        text.append('\n');
    }

    private void flushText() {
        if (text.isEmpty()) return;
        byte[] b = text.toString().getBytes(StandardCharsets.UTF_8);
        text.setLength(0);
        lines.text(b);
    }

    @Override
    public String name() { return "text trace"; }

    @Override
    public void finish(Ending ending) {
        // the last line of a trace memtrace stopped early: without it the trace would look whole (docs/trace-format.md)
        if (!lines.failed() && ending.cutShort() != null) {
            text.append("# incomplete ").append(ending.cutShort().replace('\n', ' ')).append('\n');
            flushText();
        }
        lines.close();
    }

    /**
     * A name as one field (docs/trace-format.md, "Names"): '%', ',', space and control characters are
     * written as %XX (two upper-case hex digits of the byte), so no name can split a line or a field.
     */
    public static String field(String name) {
        return NameBytes.field(name);
    }

    static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }
}
