package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The grammar of MEMTRACE_CHECK_JSON's records (docs/check.md, "JSON"), checked field by field: every
 * required field present with its type, no other field. Used by the tests on every record a run writes.
 */
final class CheckJson {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> ACCESS_KINDS = Set.of("heap-overflow", "heap-underflow", "use-after-free",
            "stack-overflow", "stack-underflow", "stack-use-after-scope", "stack-use-after-return", "global-overflow", "global-underflow",
            "null-dereference", "wild-access");
    private static final Set<String> FREE_KINDS = Set.of("double-free", "invalid-free", "allocator-mismatch");
    private static final Set<String> REGIONS = Set.of("heap", "global", "stack", "unknown");

    private CheckJson() {}

    /** Parses and validates every line; returns the records. */
    static List<JsonNode> records(String text) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (String line : text.lines().toList()) {
            JsonNode n = JSON.readTree(line);
            validate(n);
            out.add(n);
        }
        return out;
    }

    static void validate(JsonNode n) {
        String kind = n.path("kind").asText();
        if (ACCESS_KINDS.contains(kind)) {
            String[] names = frames(n, "kind", "access", "size", "address", "object", "offset", "distance", "by", "at", "thread");
            if (n.has("into")) {   // the other object an addressable access landed in (a heap overflow past the redzone)
                strings(n, "into");
                names = Stream.concat(Arrays.stream(names), Stream.of("into")).toArray(String[]::new);
            }
            fields(n, names);
            assertThat(n.get("access").asText()).isIn("read", "write");
            ints(n, "size", "offset", "distance", "thread");
            strings(n, "address");
            assertThat(n.get("by").isNull() || n.get("by").isTextual()).isTrue();
            object(n.get("object"));
            site(n.get("at"));
        } else if (kind.equals("intra-object-overflow")) {
            fields(n, "kind", "access", "size", "field", "address", "object", "offset", "distance", "by", "at", "thread");
            assertThat(n.get("access").asText()).isEqualTo("write");
            ints(n, "size", "field", "offset", "distance", "thread");
            assertThat(n.get("distance").asInt()).isEqualTo(n.get("size").asInt() - n.get("field").asInt());
            strings(n, "address", "by");
            object(n.get("object"));
            site(n.get("at"));
        } else if (FREE_KINDS.contains(kind)) {
            fields(n, frames(n, "kind", "by", "address", "object", "at", "thread"));
            assertThat(n.get("by").asText()).isIn("free", "delete", "delete[]", "realloc");
            strings(n, "address");
            ints(n, "thread");
            object(n.get("object"));
            site(n.get("at"));
        } else if (kind.equals("overlap")) {
            fields(n, "kind", "by", "size", "source", "destination", "at", "thread");
            strings(n, "by", "source", "destination");
            ints(n, "size", "thread");
            site(n.get("at"));
        } else if (kind.equals("leak")) {
            fields(n, "kind", "object", "blocks", "bytes");
            object(n.get("object"));
            assertThat(n.get("object").get("region").asText()).isEqualTo("heap");
            assertThat(n.get("object").has("allocated")).isTrue();
            ints(n, "blocks", "bytes");
            assertThat(n.get("blocks").asLong()).isPositive();
        } else if (kind.equals("summary")) {
            fields(n, "kind", "accesses", "checks", "loop_checks", "range_checks", "libc_checks", "static", "errors");
            ints(n, "accesses", "checks", "loop_checks", "range_checks", "libc_checks", "errors");
            fields(n.get("static"), "checks", "kept", "removed_by_loops", "removed_by_ranges", "loop_checks", "range_checks");
            ints(n.get("static"), "checks", "kept", "removed_by_loops", "removed_by_ranges", "loop_checks", "range_checks");
        } else {
            throw new AssertionError("unknown kind in " + n);
        }
    }

    /**
     * The names, and "frames" when the record has them (run --check --stack-depth, or a site in inlined code):
     * each frame a code name, a file:line or null, a function or null, and "inlined": true on an inlined
     * function's frame, which is never the last (the function it was inlined into follows).
     */
    private static String[] frames(JsonNode n, String... names) {
        if (!n.has("frames")) return names;
        assertThat(n.get("frames").isArray()).isTrue();
        assertThat(n.get("frames")).isNotEmpty();
        JsonNode last = null;
        for (JsonNode f : n.get("frames")) {
            if (f.has("inlined")) {
                fields(f, "code", "line", "function", "inlined");
                assertThat(f.get("inlined").isBoolean() && f.get("inlined").asBoolean()).as(f.toString()).isTrue();
                assertThat(f.get("function").isTextual()).as(f.toString()).isTrue();
            } else {
                fields(f, "code", "line", "function");
            }
            strings(f, "code");
            assertThat(f.get("line").isNull() || f.get("line").asText().matches(".+:\\d+")).as(f.toString()).isTrue();
            assertThat(f.get("function").isNull() || f.get("function").isTextual()).isTrue();
            last = f;
        }
        assertThat(last.has("inlined")).as("the last frame is the function the code lies in").isFalse();
        String[] all = java.util.Arrays.copyOf(names, names.length + 1);
        all[names.length] = "frames";
        return all;
    }

    private static void object(JsonNode o) {
        assertThat(o.isObject()).isTrue();
        List<String> names = new ArrayList<>(List.of("name", "region", "size", "description"));
        for (String optional : List.of("allocated", "freed")) {
            if (o.has(optional)) {
                names.add(optional);
                site(o.get(optional));
            }
        }
        fields(o, names.toArray(String[]::new));
        strings(o, "name", "description");
        ints(o, "size");
        assertThat(o.get("region").asText()).isIn(REGIONS);
    }

    /** A site: code and line, and the frames of its inlined calls when it lies in inlined code (a block's sites). */
    private static void site(JsonNode s) {
        fields(s, frames(s, "code", "line"));
        strings(s, "code");
        assertThat(s.get("line").isNull() || s.get("line").asText().matches(".+:\\d+")).as(s.toString()).isTrue();
    }

    private static void fields(JsonNode n, String... names) {
        List<String> have = new ArrayList<>();
        n.fieldNames().forEachRemaining(have::add);
        assertThat(have).as(n.toString()).containsExactlyInAnyOrder(names);
    }

    private static void ints(JsonNode n, String... names) {
        for (String f : names) assertThat(n.get(f).isIntegralNumber()).as(f + " in " + n).isTrue();
    }

    private static void strings(JsonNode n, String... names) {
        for (String f : names) assertThat(n.get(f).isTextual()).as(f + " in " + n).isTrue();
    }
}
