package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;

/**
 * memtrace report on the reportwalk fixture (a global table, three heap blocks, a use after free), loaded
 * from disk by Debian's headless chromium: the DOM after the page's scripts ran must hold the heat maps and
 * tables with the numbers the CSV export of the same saved stream gives, and no script error.
 */
class ReportBrowserTest {
    @TempDir static Path dir;
    static String dom;
    /** The CSV rows: seq,kind,store,address,size,ip,instruction,thread,region,symbol,offset,source. */
    static List<String[]> rows;

    @BeforeAll
    static void render() throws Exception {
        Path chromium = Path.of("/usr/bin/chromium");
        Assumptions.assumeTrue(Files.isExecutable(chromium),
                "chromium is not installed: run `. scripts/env.sh && memtrace_prereqs --with-test-tools` (CI does)");
        ReportWalk walk = ReportWalk.build(dir);
        rows = walk.rows();
        Path html = walk.html();

        Path out = dir.resolve("dom.html");
        Process p = new ProcessBuilder(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--user-data-dir=" + dir.resolve("profile"), "--virtual-time-budget=10000", "--dump-dom", html.toUri().toString())
                .redirectOutput(out.toFile()).redirectError(dir.resolve("chromium.err").toFile()).start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("chromium finished").isTrue();
        assertThat(p.exitValue()).as(Files.readString(dir.resolve("chromium.err"))).isZero();
        dom = Files.readString(out);
    }

    private static List<Map<String, String>> canvases(String cls) {
        List<Map<String, String>> all = new ArrayList<>();
        Matcher m = Pattern.compile("<canvas ([^>]*class=\"" + cls + "\"[^>]*)>").matcher(dom);
        while (m.find()) {
            Map<String, String> attributes = new java.util.HashMap<>();
            Matcher a = Pattern.compile("([\\w-]+)=\"([^\"]*)\"").matcher(m.group(1));
            while (a.find()) attributes.put(a.group(1), a.group(2));
            all.add(attributes);
        }
        return all;
    }

    /** The cells of each row of a table, as text. */
    private static List<List<String>> table(String id) {
        Matcher t = Pattern.compile("<table id=\"" + id + "\">(.*?)</table>", Pattern.DOTALL).matcher(dom);
        assertThat(t.find()).as("table " + id).isTrue();
        List<List<String>> result = new ArrayList<>();
        Matcher tr = Pattern.compile("<tr>(.*?)</tr>", Pattern.DOTALL).matcher(t.group(1));
        while (tr.find()) {
            List<String> cells = new ArrayList<>();
            Matcher td = Pattern.compile("<td[^>]*>(.*?)</td>", Pattern.DOTALL).matcher(tr.group(1));
            while (td.find()) cells.add(td.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"));
            if (!cells.isEmpty()) result.add(cells);
        }
        return result;
    }

    private static long count(String symbol, String kind) {
        return rows.stream().filter(r -> r[1].equals(kind) && r[9].equals(symbol)).count();
    }

    @Test
    void scriptsRanWithoutErrors() {
        assertThat(dom).contains("data-rendered=\"yes\"");
        assertThat(dom).contains("<div id=\"errors\"></div>");
    }

    /** The heap table, and use after free first: the freed accesses' section sits above the run's facts. */
    @Test
    void heapTotalsShownAndUseAfterFreeAtTheTop() {
        List<List<String>> heap = table("heap");
        assertThat(heap).contains(List.of("temporary", "1", "64", "freed by the next allocator call"),
                List.of("use after free", "", "", "2 accesses to freed memory, listed at the top"));
        assertThat(heap.get(0).get(0)).isEqualTo("allocated");
        assertThat(dom.indexOf("<div id=\"freedsection\">")).isPositive().isLessThan(dom.indexOf("<h2>Run</h2>"));
    }

    @Test
    void pageHeatMapMarksEveryTouchedPageOnce() {
        Set<Long> touched = new HashSet<>();
        for (String[] r : rows) {
            long address = Long.parseUnsignedLong(r[3]);
            long last = r[1].equals("L") || r[1].equals("S") ? address : address + Math.max(1, Long.parseLong(r[4])) - 1;
            for (long page = address >>> 12; page <= last >>> 12; page++) touched.add(page);
        }
        List<Map<String, String>> regions = canvases("pagemap");
        assertThat(regions).isNotEmpty();
        long marked = 0, previousEnd = 0;
        for (Map<String, String> c : regions) {
            long start = Long.parseUnsignedLong(c.get("data-start").substring(2), 16);
            long end = Long.parseUnsignedLong(c.get("data-end").substring(2), 16);
            assertThat(start).as("regions in address order, apart").isGreaterThanOrEqualTo(previousEnd);
            previousEnd = end;
            long pages = ((end - 1) >>> 12) - (start >>> 12) + 1;
            assertThat(Long.parseLong(c.get("data-pages"))).isEqualTo(pages);
            long inside = touched.stream().filter(p -> p >= start >>> 12 && p <= (end - 1) >>> 12).count();
            assertThat(Long.parseLong(c.get("data-touched"))).as(c.get("data-region")).isEqualTo(inside);
            marked += inside;
        }
        assertThat(marked).as("every touched page lies in a region").isEqualTo(touched.size());
    }

    @Test
    void objectTableCountsTheLoadsAndStoresOfEachNamedObject() {
        List<List<String>> objects = table("objects");
        List<String> blocks = rows.stream().map(r -> r[9]).filter(s -> s.startsWith("<malloc")).distinct().toList();
        assertThat(blocks).hasSizeGreaterThanOrEqualTo(4);
        for (String name : blocks.subList(0, 3)) {
            List<String> row = objects.stream().filter(o -> o.getFirst().equals(name)).findFirst().orElseThrow();
            assertThat(row.get(5)).as(name + " loads").isEqualTo(String.format("%,d", count(name, "L")));
            assertThat(row.get(6)).as(name + " stores").isEqualTo(String.format("%,d", count(name, "S")));
            assertThat(row.get(1)).isEqualTo("heap");
            // the allocation site, last, under the functions inlined there (at the default depth, 12, a frame
            // names them: docs/stacks.md, "Inlined calls")
            String site = name.substring(name.indexOf('@') + 1, name.length() - 1);
            assertThat(row.get(2).lines().toList().getLast()).startsWith(site);
        }
        List<String> table = objects.stream().filter(o -> o.getFirst().equals("table")).findFirst().orElseThrow();
        assertThat(List.of(table.get(5), table.get(6))).containsExactly("512", "256");
        assertThat(table.get(1)).isEqualTo("global");
        assertThat(count("table", "L")).isEqualTo(512);
        // the three 528-byte blocks and the table have their own time x offset maps
        List<String> mapped = canvases("objectmap").stream().map(c -> c.get("data-object").replace("&lt;", "<").replace("&gt;", ">")).toList();
        assertThat(mapped).contains("table").containsAll(blocks.subList(0, 3));
    }

    @Test
    void everyAccessToFreedMemoryIsListedWithItsSites() {
        List<String[]> freed = rows.stream().filter(r -> r[9].startsWith("<freed:")).toList();
        assertThat(freed).hasSize(2);
        List<List<String>> listed = table("freed");
        assertThat(listed).hasSize(2);
        for (int i = 0; i < 2; i++) {
            String[] r = freed.get(i);
            List<String> row = listed.get(i);
            assertThat(row.get(0)).isEqualTo(String.format("%,d", Long.parseLong(r[0])));
            assertThat(row.get(1)).isEqualTo(r[1].equals("L") ? "load" : "store");
            // the access's instruction heads its call stack, file:line beside each frame (fault mode: docs/stacks.md)
            assertThat(row.get(2).lines().findFirst().orElseThrow()).startsWith(r[6] + "(").endsWith("/reportwalk.c:" + (34 + i) + ")");
            assertThat(row.get(4)).isEqualTo(r[9] + "+" + r[10]);
            String site = r[9].substring(r[9].indexOf('@') + 1, r[9].length() - 1);
            // memcheck's "allocated at": the site with its source line, even when the stack is the site alone
            assertThat(row.get(5)).startsWith(site + "(").endsWith("/reportwalk.c:31)");
            assertThat(row.get(6)).startsWith("main+").endsWith("/reportwalk.c:33)");
        }
        // the fixture's block of 64 bytes: one block, its site's reads and writes per byte over its usable size
        List<List<String>> sites = table("sites");
        String site = freed.getFirst()[9].substring(freed.getFirst()[9].indexOf('@') + 1, freed.getFirst()[9].length() - 1);
        assertThat(sites).anySatisfy(s -> assertThat(s.subList(0, 2)).containsExactly(site, "1"));
    }
}
