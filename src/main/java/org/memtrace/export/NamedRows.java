package org.memtrace.export;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.memtrace.analysis.Access;
import org.memtrace.analysis.Allocation;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.DataName;
import org.memtrace.analysis.Interner;
import org.memtrace.analysis.Stack;
import org.memtrace.event.Event;
import org.memtrace.heap.Block;
import org.memtrace.trace.Naming;

/**
 * The rows of the CSV and Parquet exports with their names as small int ids: a load or store is one row,
 * a block fetch or store one row for its whole range, a block copy two rows with the same sequence number
 * (the source read, then the destination written). Names are those of the MadT symbolic line at that event.
 *
 * <p>Every distinct name text gets one id for the whole trace ({@link #text}), so a writer formats or
 * encodes a name once, not once per row. Names change only between accesses: {@link #namesChanged} starts a
 * new generation, which makes every cached address stale at once (an allocation-heavy program has one per
 * malloc). A heap block's run of addresses is named once (a span), not once per address.
 */
abstract class NamedRows implements Analysis {
    /** The columns of a row, in order (docs/convert.md says what each holds). */
    static final List<String> COLUMNS = List.of("seq", "kind", "store", "address", "size", "ip", "instruction", "thread",
            "region", "symbol", "offset", "source");
    /**
     * The Parquet export's columns: the CSV's and the allocation and free stacks of the heap block a row lands in,
     * which a dictionary stores once per row group (in CSV text they would repeat on every row).
     */
    static final List<String> PARQUET_COLUMNS = Stream.concat(COLUMNS.stream(), Stream.of("allocation_stack", "free_stack"))
            .toList();

    /** The symbol id of an address memtrace cannot name: no symbol and no offset. */
    static final int NO_SYMBOL = -1;

    private static final int CACHE = 1 << 16;
    private final long[] dataAddress = new long[CACHE];
    private final int[] dataGeneration = new int[CACHE];
    private final int[] dataRegion = new int[CACHE], dataSymbol = new int[CACHE];
    private final long[] dataOffset = new long[CACHE];
    private final long[] codeAddress = new long[CACHE];
    private final int[] codeGeneration = new int[CACHE];
    private final int[] codeName = new int[CACHE], codeSource = new int[CACHE];
    /** Starts at 1: the arrays' zeros are stale. */
    private int generation = 1;
    /** The instruction of the row before, its name's id, and the generation it was named in: loops repeat one. */
    private long lastIp;
    private int lastInstruction, lastSource, lastIpGeneration;
    /**
     * The last heap block named: in [spanStart, spanEnd) region and symbol stay, and an address is at offset
     * address - spanBase ({@code spanEnd} 0 when none).
     */
    private long spanStart, spanEnd, spanBase;
    private int spanRegion, spanSymbol;

    /** By allocation number: 1 + the text id of the block's folded allocation stack, 0 when not seen. */
    private int[] blockStack = new int[1024];
    /** By allocation number: 1 + the text id of the folded stack of the call that released the block, 0 while live. */
    private int[] blockFreeStack = new int[1024];
    /** By symbol id: the text id of the stack of the block the symbol names, {@link #NO_SYMBOL} when none, 0 not looked up. */
    private int[] symbolStack = new int[1024];
    /** By symbol id, as symbolStack: the free stack of a released block's name ({@code <freed:…>}, {@code <unmap:…>}). */
    private int[] symbolFreeStack = new int[1024];
    private int spanStack, spanFreeStack;
    private final int[] dataStack = new int[CACHE], dataFreeStack = new int[CACHE];

    private final Interner texts = new Interner();
    private byte[][] utf8 = new byte[1024][];

    private final Naming naming;

    NamedRows(Naming naming) {
        this.naming = naming;
    }

    /**
     * One row. {@code kind} is the MadT letter (L, S, Y, W, G); {@code instruction}, {@code region} and
     * {@code symbol} are ids for {@link #text}, {@code symbol} {@link #NO_SYMBOL} when the address has no
     * name (its offset then means nothing); {@code source} the id of the instruction's {@code file:line},
     * {@link #NO_SYMBOL} when no line table covers it; {@code stack} the id of the allocation stack of the heap
     * block the address lies in ({@link #folded}), {@link #NO_SYMBOL} outside the heap's blocks; {@code freeStack}
     * the id of the stack of the call that released that block, {@link #NO_SYMBOL} while it is live.
     */
    abstract void row(long sequence, char kind, boolean store, long address, long size, long ip, int instruction,
                      int tid, int region, int symbol, long offset, int source, int stack, int freeStack);

    /** The name an id stands for. */
    final String text(int id) { return texts.text(id); }

    /** {@link #text} in UTF-8, made once per id: the Parquet writers' dictionary pages hold each name again. */
    final byte[] utf8(int id) {
        if (id >= utf8.length) utf8 = Arrays.copyOf(utf8, Math.max(2 * utf8.length, id + 1));
        byte[] b = utf8[id];
        if (b == null) utf8[id] = b = text(id).getBytes(StandardCharsets.UTF_8);
        return b;
    }

    @Override
    public final void access(Access t) {
        named(t.sequence(), t.store() ? 'S' : 'L', t.store(), t.address(), t.size(), t.ip(), t.ip(), t.tid());
    }

    @Override
    public final void block(long sequence, Event.Block b) {
        switch (b.op()) {
            case COPY -> {
                named(sequence, 'Y', false, b.source(), b.length(), b.ip(), b.lineAddress(), b.tid());
                named(sequence, 'Y', true, b.destination(), b.length(), b.ip(), b.lineAddress(), b.tid());
            }
            case STORE -> named(sequence, 'W', true, b.destination(), b.length(), b.ip(), b.lineAddress(), b.tid());
            case FETCH -> named(sequence, 'G', false, b.source(), b.length(), b.ip(), b.lineAddress(), b.tid());
        }
    }

    /**
     * Names change with every allocator call (a block named, one released); then the block's stacks are kept by
     * its allocation number, which the names of its accesses carry: the allocating call's, and the releasing
     * call's (free, munmap, or a realloc that moved the block) once it is released.
     */
    @Override
    public final void allocation(Allocation allocation) {
        namesChanged();
        String block = allocation.block();
        boolean released = block.startsWith("<freed:") || block.startsWith("<unmap:");
        if (released) {
            blockFreeStack = put(blockFreeStack, Block.number(block), () -> freeSite(allocation));
            return;
        }
        long number = Block.number(block);
        if (allocation.previous() != null) {
            long old = Block.number(DataName.of(allocation.previous()).symbol());
            if (old != number) blockFreeStack = put(blockFreeStack, old, () -> freeSite(allocation));
        }
        blockStack = put(blockStack, number, () -> folded(allocation.stack(), Block.site(block)));
    }

    /** Stores 1 + the text id of a folded stack under an allocation number (none for a number that is no block's). */
    private int[] put(int[] byNumber, long number, java.util.function.Supplier<String> stack) {
        if (number <= 0 || number >= Integer.MAX_VALUE - 8) return byNumber;
        if (number >= byNumber.length) byNumber = Arrays.copyOf(byNumber, (int) Math.max(2L * byNumber.length, number + 1));
        byNumber[(int) number] = 1 + texts.id(stack.get());
        return byNumber;
    }

    /** The releasing call's folded stack; its call site (its name names only the allocating one) at depth 1. */
    private String freeSite(Allocation allocation) {
        return folded(allocation.stack(), naming.code(allocation.event().caller()));
    }

    /**
     * A stack as flame graphs' folded lines spell it: outermost frame first, {@code ;} between frames
     * ({@code main+13(stacks.c:29);make_left+14(stacks.c:17);xmalloc+24(stacks.c:7)}); {@code site}, the call
     * site, when only that was recorded.
     */
    static String folded(Stack stack, String site) {
        if (stack == null || !stack.deep() || stack.names().isEmpty()) return site;
        StringBuilder b = new StringBuilder();
        for (int i = stack.names().size() - 1; i >= 0; i--) b.append(stack.names().get(i)).append(i > 0 ? ";" : "");
        return b.toString();
    }

    /** The stack text id of the block a symbol names, looked up once per symbol. */
    private int stackOf(int symbol) {
        if (symbol == NO_SYMBOL) return NO_SYMBOL;
        if (symbol >= symbolStack.length) symbolStack = Arrays.copyOf(symbolStack, Math.max(2 * symbolStack.length, symbol + 1));
        return cached(symbolStack, symbol, blockStack);
    }

    /** The free stack text id of the released block a symbol names ({@link #NO_SYMBOL} for a live one's name). */
    private int freeStackOf(int symbol) {
        if (symbol == NO_SYMBOL) return NO_SYMBOL;
        if (symbol >= symbolFreeStack.length)
            symbolFreeStack = Arrays.copyOf(symbolFreeStack, Math.max(2 * symbolFreeStack.length, symbol + 1));
        String name = text(symbol);
        if (!name.startsWith("<freed:") && !name.startsWith("<unmap:")) return NO_SYMBOL;
        return cached(symbolFreeStack, symbol, blockFreeStack);
    }

    /** bySymbol[symbol] (1 + id, -1 none, 0 not looked up), looked up in byNumber by the name's allocation number. */
    private int cached(int[] bySymbol, int symbol, int[] byNumber) {
        int s = bySymbol[symbol];
        if (s != 0) return s > 0 ? s - 1 : NO_SYMBOL;
        long number = Block.number(text(symbol));
        int id = number > 0 && number < byNumber.length && byNumber[(int) number] > 0 ? byNumber[(int) number] - 1 : NO_SYMBOL;
        bySymbol[symbol] = id == NO_SYMBOL ? -1 : id + 1;
        return id;
    }

    @Override
    public final void namesChanged() {
        generation++;
        spanEnd = 0;
    }

    /** {@code lineAt}: where the source line is looked up, {@code ip} but for a block's call (Event.Block#lineAddress). */
    private void named(long sequence, char kind, boolean store, long address, long size, long ip, long lineAt, int tid) {
        if (ip != lastIp || lastIpGeneration != generation) {
            int codeSlot = (int) ((ip * 0x9E3779B97F4A7C15L) >>> 48);
            if (codeGeneration[codeSlot] != generation || codeAddress[codeSlot] != ip) {
                codeGeneration[codeSlot] = generation;
                codeAddress[codeSlot] = ip;
                codeName[codeSlot] = texts.id(naming.code(ip));
                String line = naming.source(ip);
                codeSource[codeSlot] = line == null ? NO_SYMBOL : texts.id(line);
            }
            lastIp = ip;
            lastIpGeneration = generation;
            lastInstruction = codeName[codeSlot];
            lastSource = codeSource[codeSlot];
        }
        int instruction = lastInstruction, source = lastSource;
        if (lineAt != ip) {
            // a block's call, rare: its line is not the one cached for an access at its return address
            String line = naming.source(lineAt);
            source = line == null ? NO_SYMBOL : texts.id(line);
        }
        if (address >= spanStart && address < spanEnd) {
            row(sequence, kind, store, address, size, ip, instruction, tid, spanRegion, spanSymbol, address - spanBase,
                    source, spanStack, spanFreeStack);
            return;
        }
        int slot = (int) ((address * 0x9E3779B97F4A7C15L) >>> 48);
        if (dataGeneration[slot] != generation || dataAddress[slot] != address) name(slot, address);
        row(sequence, kind, store, address, size, ip, instruction, tid, dataRegion[slot], dataSymbol[slot], dataOffset[slot], source,
                dataStack[slot], dataFreeStack[slot]);
    }

    /** Fills the data slot of an address; a heap block's also starts a span. */
    private void name(int slot, long address) {
        DataName name = DataName.of(naming.object(address));
        int region = texts.id(naming.region(address));
        int symbol = name.symbol() == null ? NO_SYMBOL : texts.id(name.symbol());
        long until = name.symbol() == null ? address + 1 : naming.sameObjectUntil(address);
        int stack = stackOf(symbol), freeStack = freeStackOf(symbol);
        if (until > address + 1) {
            spanStack = stack;
            spanFreeStack = freeStack;
            spanStart = address;
            spanEnd = until;
            spanBase = address - name.offset();
            spanRegion = region;
            spanSymbol = symbol;
        }
        dataGeneration[slot] = generation;
        dataAddress[slot] = address;
        dataRegion[slot] = region;
        dataSymbol[slot] = symbol;
        dataOffset[slot] = name.offset();
        dataStack[slot] = stack;
        dataFreeStack[slot] = freeStack;
    }
}
