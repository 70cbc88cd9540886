package org.memtrace.analysis;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Names as dense int ids, in the order first seen: an analysis counts by id in flat arrays and turns ids back
 * into names only when it writes its results.
 */
public final class Interner {
    private final Map<String, Integer> idOf = new HashMap<>();
    private final List<String> texts = new ArrayList<>();

    /** The id of {@code text}, a new one (the current {@link #size()}) the first time it is seen. */
    public int id(String text) {
        Integer known = idOf.get(text);
        if (known != null) return known;
        int id = texts.size();
        texts.add(text);
        idOf.put(text, id);
        return id;
    }

    public String text(int id) { return texts.get(id); }

    public int size() { return texts.size(); }
}
