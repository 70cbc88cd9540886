package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.MadtGrammar;
import org.memtrace.testutil.TraceFile;

/**
 * C++ names are demangled in every name memtrace writes (docs/naming.md, "C++ names"): a small C++ program
 * (a namespace, a template class's constructor and method, an object made by operator new, a std::vector)
 * traced by {@code memtrace run} and built by {@code memtrace cc}, printed and exported to CSV, names its
 * functions, its global and its heap blocks as c++filt spells them; {@code --no-demangle} keeps the
 * symbol tables' spelling. The sets asserted are exact: every code name of an access on a line of the
 * program's own source, and every name of its global.
 */
class DemangleTest {
    @TempDir static Path dir;
    static Path stream, mtr;

    private static final Set<String> FUNCTIONS = Set.of("main", "shapes::Box<int>::Box(int)", "shapes::Box<int>::put(int)",
            "shapes::sum(std::vector<long, std::allocator<long> > const&)");
    private static final Set<String> RAW_FUNCTIONS = Set.of("main", "_ZN6shapes3BoxIiEC1Ei", "_ZN6shapes3BoxIiE3putEi",
            "_ZN6shapes3sumERKSt6vectorIlSaIlEE");

    @BeforeAll
    static void build() throws Exception {
        try (InputStream in = DemangleTest.class.getResourceAsStream("/cpp/demangle_main.cpp")) {
            Files.copy(in, dir.resolve("main.cpp"));
        }
        Gcc.run(List.of("g++", "-O0", "-g", "-o", path("boxes"), path("main.cpp")));
        stream = dir.resolve("boxes.stream");
        ok(Cli.run(dir, "run", "--mode", "fault", "-q", "-o", path("boxes.trace"), "--save-stream", stream.toString(), "--", path("boxes")));
        ok(Cli.run(dir, "cc", "-O0", "-g", "-o", path("boxescc"), path("main.cpp"), "-lstdc++"));
        mtr = dir.resolve("boxescc.mtr");
        Gcc.run(List.of(path("boxescc")), Map.of("MEMTRACE_OUT", mtr.toString()));
    }

    private static String path(String name) {
        return dir.resolve(name).toString();
    }

    private static Cli.Result ok(Cli.Result r) {
        assertThat(r.status()).as(r.stderr()).isZero();
        return r;
    }

    /** A trace field unescaped (a '+' is a plus, not a form's space). */
    private static String decoded(String field) {
        return URLDecoder.decode(field.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    private static String withoutOffset(String name) {
        return name.replaceAll("\\+\\d+$", "");
    }

    /** A printed trace, every line checked against the grammar (names escaped, no comma or space left). */
    private static TraceFile trace(Path text) throws Exception {
        assertThat(Files.readAllLines(text)).allSatisfy(l -> assertThat(MadtGrammar.check(l)).as(l).isNull());
        return TraceFile.read(text);
    }

    /** The functions of every access whose source line is in main.cpp, decoded, offsets cut. */
    private static Set<String> programFunctions(TraceFile t) {
        Set<String> names = new TreeSet<>();
        for (TraceFile.Line l : t.lines()) {
            if (l.access() && l.fields().size() > 5 && l.field(l.fields().size() - 1).matches(".*main\\.cpp:\\d+")) {
                names.add(withoutOffset(decoded(l.field(2))));
            }
        }
        return names;
    }

    /** The data names of every access to the program's global array, decoded, offsets cut. */
    private static Set<String> globals(TraceFile t, String prefix) {
        Set<String> names = new TreeSet<>();
        for (TraceFile.Line l : t.lines()) {
            if (l.access() && decoded(l.field(0)).startsWith(prefix)) names.add(withoutOffset(decoded(l.field(0))));
        }
        return names;
    }

    /** The block names of the M lines: the site of each allocation. */
    private static Set<String> blocks(TraceFile t) {
        Set<String> names = new TreeSet<>();
        for (TraceFile.Line l : t.lines()) if (l.type() == 'M') names.add(decoded(l.field(0)).replaceAll("\\d{4}@", "@"));
        return names;
    }

    @Test
    void liveTraceNamesFunctionsGlobalsAndBlocksDemangled() throws Exception {
        TraceFile t = trace(dir.resolve("boxes.trace"));
        assertThat(programFunctions(t)).isEqualTo(new TreeSet<>(FUNCTIONS));
        assertThat(globals(t, "shapes::")).containsExactly("shapes::tally[0]", "shapes::tally[1]");
        // a block made by new is named by the caller of new (the agent's operator new passes it to malloc); the
        // vector's by the user's function that grew it, the allocator's plumbing in its stack (docs/stacks.md)
        assertThat(blocks(t)).containsExactly("<malloc@main+114>", "<malloc@main+19>");
        assertThat(stackFrames(dir.resolve("boxes.trace"))).contains(" std::__new_allocator<long>::allocate(unsigned long, void const*)+94(");
        assertThat(Files.readString(dir.resolve("boxes.trace"))).doesNotContain("_ZN").doesNotContain("_Znwm");
    }

    @Test
    void printKeepsRawNamesWithNoDemangle() throws Exception {
        ok(Cli.run(dir, "print", "-q", "--no-demangle", "-o", path("raw.trace"), stream.toString()));
        TraceFile t = trace(dir.resolve("raw.trace"));
        assertThat(programFunctions(t)).isEqualTo(new TreeSet<>(RAW_FUNCTIONS));
        assertThat(globals(t, "_ZN6shapes")).containsExactly("_ZN6shapes5tallyE[0]", "_ZN6shapes5tallyE[1]");
        assertThat(blocks(t)).containsExactly("<malloc@main+114>", "<malloc@main+19>");
        assertThat(stackFrames(dir.resolve("raw.trace"))).contains(" _ZNSt15__new_allocatorIlE8allocateEmPKv+94(");
        // and the same stream printed without the option demangles, as run did
        ok(Cli.run(dir, "print", "-q", "-o", path("again.trace"), stream.toString()));
        assertThat(Files.readString(dir.resolve("again.trace"))).isEqualTo(Files.readString(dir.resolve("boxes.trace")));
    }

    @Test
    void runKeepsRawNamesWithNoDemangle() throws Exception {
        ok(Cli.run(dir, "run", "--mode", "fault", "-q", "--no-demangle", "-o", path("raw-run.trace"), "--", path("boxes")));
        TraceFile t = trace(dir.resolve("raw-run.trace"));
        assertThat(programFunctions(t)).isEqualTo(new TreeSet<>(RAW_FUNCTIONS));
        assertThat(blocks(t)).containsExactly("<malloc@main+114>", "<malloc@main+19>");
        assertThat(stackFrames(dir.resolve("raw-run.trace"))).contains(" _ZNSt15__new_allocatorIlE8allocateEmPKv+94(");
    }

    /** The trace's {@code # stack} lines, names decoded. */
    private static String stackFrames(Path trace) throws Exception {
        return String.join("\n", Files.readAllLines(trace).stream().filter(l -> l.startsWith("# stack "))
                .map(l -> URLDecoder.decode(l.replace("+", "%2B"), StandardCharsets.UTF_8)).toList());
    }

    @Test
    void compiledInTraceNamesFunctionsDemangled() throws Exception {
        ok(Cli.run(dir, "print", "-q", "-o", path("cc.trace"), mtr.toString()));
        TraceFile t = trace(dir.resolve("cc.trace"));
        assertThat(programFunctions(t)).containsAll(FUNCTIONS);
        assertThat(programFunctions(t)).noneMatch(n -> n.startsWith("_Z"));
        assertThat(globals(t, "shapes::")).containsExactly("shapes::tally[0]", "shapes::tally[1]");
    }

    /** RFC 4180 fields of one CSV line (quoted fields with doubled quotes). */
    private static List<String> csvFields(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder f = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') { f.append('"'); i++; }
                else if (c == '"') quoted = false;
                else f.append(c);
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                out.add(f.toString());
                f.setLength(0);
            } else {
                f.append(c);
            }
        }
        out.add(f.toString());
        return out;
    }

    /** The instruction names (offsets cut) and symbols of the CSV rows that touch the program's global. */
    private static List<Set<String>> csvNames(String name, String... options) throws Exception {
        Path csv = dir.resolve(name);
        List<String> args = new ArrayList<>(List.of("convert", stream.toString(), "--to", "csv", "-o", csv.toString()));
        args.addAll(List.of(options));
        ok(Cli.run(dir, args.toArray(String[]::new)));
        List<String> lines = Files.readAllLines(csv);
        assertThat(lines.get(0)).isEqualTo("seq,kind,store,address,size,ip,instruction,thread,region,symbol,offset,source");
        Set<String> instructions = new TreeSet<>(), symbols = new TreeSet<>();
        for (String line : lines.subList(1, lines.size())) {
            List<String> f = csvFields(line);
            assertThat(f).as(line).hasSize(12);
            instructions.add(withoutOffset(f.get(6)));
            if (f.get(8).equals("boxes")) symbols.add(f.get(9));
        }
        return List.of(instructions, symbols);
    }

    @Test
    void csvNamesDemangledAndRawWithTheOption() throws Exception {
        List<Set<String>> names = csvNames("boxes.csv");
        assertThat(names.get(0)).containsAll(FUNCTIONS).contains("operator new(unsigned long)@plt")
                .contains("void std::__new_allocator<long>::construct<long, long>(long*, long&&)");
        assertThat(names.get(1)).contains("shapes::tally").noneMatch(n -> n.startsWith("_Z"));
        List<Set<String>> raw = csvNames("raw.csv", "--no-demangle");
        assertThat(raw.get(0)).containsAll(RAW_FUNCTIONS).contains("_Znwm@plt")
                .contains("_ZNSt15__new_allocatorIlE9constructIlJlEEEvPT_DpOT0_");
        assertThat(raw.get(1)).contains("_ZN6shapes5tallyE").noneMatch(n -> n.contains("::"));
    }

    @Test
    void reportAndCacheSimNameObjectsDemangled() throws Exception {
        ok(Cli.run(dir, "report", stream.toString(), "-o", path("r.html")));
        assertThat(Files.readString(dir.resolve("r.html"))).contains("shapes::tally").doesNotContain("_ZN6shapes5tallyE");
        ok(Cli.run(dir, "report", "--no-demangle", stream.toString(), "-o", path("raw.html")));
        assertThat(Files.readString(dir.resolve("raw.html"))).contains("_ZN6shapes5tallyE").doesNotContain("shapes::tally");
        Cli.Result sim = ok(Cli.run(dir, "cachesim", "--top", "100", stream.toString()));
        assertThat(sim.stdout()).contains("shapes::").doesNotContain("_ZN6shapes");
        Cli.Result rawSim = ok(Cli.run(dir, "cachesim", "--top", "100", "--no-demangle", stream.toString()));
        assertThat(rawSim.stdout()).contains("_ZN6shapes").doesNotContain("shapes::");
    }
}
