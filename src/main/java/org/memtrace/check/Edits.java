package org.memtrace.check;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the pruning rules change in a file's lines: lines inserted before a line, a line replaced (by
 * nothing, to delete a check), and the counts the summary reports.
 */
final class Edits {
    final Map<Integer, List<String>> before = new HashMap<>();
    final Map<Integer, List<String>> replace = new HashMap<>();
    /** read-only data the new checks refer to (group descriptors), appended to the file */
    final List<String> data = new ArrayList<>();
    int checks, hoisted, merged, ranges, loops;
    /** checks deleted as proven in bounds ({@link InBounds}); the site table counts them with {@code merged} */
    int bounded;

    void insertBefore(int line, List<String> text) {
        before.computeIfAbsent(line, k -> new ArrayList<>()).addAll(text);
    }

    boolean touched(int line) {
        return replace.containsKey(line);
    }

    List<String> apply(List<String> lines) {
        List<String> out = new ArrayList<>(lines.size() + 64);
        for (int i = 0; i < lines.size(); i++) {
            out.addAll(before.getOrDefault(i, List.of()));
            List<String> r = replace.get(i);
            if (r == null) out.add(lines.get(i));
            else out.addAll(r);
        }
        return out;
    }
}
