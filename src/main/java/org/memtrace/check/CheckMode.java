package org.memtrace.check;

import java.util.List;

/**
 * Whether {@code memtrace cc} builds a self-checking program: {@code --check} (pruned checks) or
 * {@code --check --no-prune} (every check gcc made: the baseline the summary's removed count is against),
 * which must come first among memtrace's options.
 *
 * @param mode the value of {@code MEMTRACE_CC_CHECK} for the wrapper, or null for an ordinary build
 * @param rest the remaining words (memtrace's other options, then gcc's)
 */
public record CheckMode(String mode, List<String> rest) {
    public static CheckMode split(List<String> words) {
        if (words.isEmpty() || !words.getFirst().equals("--check")) return new CheckMode(null, words);
        if (words.size() > 1 && words.get(1).equals("--no-prune")) return new CheckMode("all", words.subList(2, words.size()));
        return new CheckMode("prune", words.subList(1, words.size()));
    }

    public boolean on() {
        return mode != null;
    }

    /** gcc arguments --check cannot build with, and why; null when there is none. */
    public static String conflict(List<String> gccArgs) {
        for (String a : gccArgs) {
            if (a.startsWith("-fsanitize=") && (a.contains("address") || a.contains("thread") || a.contains("memory"))) {
                return a + " cannot be combined with --check, which lays out memory and checks it itself";
            }
        }
        return null;
    }
}
