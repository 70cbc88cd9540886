package org.memtrace.symbols;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.memtrace.event.Event;

/**
 * The target's address space as the event stream describes it: loaded modules (MT_MODULE), the memory map
 * (MT_MAPPING) and the traced ranges (MT_RANGE). It names code and global data through the modules' symbols
 * and anything else through the region that holds it. An exec record changes nothing: a successful exec
 * ends the trace (the new image runs untraced), and after a failed one the same program goes on.
 */
public final class AddressSpace {

    /**
     * A named stretch of memory ending at {@code end}; offsets of {@code region+off} names count from
     * {@code start}: a module's lowest address, a file mapping's file offset 0, else the region's first byte.
     */
    public record Region(String name, long start, long end) {}

    /** A distinct instance, compared by identity: the cached answer "no line here". */
    @SuppressWarnings("StringOperationCanBeSimplified")
    private static final String NO_SOURCE = new String("");

    private final ModuleImages images;
    private final List<LoadedModule> modules = new ArrayList<>();
    /** The main program (the module the loader reports with an empty path): its objects keep their names. */
    private LoadedModule program;
    private final ObjectRanks ranks = new ObjectRanks();
    private final List<Event.Module> unnamedModules = new ArrayList<>();
    /** When each module was last reported (a count of reports): among modules over the same addresses, the latest names them. */
    private final Map<LoadedModule, Long> generation = new HashMap<>();
    private long reports;
    private final MemoryMap memoryMap = new MemoryMap();
    private ModuleSegments segments = ModuleSegments.EMPTY;
    private final AddressCache codeNames = new AddressCache();
    /** {@code file:line} per cached address; {@link #NO_SOURCE} remembers that an address has none. */
    private final AddressCache sourceNames = new AddressCache();

    /**
     * Names functions and objects as their symbol tables spell them ({@code _ZN2ns3Box3putEi}), for
     * {@code --no-demangle}; call it before the first event, as modules already read keep their names.
     */
    public void keepRawNames() {
        images.keepRawNames();
    }

    public AddressSpace(DebugFiles debugFiles) {
        this.images = new ModuleImages(debugFiles);
    }

    /**
     * From now on, each new module's line table and variable types are read on two background threads as
     * soon as the module is seen, not when the first access asks for them. In a live run the modules come
     * first, as the program starts, and libc's separate debug file alone costs 1-1.5 s of parsing: read
     * ahead, it overlaps the program's run instead of delaying the trace's end (docs/madt.md, "Start-up").
     * Both are read once either way ({@link ModuleImage#lines()} and {@link ModuleImage#types()} are
     * synchronized): an access that comes first waits for the read under way.
     */
    public void readDebugInfoAhead() {
        images.readDebugInfoAhead();
    }

    public AddressSpace() {
        this(DebugFiles.system());
    }

    public void observe(Event event) {
        switch (event) {
            case Event.Module m -> addModule(m);
            case Event.Mapping m -> addMapping(m);
            case Event.Range r -> memoryMap.changeRange(r);
            default -> { }
        }
    }

    /** Registers an ELF file under a path, for replays on another machine and for tests. */
    public void preload(String path, ModuleImage image) {
        images.preload(path, image);
    }

    public List<LoadedModule> modules() {
        return List.copyOf(modules);
    }

    public LoadedModule moduleAt(long address) {
        int i = segments.index(address);
        return i < 0 ? null : segments.module(i);
    }

    /**
     * A code address as {@code function+offset} (decimal, as MadT prints it); without a covering symbol,
     * {@code module+0xVADDR} (the ELF virtual address, which objdump and addr2line take), outside any module
     * {@code [region]+0xOFFSET}, and with nothing known the bare {@code 0xADDRESS}.
     */
    public String code(long ip) {
        String cached = codeNames.get(ip);
        if (cached != null) return cached;
        LoadedModule m = moduleAt(ip);
        if (m == null) {
            // Not cached: the names of code outside modules follow mappings and ranges, which change often.
            Region r = region(ip);
            return r != null ? r.name() + "+0x" + Long.toHexString(ip - r.start()) : "0x" + Long.toHexString(ip);
        }
        String f = m.image().symbols().function(ip - m.bias());
        String name = f != null ? f : m.name() + "+0x" + Long.toHexString(ip - m.bias());
        codeNames.put(ip, name);
        return name;
    }

    /**
     * The source line of the instruction at run-time address {@code ip}: the line table of the module holding
     * it, at {@code ip} minus the module's load bias. Empty outside modules, in a module without line
     * information (compiled without {@code -g}, no debug file, a corrupt table: see
     * {@link ModuleImage#lines()}) and between the table's sequences.
     */
    public Optional<SourceLine> sourceLine(long ip) {
        LoadedModule m = moduleAt(ip);
        return m == null ? Optional.empty() : m.image().lines().lineOf(ip - m.bias());
    }

    /**
     * The frames a return address stands for, innermost first: with the module's inlined calls at the call
     * instruction ({@code returnAddress - 1}, {@link DwarfInlines}), one frame per inlined function, named
     * {@code function(file:line)} without an offset (its code has no address of its own), the first at the
     * line the line table gives, each further one at the line its inner call was made from; then the frame of
     * the function the code lies in, {@code function+offset(file:line)}, at the line the outermost inlined call
     * was made from. Without inlined calls there, the one frame {@code function+offset(file:line)} as before.
     * As {@code addr2line -f -i} lists them.
     */
    public List<String> frames(long returnAddress) {
        return frames(returnAddress - 1, code(returnAddress));
    }

    /**
     * An access's source, the last field of a symbolic {@code L}/{@code S} line (docs/trace-format.md, "Source
     * lines"): the instruction's {@code file:line} ({@link #source}), or null; when the instruction lies in
     * code inlined there, the frames {@link #frames} would give for it, innermost first, joined by {@code ;}
     * (a field holds no space): {@code get(inl.c:6);sum(inl.c:12);main+57(inl.c:20)}, as {@code addr2line -f
     * -i} lists them.
     */
    public String inlinedSource(long ip) {
        List<String> frames = frames(ip, null);
        return frames.size() == 1 ? source(ip) : String.join(";", frames);
    }

    /** The frames of the instruction at {@code at}, the last one named {@code code} (null: {@link #code} of {@code at}). */
    private List<String> frames(long at, String code) {
        String source = source(at);
        LoadedModule m = moduleAt(at);
        List<DwarfInlines.Inlined> chain = m == null ? List.of() : m.image().inlines().chain(at - m.bias());
        if (code == null) code = code(at);
        if (chain.isEmpty()) return List.of(source == null ? code : code + '(' + source + ')');
        List<String> frames = new ArrayList<>(chain.size() + 1);
        for (DwarfInlines.Inlined inlined : chain) {
            frames.add(source == null ? inlined.name() : inlined.name() + '(' + source + ')');
            source = inlined.callFile() == null || inlined.callLine() == 0 ? null : inlined.callFile() + ':' + inlined.callLine();
        }
        frames.add(source == null ? code : code + '(' + source + ')');
        return frames;
    }

    /**
     * Where a file that {@link #source} named lies ({@link LineTable#location}), or null when no module's
     * table says: asks only the tables already read, which hold every name {@link #source} gave.
     */
    public String sourceLocation(String file) {
        return images.sourceLocation(file);
    }

    /**
     * {@link #sourceLine} as {@code file:line} ({@code src/main.c:12}), or null when the address has none;
     * remembered per address, as {@link #code} is, because a trace names the same instructions again and again.
     */
    public String source(long ip) {
        String cached = sourceNames.get(ip);
        if (cached == null) {
            LoadedModule m = moduleAt(ip);
            if (m == null) return null;
            cached = m.image().lines().lineOf(ip - m.bias()).map(SourceLine::toString).orElse(NO_SOURCE);
            sourceNames.put(ip, cached);
        }
        return cached == NO_SOURCE ? null : cached;
    }

    /**
     * A global or static variable of some module as {@code name+offset}, or null when no object covers the
     * address. The name identifies the object among all the modules' (docs/naming.md, "Objects with one
     * name"): {@code table@file2.c+8} inside its module, {@code table@libfoo.so+8} when an earlier module
     * has a {@code table} too.
     */
    public String object(long address) {
        int i = segments.index(address);
        if (i < 0) return null;
        LoadedModule m = segments.module(i);
        SymbolIndex.Symbol s = m.image().symbols().objectAt(address - m.bias());
        if (s == null) return null;
        return s.unique() + ranks.qualifier(m, s) + '+' + (address - m.bias() - s.start());
    }

    /**
     * A global or static variable named down to the field and index when its module has DWARF types
     * ({@code table[3].value+0}, {@code grid[2][5]+4}), else as {@link #object}; null when no object covers it.
     */
    public String variable(long address) {
        int i = segments.index(address);
        if (i < 0) return null;
        LoadedModule m = segments.module(i);
        SymbolIndex.Symbol s = m.image().symbols().objectAt(address - m.bias());
        return s == null ? null : m.image().variable(address - m.bias(), ranks.qualifier(m, s));
    }

    /**
     * The region holding an address: the module's file name inside a loaded module, else the traced range
     * the agent reported (by kind), else the memory-map line ({@code [heap]}, {@code [stack]}, {@code [anon]}
     * for anonymous memory, the file name for a file mapping); null when nothing is known.
     */
    public Region region(long address) {
        int i = segments.index(address);
        return i >= 0 ? segments.region(i) : memoryMap.region(address);
    }

    /** Where {@link #region} gives the same region: every address in [{@code start}, {@code end}). */
    public record RegionSpan(Region region, long start, long end) {}

    /**
     * {@link #region} of {@code address} with the stretch around it that has that region too (a module's
     * segment; a traced range or a mapping, clipped where a segment or range that comes first begins); null
     * when nothing is known.
     */
    public RegionSpan regionSpan(long address) {
        int i = segments.index(address);
        if (i >= 0) return new RegionSpan(segments.region(i), segments.start(i), segments.end(i));
        return memoryMap.regionSpan(address, segments.gapStart(address), segments.gapEnd(address));
    }

    /** Whether {@code address} lies in a loaded module's segment, where its globals are named. */
    public boolean inModule(long address) {
        return segments.index(address) >= 0;
    }

    /** Where {@link #variable} and {@link #object} are {@code base+(address - origin)} for every address of [{@code start}, {@code end}). */
    public record ObjectSpan(String base, long origin, long start, long end, Region region) {}

    /**
     * In a module's segment, the stretch around {@code address} named alike: a global without a DWARF type
     * (so without fields), or the module's region between globals; for a typed global, whose bytes are named
     * by field and index, the global's own bytes with a null {@code base}; null outside modules.
     */
    public ObjectSpan moduleSpan(long address) {
        int i = segments.index(address);
        if (i < 0) return null;
        LoadedModule m = segments.module(i);
        SymbolIndex.ObjectRun run = m.image().symbols().objectRunAt(address - m.bias());
        long start = Math.max(segments.start(i), run.start() == Long.MIN_VALUE ? Long.MIN_VALUE : m.bias() + run.start());
        long end = Math.min(segments.end(i), run.end() == Long.MAX_VALUE ? Long.MAX_VALUE : m.bias() + run.end());
        Region region = segments.region(i);
        SymbolIndex.Symbol s = run.symbol();
        if (s == null) return new ObjectSpan(region.name(), region.start(), start, end, region);
        if (m.image().types().typed(s.start())) return new ObjectSpan(null, 0, start, end, region);
        return new ObjectSpan(s.name() + s.qualifier() + ranks.qualifier(m, s), m.bias() + s.start(), start, end, region);
    }

    /**
     * The bytes of the loaded file at a run-time address (code, read-only data), at most {@code max}, read
     * from the ELF file's PT_LOAD contents; empty when no module file backs the address.
     */
    public ByteBuffer bytesAt(long address, int max) {
        LoadedModule m = moduleAt(address);
        return m == null ? ByteBuffer.allocate(0) : m.image().bytesAt(address - m.bias(), max);
    }

    /** {@link #bytesAt} as an array, for decoders that take one. */
    public byte[] codeBytes(long address, int max) {
        ByteBuffer b = bytesAt(address, max);
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return bytes;
    }

    private void addModule(Event.Module m) {
        String path = m.path();
        if (path.isEmpty()) {
            path = memoryMap.fileMappedAtOrAbove(m.loadBias());
            if (path == null) {
                unnamedModules.add(m);
                return;
            }
        }
        ModuleImage image = images.image(path);
        if (m.buildId().length > 0 && image.elf().flatMap(ElfFile::buildId).filter(id -> !Arrays.equals(id, m.buildId())).isPresent()) {
            // The file changed since the recording (a replay after an upgrade): its symbols would lie.
            image = ModuleImage.unreadable(path, "build-id differs from the recorded one");
        }
        for (LoadedModule known : modules) {
            if (known.image() == image && known.bias() == m.loadBias()) {
                // reported again: a dlclose and a dlopen of the same file at the same place, maybe with
                // another library there in between, which this one now hides again
                if (generation.get(known) != reports) {
                    generation.put(known, ++reports);
                    rebuildSegments();
                }
                return;
            }
        }
        long base = Long.MAX_VALUE;
        long end = 0;
        for (ElfSegment s : image.loadSegments()) {
            base = Math.min(base, m.loadBias() + (s.vaddr() & -ModuleSegments.PAGE));
            end = Math.max(end, m.loadBias() + s.vaddr() + s.memSize());
        }
        if (base == Long.MAX_VALUE) return;
        LoadedModule loaded = new LoadedModule(image, m.loadBias(), base, end);
        modules.add(loaded);
        generation.put(loaded, ++reports);
        if (m.path().isEmpty() && program == null) program = loaded;
        ranks.rank(modules, program);
        rebuildSegments();
    }

    private void rebuildSegments() {
        segments = ModuleSegments.of(modules, generation);
        codeNames.clear();
        sourceNames.clear();
    }

    private void addMapping(Event.Mapping m) {
        memoryMap.addMapping(m);
        if (!unnamedModules.isEmpty()) {
            List<Event.Module> waiting = List.copyOf(unnamedModules);
            unnamedModules.clear();
            waiting.forEach(this::addModule);
        }
    }
}
