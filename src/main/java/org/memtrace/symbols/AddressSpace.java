package org.memtrace.symbols;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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

    private static final long PAGE = 4096;
    private static final int CACHE_SIZE = 1 << 13;
    /** A distinct instance, compared by identity: the cached answer "no line here". */
    @SuppressWarnings("StringOperationCanBeSimplified")
    private static final String NO_SOURCE = new String("");

    private final DebugFiles debugFiles;
    private final Map<String, ModuleImage> images = new HashMap<>();
    private final List<LoadedModule> modules = new ArrayList<>();
    /** The main program (the module the loader reports with an empty path): its objects keep their names. */
    private LoadedModule program;
    /** Per module, the plain object names that a module ranked before it has too (see {@link #rankModules}). */
    private final Map<LoadedModule, Set<String>> clashing = new HashMap<>();
    /** Each file's object names, made once: {@link #rankModules} runs again at every module. */
    private final Map<ModuleImage, Set<String>> objectNames = new HashMap<>();
    private final List<Event.Module> unnamedModules = new ArrayList<>();
    /** When each module was last reported (a count of reports): among modules over the same addresses, the latest names them. */
    private final Map<LoadedModule, Long> generation = new HashMap<>();
    private long reports;
    private final Intervals<Region> mappings = new Intervals<>();
    private final Intervals<Region> ranges = new Intervals<>();
    /** File mappings at file offset 0 by start address: where each file's first page was mapped. */
    private final TreeMap<Long, String> fileStarts = new TreeMap<>();

    private long[] segmentStarts = new long[0];
    private long[] segmentEnds = new long[0];
    private LoadedModule[] segmentModules = new LoadedModule[0];
    private Region[] segmentRegions = new Region[0];

    private final long[] codeKeys = new long[CACHE_SIZE];
    private final String[] codeNames = new String[CACHE_SIZE];
    private final long[] sourceKeys = new long[CACHE_SIZE];
    /** {@code file:line} per cached address; {@link #NO_SOURCE} remembers that an address has none. */
    private final String[] sourceNames = new String[CACHE_SIZE];

    /** Set for a live run: see {@link #readDebugInfoAhead}. */
    private ExecutorService ahead;

    /** How C++ names are spelled: demangled by default, raw after {@link #keepRawNames()}. */
    private Demangler demangler = Demangler.system();

    /**
     * Names functions and objects as their symbol tables spell them ({@code _ZN2ns3Box3putEi}), for
     * {@code --no-demangle}; call it before the first event, as modules already read keep their names.
     */
    public void keepRawNames() {
        demangler = Demangler.none();
    }

    public AddressSpace(DebugFiles debugFiles) {
        this.debugFiles = debugFiles;
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
        if (ahead == null) {
            // a roomy stack: the DWARF readers recurse along the debug information's nesting
            ahead = Executors.newFixedThreadPool(2, r -> Thread.ofPlatform().daemon().name("memtrace-debug-info")
                    .stackSize(16 << 20).unstarted(r));
        }
    }

    public AddressSpace() {
        this(DebugFiles.system());
    }

    public void observe(Event event) {
        switch (event) {
            case Event.Module m -> addModule(m);
            case Event.Mapping m -> addMapping(m);
            case Event.Range r -> changeRange(r);
            default -> { }
        }
    }

    /** Registers an ELF file under a path, for replays on another machine and for tests. */
    public void preload(String path, ModuleImage image) {
        images.put(path, image);
    }

    public List<LoadedModule> modules() {
        return List.copyOf(modules);
    }

    public LoadedModule moduleAt(long address) {
        int i = segmentIndex(address);
        return i < 0 ? null : segmentModules[i];
    }

    /**
     * A code address as {@code function+offset} (decimal, as MadT prints it); without a covering symbol,
     * {@code module+0xVADDR} (the ELF virtual address, which objdump and addr2line take), outside any module
     * {@code [region]+0xOFFSET}, and with nothing known the bare {@code 0xADDRESS}.
     */
    public String code(long ip) {
        int slot = (int) ((ip * 0x9E3779B97F4A7C15L) >>> 51);
        String cached = codeNames[slot];
        if (cached != null && codeKeys[slot] == ip) return cached;
        LoadedModule m = moduleAt(ip);
        if (m == null) {
            // Not cached: the names of code outside modules follow mappings and ranges, which change often.
            Region r = region(ip);
            return r != null ? r.name() + "+0x" + Long.toHexString(ip - r.start()) : "0x" + Long.toHexString(ip);
        }
        String f = m.image().symbols().function(ip - m.bias());
        String name = f != null ? f : m.name() + "+0x" + Long.toHexString(ip - m.bias());
        codeKeys[slot] = ip;
        codeNames[slot] = name;
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
        for (ModuleImage image : images.values()) {
            LineTable t = image.linesIfRead();
            Optional<String> at = t == null ? Optional.empty() : t.location(file);
            if (at.isPresent()) return at.get();
        }
        return null;
    }

    /**
     * {@link #sourceLine} as {@code file:line} ({@code src/main.c:12}), or null when the address has none;
     * remembered per address, as {@link #code} is, because a trace names the same instructions again and again.
     */
    public String source(long ip) {
        int slot = (int) ((ip * 0x9E3779B97F4A7C15L) >>> 51);
        String cached = sourceNames[slot];
        if (cached == null || sourceKeys[slot] != ip) {
            LoadedModule m = moduleAt(ip);
            if (m == null) return null;
            cached = m.image().lines().lineOf(ip - m.bias()).map(SourceLine::toString).orElse(NO_SOURCE);
            sourceKeys[slot] = ip;
            sourceNames[slot] = cached;
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
        int i = segmentIndex(address);
        if (i < 0) return null;
        LoadedModule m = segmentModules[i];
        SymbolIndex.Symbol s = m.image().symbols().objectAt(address - m.bias());
        if (s == null) return null;
        return s.unique() + moduleQualifier(m, s) + '+' + (address - m.bias() - s.start());
    }

    /** {@code @module} for an object whose plain name a module ranked before its own has too; else empty. */
    private String moduleQualifier(LoadedModule m, SymbolIndex.Symbol s) {
        if (clashing.isEmpty()) return "";   // the usual case, without hashing the module per name
        Set<String> clashes = clashing.get(m);
        return clashes != null && clashes.contains(s.name()) ? "@" + m.name() : "";
    }

    /**
     * A global or static variable named down to the field and index when its module has DWARF types
     * ({@code table[3].value+0}, {@code grid[2][5]+4}), else as {@link #object}; null when no object covers it.
     */
    public String variable(long address) {
        int i = segmentIndex(address);
        if (i < 0) return null;
        LoadedModule m = segmentModules[i];
        SymbolIndex.Symbol s = m.image().symbols().objectAt(address - m.bias());
        return s == null ? null : m.image().variable(address - m.bias(), moduleQualifier(m, s));
    }

    /**
     * The region holding an address: the module's file name inside a loaded module, else the traced range
     * the agent reported (by kind), else the memory-map line ({@code [heap]}, {@code [stack]}, {@code [anon]}
     * for anonymous memory, the file name for a file mapping); null when nothing is known.
     */
    public Region region(long address) {
        int i = segmentIndex(address);
        if (i >= 0) return segmentRegions[i];
        Intervals.Span<Region> s = ranges.get(address);
        if (s != null) return s.value();
        s = mappings.get(address);
        return s != null ? s.value() : null;
    }

    /** Where {@link #region} gives the same region: every address in [{@code start}, {@code end}). */
    public record RegionSpan(Region region, long start, long end) {}

    /**
     * {@link #region} of {@code address} with the stretch around it that has that region too (a module's
     * segment; a traced range or a mapping, clipped where a segment or range that comes first begins); null
     * when nothing is known.
     */
    public RegionSpan regionSpan(long address) {
        int i = segmentIndex(address);
        if (i >= 0) return new RegionSpan(segmentRegions[i], segmentStarts[i], segmentEnds[i]);
        long[] starts = segmentStarts;
        int below = Arrays.binarySearch(starts, address);
        if (below < 0) below = -below - 2;
        // between segments: they are disjoint and sorted, so the one below ends by the address
        long lo = below >= 0 ? segmentEnds[below] : Long.MIN_VALUE;
        long hi = below + 1 < starts.length ? starts[below + 1] : Long.MAX_VALUE;
        Intervals.Span<Region> s = ranges.get(address);
        if (s != null) return new RegionSpan(s.value(), Math.max(lo, s.start()), Math.min(hi, s.end()));
        s = mappings.get(address);
        if (s == null) return null;
        lo = Math.max(lo, Math.max(s.start(), ranges.gapStart(address)));
        hi = Math.min(hi, Math.min(s.end(), ranges.gapEnd(address)));
        return new RegionSpan(s.value(), lo, hi);
    }

    /** Whether {@code address} lies in a loaded module's segment, where its globals are named. */
    public boolean inModule(long address) {
        return segmentIndex(address) >= 0;
    }

    /** Where {@link #variable} and {@link #object} are {@code base+(address - origin)} for every address of [{@code start}, {@code end}). */
    public record ObjectSpan(String base, long origin, long start, long end, Region region) {}

    /**
     * In a module's segment, the stretch around {@code address} named alike: a global without a DWARF type
     * (so without fields), or the module's region between globals; for a typed global, whose bytes are named
     * by field and index, the global's own bytes with a null {@code base}; null outside modules.
     */
    public ObjectSpan moduleSpan(long address) {
        int i = segmentIndex(address);
        if (i < 0) return null;
        LoadedModule m = segmentModules[i];
        SymbolIndex.ObjectRun run = m.image().symbols().objectRunAt(address - m.bias());
        long start = Math.max(segmentStarts[i], run.start() == Long.MIN_VALUE ? Long.MIN_VALUE : m.bias() + run.start());
        long end = Math.min(segmentEnds[i], run.end() == Long.MAX_VALUE ? Long.MAX_VALUE : m.bias() + run.end());
        Region region = segmentRegions[i];
        SymbolIndex.Symbol s = run.symbol();
        if (s == null) return new ObjectSpan(region.name(), region.start(), start, end, region);
        if (m.image().types().typed(s.start())) return new ObjectSpan(null, 0, start, end, region);
        return new ObjectSpan(s.name() + s.qualifier() + moduleQualifier(m, s), m.bias() + s.start(), start, end, region);
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

    /** The segment the last lookup found: a trace's accesses come in runs over one module's data. */
    private int lastSegment;

    private int segmentIndex(long address) {
        long[] starts = segmentStarts, ends = segmentEnds;
        int i = lastSegment;
        // checked against the current arrays: after modules change, a stale index costs only the search
        if (i < starts.length && i < ends.length && address >= starts[i] && address < ends[i]) return i;
        i = Arrays.binarySearch(starts, address);
        if (i < 0) i = -i - 2;
        if (i < 0 || address >= ends[i]) return -1;
        lastSegment = i;
        return i;
    }

    /**
     * A read ahead that fails leaves nothing behind: the first access that needs the result reads it again
     * on the consumer's thread, where a failure is handled and reported as it always was.
     */
    private static void quietly(Runnable read) {
        try {
            read.run();
        } catch (RuntimeException | StackOverflowError e) {
            // see above
        }
    }

    private void addModule(Event.Module m) {
        String path = m.path();
        if (path.isEmpty()) {
            path = fileMappedAtOrAbove(m.loadBias());
            if (path == null) {
                unnamedModules.add(m);
                return;
            }
        }
        final String file = path;
        ModuleImage image = images.computeIfAbsent(file, p -> {
            ModuleImage loaded = ModuleImage.load(p, debugFiles, demangler);
            if (ahead != null) {
                ahead.execute(() -> quietly(loaded::lines));
                ahead.execute(() -> quietly(loaded::types));
            }
            return loaded;
        });
        if (m.buildId().length > 0 && image.elf().flatMap(ElfFile::buildId).filter(id -> !Arrays.equals(id, m.buildId())).isPresent()) {
            // The file changed since the recording (a replay after an upgrade): its symbols would lie.
            image = ModuleImage.unreadable(file, "build-id differs from the recorded one");
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
            base = Math.min(base, m.loadBias() + (s.vaddr() & -PAGE));
            end = Math.max(end, m.loadBias() + s.vaddr() + s.memSize());
        }
        if (base == Long.MAX_VALUE) return;
        LoadedModule loaded = new LoadedModule(image, m.loadBias(), base, end);
        modules.add(loaded);
        generation.put(loaded, ++reports);
        if (m.path().isEmpty() && program == null) program = loaded;
        rankModules();
        rebuildSegments();
    }

    /**
     * The loader reports the main program with an empty name. Its first page is the file mapped at offset 0
     * at the load bias (PIE) or, for a fixed-address executable (bias 0), the lowest file mapping.
     */
    private String fileMappedAtOrAbove(long bias) {
        Map.Entry<Long, String> e = fileStarts.ceilingEntry(bias);
        return e == null ? null : e.getValue();
    }

    /**
     * Objects are told apart across modules by rank: the main program first, then the others in the order
     * they were loaded. An object whose plain name (without its qualifier inside the module) a module ranked
     * before its own also defines is qualified with its module's file name after any qualifier it has
     * ({@code table@libdup.so}, {@code table@lib.c@libdup.so}); the first module keeps its names. Depends on the modules loaded, never
     * on where: the same program with the same libraries names its objects the same in every run.
     */
    private void rankModules() {
        List<LoadedModule> ranked = new ArrayList<>(modules);
        if (program != null) {
            ranked.remove(program);
            ranked.addFirst(program);
        }
        clashing.clear();
        Set<String> seen = new HashSet<>();
        Set<ModuleImage> done = new HashSet<>();
        for (LoadedModule m : ranked) {
            if (!done.add(m.image())) continue; // the same file twice: the same objects, nothing to tell apart
            Set<String> mine = objectNames.computeIfAbsent(m.image(), image -> {
                Set<String> names = new HashSet<>();
                for (SymbolIndex.Symbol s : image.symbols().objects()) names.add(s.name());
                return names;
            });
            Set<String> clashes = new HashSet<>(mine);
            clashes.retainAll(seen);
            if (!clashes.isEmpty()) clashing.put(m, clashes);
            seen.addAll(mine);
        }
    }

    /** Whether {@code m} is one of rewrite mode's trampoline files (rewrite/ModuleRewrite: {@code <cache>/rewrite/<key>.elf}). */
    private static boolean trampolines(LoadedModule m) {
        String p = m.image().path();
        int slash = p == null ? -1 : p.lastIndexOf('/');
        return slash > 0 && p.startsWith("/rewrite/", slash - 8) && p.substring(slash + 1).matches("[0-9a-f]{64}\\.elf");
    }

    private static boolean overlaps(TreeMap<Long, Long> taken, long start, long end) {
        Map.Entry<Long, Long> below = taken.floorEntry(start);
        if (below != null && below.getValue() > start) return true;
        Map.Entry<Long, Long> above = taken.ceilingEntry(start);
        return above != null && above.getKey() < end;
    }

    private void rebuildSegments() {
        record Seg(long start, long end, LoadedModule module) {}
        List<Seg> segs = new ArrayList<>();
        // the module reported last owns its addresses: one reported before it over the same range was unloaded.
        // Rewrite mode's trampoline files come after every real module, whatever their order: their segment
        // describes the trampolines' text and also data the run never maps, which can reach into the module
        // placed right above them, and must not make that module look unloaded; they keep what is left free.
        List<LoadedModule> latestFirst = new ArrayList<>(modules);
        latestFirst.sort(Comparator.comparing((LoadedModule m) -> trampolines(m))
                .thenComparing(Comparator.comparingLong((LoadedModule m) -> generation.getOrDefault(m, 0L)).reversed()));
        TreeMap<Long, Long> taken = new TreeMap<>();
        for (LoadedModule m : latestFirst) {
            boolean clipped = trampolines(m);
            if (!clipped && overlaps(taken, m.base(), m.end())) continue;
            List<Seg> mine = new ArrayList<>();
            for (ElfSegment s : m.image().loadSegments()) {
                long start = m.bias() + (s.vaddr() & -PAGE);
                long end = m.bias() + ((s.vaddr() + s.memSize() + PAGE - 1) & -PAGE);
                if (clipped) {
                    Map.Entry<Long, Long> below = taken.floorEntry(start);
                    if (below != null && below.getValue() > start) continue;
                    Long above = taken.ceilingKey(start);
                    if (above != null && above < end) end = above;
                }
                mine.add(new Seg(start, end, m));
            }
            segs.addAll(mine);
            if (!clipped) taken.put(m.base(), m.end());
            else for (Seg g : mine) taken.put(g.start(), g.end());
        }
        segs.sort(Comparator.comparingLong(Seg::start));
        int n = segs.size();
        segmentStarts = new long[n];
        segmentEnds = new long[n];
        segmentModules = new LoadedModule[n];
        segmentRegions = new Region[n];
        Map<LoadedModule, Region> regionOf = new HashMap<>();
        for (int i = 0; i < n; i++) {
            Seg s = segs.get(i);
            segmentStarts[i] = s.start();
            // Neighbouring segments that share a page after rounding must not overlap, or the search breaks.
            segmentEnds[i] = i + 1 < n ? Math.min(s.end(), segs.get(i + 1).start()) : s.end();
            segmentModules[i] = s.module();
            segmentRegions[i] = regionOf.computeIfAbsent(s.module(), m -> new Region(m.name(), m.base(), m.end()));
        }
        clearCodeCache();
    }

    private void addMapping(Event.Mapping m) {
        String path = m.path();
        String name = path.isEmpty() ? "[anon]" : path.startsWith("[") ? path : ModuleImage.baseName(path);
        // Offsets into a file mapping count from where the file's first byte would be: they are file offsets.
        long origin = path.isEmpty() || path.startsWith("[") ? m.start() : m.start() - m.offset();
        mappings.put(m.start(), m.end(), new Region(name, origin, m.end()));
        if (m.offset() == 0 && !path.isEmpty() && !path.startsWith("[")) {
            fileStarts.put(m.start(), ModuleImage.withoutDeletedMark(path));
        }
        if (!unnamedModules.isEmpty()) {
            List<Event.Module> waiting = List.copyOf(unnamedModules);
            unnamedModules.clear();
            waiting.forEach(this::addModule);
        }
    }

    private void changeRange(Event.Range r) {
        if (!r.added()) {
            ranges.remove(r.start(), r.end());
            return;
        }
        String name = switch (r.kind()) {
            case HEAP -> "[heap]";
            case ANON -> "[anon]";
            case FILE, DATA -> {
                Intervals.Span<Region> mapping = mappings.get(r.start());
                yield mapping != null ? mapping.value().name() : r.kind() == Event.RegionKind.FILE ? "[file]" : "[data]";
            }
        };
        ranges.put(r.start(), r.end(), new Region(name, r.start(), r.end()));
    }

    private void clearCodeCache() {
        Arrays.fill(codeNames, null);
        Arrays.fill(sourceNames, null);
    }
}
