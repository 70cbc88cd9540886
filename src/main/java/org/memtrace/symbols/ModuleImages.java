package org.memtrace.symbols;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** The ELF files {@link AddressSpace} has read, by path: each is read once, however often it is loaded. */
final class ModuleImages {

    private final DebugFiles debugFiles;
    private final Map<String, ModuleImage> images = new HashMap<>();
    /** Set for a live run: see {@link #readDebugInfoAhead}. */
    private ExecutorService ahead;
    /** How C++ names are spelled: demangled by default, raw after {@link #keepRawNames()}. */
    private Demangler demangler = Demangler.system();

    ModuleImages(DebugFiles debugFiles) {
        this.debugFiles = debugFiles;
    }

    /** See {@link AddressSpace#keepRawNames}. */
    void keepRawNames() {
        demangler = Demangler.none();
    }

    /** See {@link AddressSpace#readDebugInfoAhead}. */
    void readDebugInfoAhead() {
        if (ahead == null) {
            // a roomy stack: the DWARF readers recurse along the debug information's nesting
            ahead = Executors.newFixedThreadPool(2, r -> Thread.ofPlatform().daemon().name("memtrace-debug-info")
                    .stackSize(16 << 20).unstarted(r));
        }
    }

    void preload(String path, ModuleImage image) {
        images.put(path, image);
    }

    /** The file at {@code path}, read the first time it is asked for (its debug information ahead, if set). */
    ModuleImage image(String path) {
        return images.computeIfAbsent(path, p -> {
            ModuleImage loaded = ModuleImage.load(p, debugFiles, demangler);
            if (ahead != null) {
                ahead.execute(() -> quietly(loaded::lines));
                ahead.execute(() -> quietly(loaded::types));
            }
            return loaded;
        });
    }

    /** See {@link AddressSpace#sourceLocation}. */
    String sourceLocation(String file) {
        for (ModuleImage image : images.values()) {
            LineTable t = image.linesIfRead();
            Optional<String> at = t == null ? Optional.empty() : t.location(file);
            if (at.isPresent()) return at.get();
        }
        return null;
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
}
