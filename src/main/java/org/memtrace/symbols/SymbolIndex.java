package org.memtrace.symbols;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The functions and the objects of one module, each kept as a flat run of disjoint address intervals so a
 * lookup is one binary search. Addresses are ELF virtual addresses (before the load bias).
 *
 * <p>Choices, all deterministic: symbols at the same address are aliases and one name wins: visible (global
 * or weak) before local, then fewer leading underscores, then global before weak, then sized before
 * zero-size, then the shorter, then the alphabetically first. glibc exports the names programmers call as
 * weak aliases of internal globals ({@code puts} of {@code _IO_puts}), so underscores weigh more than the
 * global/weak distinction. A
 * symbol nested in a larger one (a local label in a function, an object in a bigger one) wins inside its own
 * extent and the enclosing one resumes after it; a zero-size symbol extends to the next symbol of its table
 * or the end of its section, whichever comes first.
 *
 * <p>Objects are identities, not names: two objects of the module that keep one name after the alias
 * choice (a {@code static int table[64]} in file1.c and another in file2.c, gcc's {@code counter.0} static
 * locals of two files) are told apart by a qualifier, {@link Symbol#qualifier}: a local one gets
 * {@code @file} with the source file's name from the STT_FILE symbol that opens its part of .symtab
 * ({@code table@file2.c}), a global or weak one keeps its plain name; one whose file is unknown, or whose
 * file names another of them too, gets {@code @0x} and its link-time address in hex
 * ({@code table@file2.c@0x4010} after the file). All of them depend only on the file, never on where it
 * is loaded.
 */
public final class SymbolIndex {

    private static final long PLT_ENTRY = 16;
    private static final SymbolIndex EMPTY = new SymbolIndex(Table.EMPTY, Table.EMPTY);

    private final Table functions;
    private final Table objects;

    private SymbolIndex(Table functions, Table objects) {
        this.functions = functions;
        this.objects = objects;
    }

    public static SymbolIndex empty() {
        return EMPTY;
    }

    /**
     * Indexes a module: its .symtab (static functions and variables), its .dynsym (all a stripped file
     * has), the symbols of a separate debug file when one is given, and the targets of copy relocations.
     */
    public static SymbolIndex of(ElfFile file, ElfFile debugFile) {
        return of(file, debugFile, Demangler.none());
    }

    /**
     * {@link #of(ElfFile, ElfFile)} with C++ names spelled as {@code demangler} spells them. Aliases and
     * qualifiers are chosen on the raw names (underscores, length), so demangling never changes which
     * symbol names an address, only how it is spelled.
     */
    public static SymbolIndex of(ElfFile file, ElfFile debugFile, Demangler demangler) {
        List<Candidate> all = new ArrayList<>();
        collect(all, file, file.symtab());
        collect(all, file, file.dynsym());
        if (debugFile != null) collect(all, debugFile, debugFile.symtab());
        for (CopyRelocation r : file.copyRelocations()) {
            if (!r.name().isEmpty()) {
                long end = r.address() + Math.max(1, r.size());
                all.add(new Candidate(r.name(), r.address(), end, r.size() > 0, false, ElfSymbol.STB_GLOBAL, null));
            }
        }
        collectPlt(all, file);
        Map<String, String> spelled = demangler.demangle(all.stream().map(c -> withoutPlt(c.name())).toList());
        return new SymbolIndex(Table.build(all, c -> c.function, false, spelled), Table.build(all, c -> !c.function, true, spelled));
    }

    private static String withoutPlt(String name) {
        return name.endsWith("@plt") ? name.substring(0, name.length() - 4) : name;
    }

    /** The name as {@code spelled} has it, a PLT entry's {@code @plt} kept after the demangled name. */
    private static String spell(String raw, Map<String, String> spelled) {
        if (spelled.isEmpty()) return raw;
        String base = withoutPlt(raw);
        String d = spelled.get(base);
        return d == null ? raw : d + raw.substring(base.length());
    }

    /**
     * Names PLT entries {@code puts@plt} as objdump does. Entry i of .plt.sec (or i+1 of .plt, whose first
     * entry is the resolver stub) belongs to the i-th JUMP_SLOT relocation. A fixed-address program's
     * canonical PLT entry (the address {@code &puts} takes there) is also marked by its undefined .dynsym
     * symbol with a non-zero value.
     */
    private static void collectPlt(List<Candidate> out, ElfFile file) {
        List<String> slots = file.pltSlots();
        Optional<ElfSection> sec = file.section(".plt.sec");
        Optional<ElfSection> plt = sec.isPresent() ? sec : file.section(".plt");
        if (plt.isPresent()) {
            long first = plt.get().address() + (sec.isPresent() ? 0 : PLT_ENTRY);
            long end = plt.get().address() + plt.get().size();
            for (int i = 0; i < slots.size() && first + (i + 1) * PLT_ENTRY <= end; i++) {
                long at = first + i * PLT_ENTRY;
                out.add(new Candidate(slots.get(i) + "@plt", at, at + PLT_ENTRY, true, true, ElfSymbol.STB_LOCAL, null));
            }
        }
        file.section(".plt.got").ifPresent(got -> collectPltGot(out, file, got));
        for (ElfSymbol s : file.dynsym()) {
            if (s.sectionIndex() == ElfSymbol.SHN_UNDEF && s.isFunction() && s.value() != 0 && !s.name().isEmpty()) {
                out.add(new Candidate(s.name() + "@plt", s.value(), s.value() + PLT_ENTRY, true, true, ElfSymbol.STB_LOCAL, null));
            }
        }
    }

    /**
     * Names {@code .plt.got} entries (a function whose address the program also takes, or any call under
     * {@code -z now} with IBT) after the GOT slot their {@code jmp *slot(%rip)} reads, as objdump does: an entry
     * is 8 bytes ({@code jmp}, {@code xchg %ax,%ax}) or 16 with {@code endbr64} and {@code bnd jmp}.
     */
    private static void collectPltGot(List<Candidate> out, ElfFile file, ElfSection got) {
        ByteBuffer code = file.bytesAt(got.address(), (int) Math.min(got.size(), 1 << 20));
        boolean ibt = code.remaining() >= 4 && code.getInt(0) == 0xfa1e0ff3;
        int entry = ibt ? 16 : 8;
        for (int at = 0; at + entry <= code.remaining(); at += entry) {
            for (int i = at; i + 6 <= at + entry; i++) {
                if ((code.get(i) & 0xff) != 0xff || code.get(i + 1) != 0x25) continue;
                long slot = got.address() + i + 6 + code.getInt(i + 2);
                String name = file.gotSlots().get(slot);
                long start = got.address() + at;
                if (name != null) out.add(new Candidate(name + "@plt", start, start + entry, true, true, ElfSymbol.STB_LOCAL, null));
                break;
            }
        }
    }

    private static void collect(List<Candidate> out, ElfFile file, List<ElfSymbol> symbols) {
        List<ElfSection> sections = file.sections();
        // A local symbol belongs to the source file whose STT_FILE symbol comes last before it (ld keeps
        // each object file's locals together after its STT_FILE; globals come after all locals, in no file).
        Map<ElfSymbol, String> fileOf = new IdentityHashMap<>();
        String current = null;
        for (ElfSymbol s : symbols) {
            if (s.type() == ElfSymbol.STT_FILE) current = s.name().isEmpty() ? null : s.name();
            else if (s.binding() == ElfSymbol.STB_LOCAL && current != null) fileOf.put(s, current);
        }
        List<ElfSymbol> kept = symbols.stream()
                .filter(s -> s.isDefined() && !s.name().isEmpty() && (s.isFunction() || s.isObject()))
                .sorted(Comparator.comparingLong(ElfSymbol::value))
                .toList();
        long[] starts = kept.stream().mapToLong(ElfSymbol::value).toArray();
        for (ElfSymbol s : kept) {
            long end;
            if (s.size() > 0) {
                end = s.value() + s.size();
            } else {
                end = sectionEnd(sections, s);
                int next = Arrays.binarySearch(starts, s.value() + 1);
                if (next < 0) next = -next - 1;
                if (next < starts.length) end = Math.min(end, starts[next]);
                if (end <= s.value()) end = s.value() + 1;
            }
            out.add(new Candidate(s.name(), s.value(), end, s.size() > 0, s.isFunction(), s.binding(), fileOf.get(s)));
        }
    }

    private static long sectionEnd(List<ElfSection> sections, ElfSymbol s) {
        if (s.sectionIndex() < sections.size()) {
            ElfSection section = sections.get(s.sectionIndex());
            long end = section.address() + section.size();
            if (end > s.value()) return end;
        }
        return s.value() + 1;
    }

    /** The function covering {@code vaddr} as {@code name+offset} (decimal), or null. */
    public String function(long vaddr) {
        return functions.name(vaddr);
    }

    /** The object covering {@code vaddr} as {@code name+offset} (decimal), or null. */
    public String object(long vaddr) {
        return objects.name(vaddr);
    }

    /** The object covering {@code vaddr}, or null: its start lets a caller name fields inside it. */
    public Symbol objectAt(long vaddr) {
        int s = objects.find(vaddr);
        return s < 0 ? null : objects.symbol(s);
    }

    /**
     * The run of addresses around {@code vaddr} that one object covers ({@code symbol}), or that no object
     * covers ({@code symbol} null): {@link #objectAt} answers the same for every address of [{@code start}, {@code end}).
     */
    public record ObjectRun(Symbol symbol, long start, long end) {}

    public ObjectRun objectRunAt(long vaddr) {
        return objects.run(vaddr);
    }

    /** Every function's start address and name, in address order: a source of realistic addresses. */
    public List<Symbol> functions() {
        return functions.all();
    }

    public List<Symbol> objects() {
        return objects.all();
    }

    /**
     * A chosen symbol: its name as the symbol table spells it, the qualifier that tells it apart from another
     * object of the module with that name ({@code @file2.c}; empty when the name is the module's only one),
     * its start and the end of the extent it was given.
     */
    public record Symbol(String name, String qualifier, long start, long end) {
        /** The name that identifies the object in its module: {@code table}, {@code table@file2.c}. */
        public String unique() {
            return qualifier.isEmpty() ? name : name + qualifier;
        }
    }

    private record Candidate(String name, long start, long end, boolean sized, boolean function, int binding, String file) {}

    private static final class Table {
        static final Table EMPTY = new Table(new String[0], new String[0], new long[0], new long[0], new long[0], new int[0]);

        final String[] names;
        /** {@link Symbol#qualifier} of each symbol; {@code unique} is name and qualifier, what lookups print. */
        final String[] qualifiers, unique;
        final long[] starts;
        final long[] ends;
        /** Disjoint runs: from cuts[i] up to cuts[i+1] the address belongs to symbol owner[i], or none when -1. */
        final long[] cuts;
        final int[] owner;

        Table(String[] names, String[] qualifiers, long[] starts, long[] ends, long[] cuts, int[] owner) {
            this.names = names;
            this.qualifiers = qualifiers;
            this.unique = new String[names.length];
            for (int i = 0; i < names.length; i++) unique[i] = qualifiers[i].isEmpty() ? names[i] : names[i] + qualifiers[i];
            this.starts = starts;
            this.ends = ends;
            this.cuts = cuts;
            this.owner = owner;
        }

        static Table build(List<Candidate> all, Predicate<Candidate> kind, boolean qualify, Map<String, String> spelled) {
            List<Candidate> chosen = chooseAliases(all.stream().filter(kind).toList());
            int n = chosen.size();
            String[] qualifiers = qualify ? qualifiers(chosen) : new String[n];
            if (!qualify) Arrays.fill(qualifiers, "");
            String[] names = new String[n];
            long[] starts = new long[n];
            long[] ends = new long[n];
            for (int i = 0; i < n; i++) {
                names[i] = spell(chosen.get(i).name(), spelled);
                starts[i] = chosen.get(i).start();
                ends[i] = chosen.get(i).end();
            }
            Flattener f = new Flattener(n);
            for (int i = 0; i < n; i++) f.add(i, starts[i], ends[i]);
            f.closeUntil(Long.MAX_VALUE);
            return new Table(names, qualifiers, starts, ends, Arrays.copyOf(f.cuts, f.size), Arrays.copyOf(f.owner, f.size));
        }

        /** See the class comment: {@code @file} for a local that shares its name, {@code @0xADDRESS} when that is not enough. */
        private static String[] qualifiers(List<Candidate> chosen) {
            String[] q = new String[chosen.size()];
            Arrays.fill(q, "");
            Map<String, List<Integer>> byName = new HashMap<>();
            for (int i = 0; i < chosen.size(); i++) byName.computeIfAbsent(chosen.get(i).name(), k -> new ArrayList<>()).add(i);
            for (List<Integer> same : byName.values()) {
                if (same.size() < 2) continue;
                Map<String, Integer> files = new HashMap<>();
                for (int i : same) {
                    Candidate c = chosen.get(i);
                    if (c.binding() == ElfSymbol.STB_LOCAL && c.file() != null) files.merge(c.file(), 1, Integer::sum);
                }
                long visible = same.stream().filter(i -> chosen.get(i).binding() != ElfSymbol.STB_LOCAL).count();
                for (int i : same) {
                    Candidate c = chosen.get(i);
                    if (c.binding() != ElfSymbol.STB_LOCAL && visible == 1) continue;
                    String file = c.binding() == ElfSymbol.STB_LOCAL ? c.file() : null;
                    String address = "@0x" + Long.toHexString(c.start());
                    q[i] = file == null ? address : files.get(file) == 1 ? "@" + file : "@" + file + address;
                }
            }
            return q;
        }

        Symbol symbol(int s) {
            return new Symbol(names[s], qualifiers[s], starts[s], ends[s]);
        }

        private static List<Candidate> chooseAliases(List<Candidate> list) {
            Comparator<Candidate> preference = Comparator
                    .comparingLong(Candidate::start)
                    .thenComparing(c -> c.binding() == ElfSymbol.STB_LOCAL)
                    .thenComparingInt(c -> leadingUnderscores(c.name()))
                    .thenComparingInt(c -> bindingRank(c.binding()))
                    .thenComparing(c -> !c.sized())
                    .thenComparingInt(c -> c.name().length())
                    .thenComparing(Candidate::name);
            List<Candidate> sorted = list.stream().sorted(preference).toList();
            List<Candidate> chosen = new ArrayList<>();
            for (int i = 0; i < sorted.size(); ) {
                Candidate best = sorted.get(i);
                long end = best.end();
                int j = i + 1;
                while (j < sorted.size() && sorted.get(j).start() == best.start()) {
                    if (!best.sized()) end = Math.max(end, sorted.get(j).end());
                    j++;
                }
                chosen.add(new Candidate(best.name(), best.start(), end, best.sized(), best.function(), best.binding(), best.file()));
                i = j;
            }
            return chosen;
        }

        private static int bindingRank(int binding) {
            return switch (binding) {
                case ElfSymbol.STB_GLOBAL -> 0;
                case ElfSymbol.STB_WEAK -> 1;
                default -> 2;
            };
        }

        private static int leadingUnderscores(String name) {
            int n = 0;
            while (n < name.length() && name.charAt(n) == '_') n++;
            return n;
        }

        /**
         * The cut the last search found: a trace names one array after another, so most addresses fall in
         * the same run as the one before. Checked against the (immutable) cuts, so a stale or racing value
         * costs only the search.
         */
        private int lastCut;

        int find(long vaddr) {
            int i = lastCut;
            if (i < cuts.length && cuts[i] <= vaddr && (i + 1 == cuts.length || vaddr < cuts[i + 1])) return owner[i];
            i = Arrays.binarySearch(cuts, vaddr);
            if (i < 0) i = -i - 2;
            if (i < 0) return -1;
            lastCut = i;
            return owner[i];
        }

        ObjectRun run(long vaddr) {
            int i = Arrays.binarySearch(cuts, vaddr);
            if (i < 0) i = -i - 2;
            long start = i < 0 ? Long.MIN_VALUE : cuts[i];
            long end = i + 1 < cuts.length ? cuts[i + 1] : Long.MAX_VALUE;
            int s = i < 0 ? -1 : owner[i];
            return new ObjectRun(s < 0 ? null : symbol(s), start, end);
        }

        String name(long vaddr) {
            int s = find(vaddr);
            return s < 0 ? null : unique[s] + '+' + (vaddr - starts[s]);
        }

        List<Symbol> all() {
            List<Symbol> list = new ArrayList<>(names.length);
            for (int i = 0; i < names.length; i++) list.add(symbol(i));
            return List.copyOf(list);
        }
    }

    /** Turns nested and overlapping extents, sorted by start, into disjoint runs where the innermost wins. */
    private static final class Flattener {
        long[] cuts;
        int[] owner;
        int size;
        private final long[] stackEnd;
        private final int[] stackOwner;
        private int depth;

        Flattener(int symbols) {
            cuts = new long[2 * symbols + 1];
            owner = new int[2 * symbols + 1];
            stackEnd = new long[symbols];
            stackOwner = new int[symbols];
        }

        void add(int symbol, long start, long end) {
            closeUntil(start);
            emit(start, symbol);
            while (depth > 0 && Long.compareUnsigned(stackEnd[depth - 1], end) <= 0) depth--;
            stackEnd[depth] = end;
            stackOwner[depth] = symbol;
            depth++;
        }

        void closeUntil(long position) {
            while (depth > 0 && Long.compareUnsigned(stackEnd[depth - 1], position) <= 0) {
                long end = stackEnd[--depth];
                emit(end, depth > 0 ? stackOwner[depth - 1] : -1);
            }
        }

        private void emit(long at, int symbol) {
            if (size > 0 && cuts[size - 1] == at) {
                owner[size - 1] = symbol;
                if (size > 1 && owner[size - 2] == symbol) size--;
                return;
            }
            if (size > 0 && owner[size - 1] == symbol) return;
            if (size == cuts.length) {
                cuts = Arrays.copyOf(cuts, size * 2);
                owner = Arrays.copyOf(owner, size * 2);
            }
            cuts[size] = at;
            owner[size] = symbol;
            size++;
        }
    }
}
