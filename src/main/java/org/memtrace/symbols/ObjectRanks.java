package org.memtrace.symbols;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Tells objects of the same plain name apart across modules, for {@link AddressSpace#object}: by rank, the
 * main program first, then the others in the order they were loaded. An object whose plain name (without its
 * qualifier inside the module) a module ranked before its own also defines is qualified with its module's
 * file name after any qualifier it has ({@code table@libdup.so}, {@code table@lib.c@libdup.so}); the first
 * module keeps its names. Depends on the modules loaded, never on where: the same program with the same
 * libraries names its objects the same in every run.
 */
final class ObjectRanks {

    /** Per module, the plain object names that a module ranked before it has too. */
    private final Map<LoadedModule, Set<String>> clashing = new HashMap<>();
    /** Each file's object names, made once: {@link #rank} runs again at every module. */
    private final Map<ModuleImage, Set<String>> objectNames = new HashMap<>();

    /** Ranks {@code modules} again, {@code program} (null: not known yet) first. */
    void rank(List<LoadedModule> modules, LoadedModule program) {
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

    /** {@code @module} for an object whose plain name a module ranked before its own has too; else empty. */
    String qualifier(LoadedModule m, SymbolIndex.Symbol s) {
        if (clashing.isEmpty()) return "";   // the usual case, without hashing the module per name
        Set<String> clashes = clashing.get(m);
        return clashes != null && clashes.contains(s.name()) ? "@" + m.name() : "";
    }
}
