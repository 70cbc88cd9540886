package org.memtrace.madt;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.Consumer;
import org.memtrace.analysis.Access;
import org.memtrace.analysis.Allocation;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.Ending;
import org.memtrace.event.Event;
import org.memtrace.event.Signals;
import org.memtrace.trace.Naming;

/**
 * The MadT text trace (docs/trace-format.md): one numbered line per Table I event, raw ({@code #}) and/or
 * symbolic ({@code $}), and {@code #} comment lines for the events outside Table I. One analysis among
 * others: the interpretation stage numbers the lines and keeps the naming current, the writer only reads
 * names. A write error stops the trace, not the run: it is reported once through {@code problems} and
 * {@link #complete()} says so.
 *
 * <p>The load and store lines, nearly every line, are written as bytes straight into the output buffer:
 * numbers digit by digit, names as their escaped UTF-8 bytes, kept per name (the stage's names are cached
 * strings, so the same object comes back access after access, and is found by identity before equality). The rare other lines go through a
 * StringBuilder. A data name is kept by its access's address and found by identity alone; a new one
 * ({@code table+4987200} for a random walk over a table, where nearly every name is new) is made of its
 * base's bytes, kept per base, and the offset's digits, without hashing, comparing or escaping it whole.
 */
public final class MadtWriter implements Analysis {
    /** Bytes are handed to the stream in chunks of about this size. */
    private static final int CHUNK = 1 << 16;
    // as many as the stage keeps data names (analysis.Names): fewer would miss on every array walk
    private static final int NAME_SLOTS = 1 << 14;

    private final OutputStream out;
    private byte[] buf = new byte[CHUNK + 4096];
    private int len;
    /** Escaped UTF-8 bytes of recently written names, one name per slot by its hash. */
    private final String[] nameKeys = new String[NAME_SLOTS];
    private final byte[][] nameBytes = new byte[NAME_SLOTS][];
    /** Data names by their address's hash, and their bytes: the stage's object for the address while it holds. */
    private final String[] dataKeys = new String[NAME_SLOTS];
    private final byte[][] dataBytes = new byte[NAME_SLOTS][];
    private static final int BASE_SLOTS = 1 << 10;
    /** A data name whose first {@code baseLengths[i]} characters are the base whose bytes {@code baseBytes[i]} holds. */
    private final String[] baseKeys = new String[BASE_SLOTS];
    private final int[] baseLengths = new int[BASE_SLOTS];
    private final byte[][] baseBytes = new byte[BASE_SLOTS][];
    private static final int SPAN_BITS = 12;
    /** Spans (Access#span) by their start's hash, by identity: their base's escaped bytes and '+', and their region's. */
    private final Naming.Span[] spanKeys = new Naming.Span[1 << SPAN_BITS];
    private final byte[][] spanBases = new byte[1 << SPAN_BITS][];
    private final byte[][] spanRegions = new byte[1 << SPAN_BITS][];
    private static final int SITE_BITS = 17;
    /** {@link #siteTail}'s lines' ends by instruction address, with the size, thread and weight they were made for. */
    private final long[] siteIps = new long[1 << SITE_BITS];
    private final long[] siteShapes = new long[1 << SITE_BITS];
    private final int[] siteWeights = new int[1 << SITE_BITS];
    private final int[] siteStamps = new int[1 << SITE_BITS];
    private final byte[][] siteTails = new byte[1 << SITE_BITS][];
    /** Starts at 1: the zeros of {@link #siteStamps} are empty slots. */
    private int siteStamp = 1;
    private final AddressMode mode;
    private final Naming naming;
    private final Consumer<String> problems;
    private final StringBuilder text = new StringBuilder(512);
    /** The interpretation's stack ids of the stacks printed so far, and their ids in this trace. */
    private final java.util.Map<Integer, Integer> printedStacks = new java.util.HashMap<>();
    private boolean failed;

    /** Prints the fields of one line; {@code symbolic} selects names over hex numbers. */
    @FunctionalInterface
    private interface Fields {
        void append(StringBuilder sb, boolean symbolic);
    }

    /** {@code naming}: the stage's, read only, for the names of lines other than loads and stores. */
    public MadtWriter(OutputStream out, AddressMode mode, Naming naming, Consumer<String> problems) {
        this.out = out;
        this.mode = mode;
        this.naming = naming;
        this.problems = problems;
    }

    /** Whether nothing failed: a failed trace is incomplete. */
    @Override
    public boolean complete() { return !failed; }

    /** The events outside Table I, as comments; the numbered ones come through the other methods. */
    @Override
    public void event(Event event) {
        if (failed) return;
        switch (event) {
            case Event.Access a -> {}
            case Event.Probe p -> {}
            case Event.Block b -> {}
            case Event.Alloc a -> {}
            case Event.Writer w -> {} // the summary's: the trace of a program is the same whatever its writer cost
            case Event.Fallback f -> {} // the summary's too
            default -> {
                comment(event);
                flushText();
            }
        }
    }

    @Override
    public void access(Access t) {
        if (failed) return;
        // A span names the data and region of every address in it: its bytes are made once (spanSlot).
        Naming.Span span = t.span();
        int spanSlot = span == null ? -1 : spanSlot(span);
        // The region is the same on the # and the $ line: looked up once per access, not once per line.
        byte[] region = span == null ? nameBytes(t.region()) : spanRegions[spanSlot];
        byte letter = (byte) (t.store() ? 'S' : 'L');
        if (mode.raw()) {
            room(64 + region.length);
            put(letter);
            put((byte) '#');
            putDecimal(t.sequence());
            put((byte) ':');
            putHex(t.address());
            put((byte) ',');
            put(region);
            put((byte) ',');
            putHex(t.ip());
            putSizeThreadWeight(t);
            put((byte) '\n');
        }
        if (mode.symbolic()) {
            byte[] data = span == null ? dataBytes(t.address(), t.data()) : spanBases[spanSlot];
            byte[] tail = siteTail(t);
            room(52 + data.length + region.length + tail.length);
            put(letter);
            put((byte) '$');
            putDecimal(t.sequence());
            put((byte) ':');
            put(data);
            if (span != null) putDecimal(t.address() - span.origin());
            put((byte) ',');
            put(region);
            put(tail);
        }
        if (len >= CHUNK) writeOut();
    }

    /**
     * The end of a symbolic access line after its region, {@code ,code,size,tid[,weight][,source]} and the
     * newline: the same for every access of one instruction (or probe site) by one thread, so made once per
     * site and kept by the instruction's address until code names can change ({@link #namesChanged}).
     * Written field by field, this was two name lookups and two numbers per line.
     */
    private byte[] siteTail(Access t) {
        long ip = t.ip();
        // two ways: the two slots of a pair, the one used last first (python3's run has 40 K sites and more)
        int slot = (int) ((ip * 0x9E3779B97F4A7C15L) >>> 64 - SITE_BITS) & -2;
        long shape = (long) t.size() << 32 | (t.tid() & 0xffffffffL);
        int weight = t.weight();
        if (siteStamps[slot] == siteStamp && siteIps[slot] == ip && siteShapes[slot] == shape && siteWeights[slot] == weight)
            return siteTails[slot];
        int other = slot + 1;
        if (siteStamps[other] == siteStamp && siteIps[other] == ip && siteShapes[other] == shape && siteWeights[other] == weight) {
            byte[] tail = siteTails[other];
            moveSite(slot, other);
            keepSite(slot, ip, shape, weight, tail);
            return tail;
        }
        byte[] code = nameBytes(t.code());
        String sourceName = t.source();
        byte[] source = sourceName == null ? null : nameBytes(sourceName);
        int start = len;
        room(64 + code.length + (source == null ? 0 : source.length));
        put((byte) ',');
        put(code);
        putSizeThreadWeight(t);
        if (source != null) {
            put((byte) ',');
            put(source);
        }
        put((byte) '\n');
        byte[] tail = Arrays.copyOfRange(buf, start, len);
        len = start;
        moveSite(other, slot);
        keepSite(slot, ip, shape, weight, tail);
        return tail;
    }

    private void moveSite(int to, int from) {
        keepSite(to, siteIps[from], siteShapes[from], siteWeights[from], siteTails[from]);
        siteStamps[to] = siteStamps[from];
    }

    private void keepSite(int slot, long ip, long shape, int weight, byte[] tail) {
        siteStamps[slot] = siteStamp;
        siteIps[slot] = ip;
        siteShapes[slot] = shape;
        siteWeights[slot] = weight;
        siteTails[slot] = tail;
    }

    /** The slot of {@link #spanBases} and {@link #spanRegions} holding the span's bytes, made when it is new. */
    private int spanSlot(Naming.Span span) {
        int slot = (int) ((span.start() * 0x9E3779B97F4A7C15L) >>> 64 - SPAN_BITS);
        Naming.Span key = spanKeys[slot];
        if (key == span) return slot;
        // the stage makes a span again when it asks again (another line of the same block): same names, same bytes
        if (key == null || !key.base().equals(span.base())) spanBases[slot] = (field(span.base()) + '+').getBytes(StandardCharsets.UTF_8);
        if (key == null || !key.region().equals(span.region())) spanRegions[slot] = nameBytes(span.region());
        spanKeys[slot] = span;
        return slot;
    }

    /** Code names may differ from here on (a module, a mapping): the lines' ends made so far are stale. */
    @Override
    public void namesChanged() {
        if (siteStamp == Integer.MAX_VALUE) {
            Arrays.fill(siteStamps, 0);
            siteStamp = 0;
        }
        siteStamp++;
    }

    /** {@link #field} of {@code name} in UTF-8, from the cache when the same name object was written lately. */
    private byte[] nameBytes(String name) {
        int slot = name.hashCode() & (NAME_SLOTS - 1);
        String key = nameKeys[slot];
        // equal names from different lookups (the source line of every instruction of one line) share a slot
        if (key == name || name.equals(key)) return nameBytes[slot];
        byte[] b = field(name).getBytes(StandardCharsets.UTF_8);
        nameKeys[slot] = name;
        nameBytes[slot] = b;
        return b;
    }

    /**
     * {@link #field} of a data name in UTF-8: the same object as the one last written for an address with the
     * same slot has the same bytes (no hash of the name needed, and a freed block's new name is a new object).
     */
    private byte[] dataBytes(long address, String name) {
        int slot = (int) ((address * 0x9E3779B97F4A7C15L) >>> 50) & (NAME_SLOTS - 1);
        if (dataKeys[slot] == name) return dataBytes[slot];
        byte[] b = dataField(name);
        dataKeys[slot] = name;
        dataBytes[slot] = b;
        return b;
    }

    /**
     * {@link #field} of a name in UTF-8; for {@code base+digits} the base's bytes from the cache and the
     * digits as they are (escaping works character by character and leaves '+' and digits alone).
     */
    private byte[] dataField(String name) {
        int n = name.length(), plus = n;
        while (plus > 0 && name.charAt(plus - 1) >= '0' && name.charAt(plus - 1) <= '9') plus--;
        if (plus == n || plus < 2 || name.charAt(plus - 1) != '+') return field(name).getBytes(StandardCharsets.UTF_8);
        int baseLength = plus - 1, h = baseLength;
        for (int i = 0; i < baseLength; i++) h = 31 * h + name.charAt(i);
        int slot = (h ^ h >>> 12) & (BASE_SLOTS - 1);
        String key = baseKeys[slot];
        byte[] base;
        if (key != null && baseLengths[slot] == baseLength && key.regionMatches(0, name, 0, baseLength)) {
            base = baseBytes[slot];
        } else {
            base = field(name.substring(0, baseLength)).getBytes(StandardCharsets.UTF_8);
            baseKeys[slot] = name;
            baseLengths[slot] = baseLength;
            baseBytes[slot] = base;
        }
        byte[] b = Arrays.copyOf(base, base.length + n - baseLength);
        for (int i = baseLength; i < n; i++) b[base.length + i - baseLength] = (byte) name.charAt(i);
        return b;
    }

    /** Makes room for {@code n} more bytes; the put methods below rely on it and check nothing. */
    private void room(int n) {
        if (len + n > buf.length) buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
    }

    private void put(byte b) {
        buf[len++] = b;
    }

    /** The fields both forms of an access line end with: {@code ,size,tid} and {@code ,weight} when weighted. */
    private void putSizeThreadWeight(Access t) {
        put((byte) ',');
        putDecimal(t.size());
        put((byte) ',');
        putDecimal(t.tid());
        if (t.weighted()) {
            put((byte) ',');
            putDecimal(t.weight());
        }
    }

    private void put(byte[] b) {
        System.arraycopy(b, 0, buf, len, b.length);
        len += b.length;
    }

    /** At most 20 bytes. */
    private void putDecimal(long v) {
        if (v < 0) {
            byte[] b = Long.toString(v).getBytes(StandardCharsets.US_ASCII);
            put(b);
            return;
        }
        if (v <= Integer.MAX_VALUE) {
            putDecimal((int) v);
            return;
        }
        // every line has three or four numbers: two digits per division, and the count without dividing
        int digits = 1;
        for (long p = 10; digits < 19 && v >= p; p *= 10) digits++;
        int i = len + digits;
        while (v >= 100) {
            long q = v / 100;
            int r = (int) (v - 100 * q);
            buf[--i] = (byte) ('0' + r % 10);
            buf[--i] = (byte) ('0' + r / 10);
            v = q;
        }
        if (v >= 10) {
            buf[--i] = (byte) ('0' + v % 10);
            v /= 10;
        }
        buf[--i] = (byte) ('0' + v);
        len += digits;
    }

    /**
     * A number below 2^31, nearly every one a line has (its sequence, an offset, size and thread): two digits
     * at a time from a table, each division by 100 a multiplication (exact below 4.9 * 10^9), which the
     * run's C1-compiled code would otherwise make a division instruction.
     */
    private void putDecimal(int v) {
        int digits = v < 100_000 ? (v < 100 ? (v < 10 ? 1 : 2) : v < 1000 ? 3 : v < 10_000 ? 4 : 5)
                : v < 10_000_000 ? (v < 1_000_000 ? 6 : 7) : v < 100_000_000 ? 8 : v < 1_000_000_000 ? 9 : 10;
        int i = len + digits;
        while (v >= 100) {
            int q = (int) ((v * 1374389535L) >>> 37);
            int r = 2 * (v - 100 * q);
            buf[--i] = DIGIT_PAIRS[r + 1];
            buf[--i] = DIGIT_PAIRS[r];
            v = q;
        }
        if (v >= 10) {
            buf[--i] = DIGIT_PAIRS[2 * v + 1];
            buf[--i] = DIGIT_PAIRS[2 * v];
        } else {
            buf[--i] = (byte) ('0' + v);
        }
        len += digits;
    }

    /** "00" to "99". */
    private static final byte[] DIGIT_PAIRS = new byte[200];

    static {
        for (int i = 0; i < 100; i++) {
            DIGIT_PAIRS[2 * i] = (byte) ('0' + i / 10);
            DIGIT_PAIRS[2 * i + 1] = (byte) ('0' + i % 10);
        }
    }

    /** {@code 0x} and the lower-case hex digits: at most 18 bytes. */
    private void putHex(long v) {
        buf[len++] = '0';
        buf[len++] = 'x';
        for (int shift = (63 - Long.numberOfLeadingZeros(v | 1)) & ~3; shift >= 0; shift -= 4)
            buf[len++] = HEX_BYTES[(int) (v >>> shift) & 15];
    }

    private static final byte[] HEX_BYTES = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    private void writeOut() {
        if (len == 0) return;
        try {
            out.write(buf, 0, len);
        } catch (IOException e) {
            fail(e);
        }
        len = 0;
    }

    @Override
    public void block(long sequence, Event.Block b) {
        if (failed) return;
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
        if (failed) return;
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

    private void comment(Event event) {
        text.append("# ");
        boolean sym = mode.symbolic();
        switch (event) {
            case Event.Hello h -> text.append("agent pid=").append(h.pid()).append(" page-size=").append(h.pageSize())
                    .append(" regions=").append(h.regions());
            case Event.ThreadEvent t when t.started() -> text.append("thread ").append(t.tid()).append(" start parent=").append(t.value());
            case Event.ThreadEvent t -> text.append("thread ").append(t.tid()).append(" exit code=").append(t.value());
            case Event.Control c -> {
                text.append(c.start() ? "start" : "stop").append(" tid=").append(c.tid());
                if (c.caller() != 0) code(text.append(" caller="), sym, c.caller());
            }
            case Event.Fork f -> text.append("fork tid=").append(f.tid()).append(" child=").append(f.childPid()).append(" (untraced)");
            case Event.Exit x -> {
                switch (x.kind()) {
                    case NORMAL -> text.append("exit status=").append(x.value());
                    case EXEC -> text.append("exec ").append(field(x.path()));
                    case EXEC_FAILED -> text.append("exec-failed ").append(field(x.path())).append(" errno=").append(x.value());
                    case SIGNAL -> {
                        text.append("fatal signal ").append(x.value()).append(" (").append(Signals.name(x.value())).append(") ip=");
                        code(text, sym, x.ip()).append(" addr=").append(hex(x.address()));
                    }
                }
                text.append(" tid=").append(x.tid());
            }
            case Event.Stats s -> text.append("stats faults=").append(s.faults()).append(" steps=").append(s.steps())
                    .append(" syscalls=").append(s.syscalls()).append(" windows-at-risk=").append(s.windowsAtRisk())
                    .append(" untraced-faults=").append(s.untracedFaults());
            case Event.Module m -> text.append("module ").append(field(m.path())).append(" bias=").append(hex(m.loadBias()))
                    .append(" build-id=").append(java.util.HexFormat.of().formatHex(m.buildId()));
            case Event.Mapping m -> {
                text.append("mapping ").append(hex(m.start())).append('-').append(hex(m.end()))
                        .append(' ').append(prot(m.prot())).append(" offset=").append(hex(m.offset()));
                if (m.traced()) text.append(" traced");
                if (!m.path().isEmpty()) text.append(' ').append(field(m.path()));
            }
            case Event.Range r -> text.append(r.added() ? "traced " : "untraced ").append(r.kind().name().toLowerCase(Locale.ROOT))
                    .append(' ').append(hex(r.start())).append('-').append(hex(r.end()))
                    .append(' ').append(prot(r.prot()));
            default -> throw new AssertionError("not a comment event: " + event);
        }
        text.append('\n');
    }

    private static String prot(int prot) {
        return ((prot & 1) != 0 ? "r" : "-") + ((prot & 2) != 0 ? "w" : "-") + ((prot & 4) != 0 ? "x" : "-");
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
        room(b.length);
        put(b);
        if (len >= CHUNK) writeOut();
    }

    private void fail(IOException e) {
        failed = true;
        problems.accept("cannot write the trace (" + e.getMessage() + "); it stops there");
    }

    @Override
    public String name() { return "text trace"; }

    @Override
    public void finish(Ending ending) {
        // the last line of a trace memtrace stopped early: without it the trace would look whole (docs/trace-format.md)
        if (!failed && ending.cutShort() != null) {
            text.append("# incomplete ").append(ending.cutShort().replace('\n', ' ')).append('\n');
            flushText();
        }
        if (!failed) writeOut();
        try {
            out.close();
        } catch (IOException e) {
            if (!failed) fail(e);
        }
    }

    /**
     * A name as one field (docs/trace-format.md, "Names"): '%', ',', space and control characters are
     * written as %XX (two upper-case hex digits of the byte), so no name can split a line or a field.
     * Anything printable else, UTF-8 included, is written as it is.
     */
    public static String field(String name) {
        int i = 0;
        while (i < name.length() && !escaped(name.charAt(i))) i++;
        if (i == name.length()) return name;
        StringBuilder sb = new StringBuilder(name.length() + 8).append(name, 0, i);
        for (; i < name.length(); i++) {
            char c = name.charAt(i);
            if (escaped(c)) sb.append('%').append(HEX_DIGITS.charAt(c >> 4)).append(HEX_DIGITS.charAt(c & 15));
            else sb.append(c);
        }
        return sb.toString();
    }

    private static final String HEX_DIGITS = "0123456789ABCDEF";

    private static boolean escaped(char c) {
        return c <= ' ' || c == ',' || c == '%' || c == 0x7f;
    }

    static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }

}
