package org.memtrace.trace;

import org.memtrace.event.Event;

/**
 * How a trace writer turns numbers into the names of a MadT symbolic line. An implementation follows the
 * stream: the interpretation stage hands it, in order, every event that can change a name (all but faults,
 * probe records and block operations) through {@link #observe} before any analysis sees that event, so a
 * name always reflects the program's state at that point (a freed block is named {@code <freed:…>} from
 * the free on).
 */
public interface Naming {

    /** Updates the state (modules, mappings, heap blocks) with the next event of the stream. */
    void observe(Event event);

    /** The region holding a data address, as the trace's second field: {@code [heap]}, {@code libc.so.6}, … */
    String region(long address);

    /**
     * A data address as {@code symbol+offset}: {@code table+40}, {@code <malloc0013@f+45>+524}, {@code [anon]+16};
     * a global with DWARF types down to the field and index, {@code table[3].value+0}.
     */
    String data(long address);

    /**
     * A data address as the object and the byte offset in it, without the field and index path that
     * {@link #data} may add ({@code table+40} where data says {@code table[3].value+0}): the name to group
     * accesses per object by. Namings without fields keep the default.
     */
    default String object(long address) {
        return data(address);
    }

    /**
     * Where the run of addresses that {@link #object} and {@link #region} name like {@code address} ends at
     * the latest (exclusive): within [address, end) both names keep their object and region and only the
     * offset grows. Lets an analysis name a walk over an array once. {@code address + 1} when unknown, the
     * default.
     */
    default long sameObjectUntil(long address) {
        return address + 1;
    }

    /**
     * Addresses named alike: for every address {@code a} in [{@code start}, {@code end}), {@link #data} and
     * {@link #object} are {@code base+(a - origin)} and {@link #region} is {@code region}. What a heap block's
     * piece or a stretch of a region between blocks is; lets a writer name any address in it by one lookup.
     */
    record Span(String base, long origin, long start, long end, String region) {
        public boolean contains(long address) {
            return address >= start && address < end;
        }

        /** False for a span without a base: its addresses are not named {@code base+offset} (a typed global). */
        public boolean named() { return base != null; }
    }

    /**
     * The span of addresses named like {@code address}, or null when its names are not {@code base+offset}
     * or the naming cannot tell (the default). A span whose {@code base} is null ({@link Span#named} false)
     * says that no address of it has one: a typed global, which may be named down to a field, so that a
     * cache asks once per global, not once per address. It holds as long as the names do: until the next
     * event the naming observes that may change them ({@link #changedByAllocation} tells where).
     */
    default Span span(long address) {
        return null;
    }

    /** A code address as {@code function+offset}, or the module-relative form when no symbol covers it. */
    String code(long ip);

    /**
     * The source line of a code address as {@code file:line} ({@code src/main.c:12}), or null when no line
     * table covers it (no {@code -g}, outside modules). Namings that know no source lines keep the default.
     */
    default String source(long ip) {
        return null;
    }

    /**
     * An access's source as the trace shows it (docs/trace-format.md, "Source lines"): {@link #source}, or,
     * where the instruction lies in inlined code, its frames innermost first, {@code ;} between them:
     * {@code get(inl.c:6);sum(inl.c:12);main+57(inl.c:20)}. Namings that know no inlining give {@link #source}.
     */
    default String inlinedSource(long ip) {
        return source(ip);
    }

    /**
     * Where the source file {@code file} (as {@link #source} names it) lies when it is named relative to its
     * compilation directory and the debug information says which that is: the joined path; else null.
     */
    default String sourceLocation(String file) {
        return null;
    }

    /** The forged name of the block an allocation event created, as in Listing 2: {@code <malloc0006@fMallocHandle+45>}. */
    String block(Event.Alloc allocation);

    /**
     * The allocator call's stack, innermost return address first, element 0 its call site; namings that know
     * no stacks give the call site alone. Meant for the event just observed (docs/stacks.md).
     */
    default long[] stack(Event.Alloc allocation) {
        return new long[] {allocation.caller()};
    }

    /**
     * An access's stack (docs/stacks.md, "Access stacks"): its instruction {@code ip}, then the return addresses
     * recorded above it ({@link org.memtrace.event.Event.Context#callers}) as far as they are trusted, innermost
     * first; namings that know no stacks give the instruction alone.
     */
    default long[] accessStack(long ip, long[] callers) {
        return new long[] {ip};
    }

    /**
     * A frame of a stack as {@code function+offset}, with {@code (file:line)} when the module has a line for
     * the call: the line of the call instruction, looked up one byte before the return address.
     */
    default String frame(long returnAddress) {
        String source = source(returnAddress - 1);
        String code = code(returnAddress);
        return source == null ? code : code + '(' + source + ')';
    }

    /**
     * The frames a return address stands for, innermost first: the functions inlined at the call, then the
     * function it lies in (docs/stacks.md, "Inlined calls"); namings that know no inlining give {@link #frame}.
     */
    default java.util.List<String> frames(long returnAddress) {
        return java.util.List.of(frame(returnAddress));
    }

    /** A range of addresses, {@code start} inclusive, {@code end} exclusive. */
    @FunctionalInterface
    interface Ranges {
        void range(long start, long end);
    }

    /**
     * Where the allocator event observed last may have changed what {@link #region}, {@link #data} and
     * {@link #object} return: hands {@code to} each such range and returns true. Returns false, handing
     * nothing, when the naming cannot tell, and then any data name may have changed (the default). Lets a
     * cache of names keep what lies outside a freed block.
     */
    default boolean changedByAllocation(Ranges to) {
        return false;
    }

    /** What {@link #block} returns for an event whose block it does not know; the trace prints the address instead. */
    String NO_BLOCK = "(nil)";
}
