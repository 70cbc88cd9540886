package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;

/**
 * The report of the reportwalk fixture, used the way a person does: a script appended to a copy of the page
 * moves the mouse over the global {@code table}'s heat map, clicks table headings and drags across the map
 * (DOM mouse events through the page's own handlers), and writes what the page then shows (tooltip text,
 * row order, axis labels) into the DOM that headless chromium dumps. Every expected value comes from the
 * CSV export of the same saved stream.
 */
class ReportInteractionTest {
    @TempDir static Path dir;
    static JsonNode seen;
    static String dom;
    /** The CSV rows: seq,kind,store,address,size,ip,instruction,thread,region,symbol,offset. */
    static List<String[]> rows;

    /** What the appended script does and records: each entry a snapshot of the page after one action. */
    private static final String ACTIONS = """
            <pre id="results"></pre>
            <script>
            (function () {
              const out = {}, text = e => e ? e.textContent : null;
              const map = [...document.querySelectorAll('canvas.objectmap')].find(c => c.dataset.object === 'table');
              const plot = map.parentNode, axis = cls => [...plot.querySelectorAll('.' + cls + ' .tick')].map(text);
              const mouse = (target, type, x, y) => {
                const b = map.getBoundingClientRect();
                target.dispatchEvent(new MouseEvent(type, {clientX: b.left + x, clientY: b.top + y, bubbles: true}));
              };
              out.xTicks = axis('xaxis');
              out.yTicks = axis('yaxis');
              mouse(map, 'mousemove', 1, 1);
              out.tipTopLeft = text(document.getElementById('tip'));
              out.tipShown = document.getElementById('tip').style.display;
              mouse(map, 'mouseleave', 1, 1);
              out.tipAfterLeave = document.getElementById('tip').style.display;
              const names = () => [...document.querySelectorAll('#objects tbody tr')].map(tr => tr.children[0].textContent);
              const heading = name => [...document.querySelectorAll('#objects th')].find(h => h.firstChild.textContent === name);
              out.objectsAsWritten = names();
              heading('loads').click();
              out.byLoads = names();
              out.loadsSort = heading('loads').getAttribute('aria-sort');
              heading('loads').click();
              out.byLoadsReversed = names();
              heading('object').click();
              out.byName = names();
              // drag from the left edge to the middle of the map: a zoom on the columns under it
              mouse(map, 'mousedown', 0, 5);
              mouse(map, 'mousemove', 192, 5);
              mouse(window, 'mouseup', 192, 5);
              out.zoomedXTicks = axis('xaxis');
              out.zoomedCaption = text(plot.previousSibling);
              map.dispatchEvent(new MouseEvent('dblclick', {bubbles: true}));
              out.resetXTicks = axis('xaxis');
              // the page heat map: the first mark of the first region with a touched page
              const pages = [...document.querySelectorAll('canvas.pagemap')].find(c => c.dataset.touched !== '0');
              const pb = pages.getBoundingClientRect();
              pages.dispatchEvent(new MouseEvent('mousemove', {clientX: pb.left + 1, clientY: pb.top + 1, bubbles: true}));
              out.pageTip = text(document.getElementById('tip'));
              out.pageRegion = pages.dataset.region;
              out.pageStart = pages.dataset.start;
              out.summary = [...document.querySelectorAll('#summary td:first-child')].map(text);
              // the allocation tree: the root's counts, its children (counts | frames), then sorted by blocks
              const tree = () => document.querySelector('#tree > details'), root = tree();
              const kids = () => [...tree().children].filter(e => e.tagName !== 'SUMMARY' && !e.classList.contains('folded'))
                .map(e => e.tagName === 'DETAILS' ? e.querySelector('summary') : e)
                .map(e => e.querySelector('.counts').textContent + ' | ' + e.querySelector('.frames').textContent);
              out.treeRoot = text(root.querySelector('summary .counts'));
              out.treeOpen = root.open;
              out.treeByBytes = kids();
              document.querySelector('input[name=treeby][value=blocks]').click();
              out.treeByBlocks = kids();
              out.treeRootByBlocks = text(tree().querySelector('summary .counts'));
              out.renderedAt = performance.now();
              document.getElementById('results').textContent = JSON.stringify(out);
            })();
            </script>
            </body>""";

    @BeforeAll
    static void render() throws Exception {
        Path chromium = Path.of("/usr/bin/chromium");
        Assumptions.assumeTrue(Files.isExecutable(chromium),
                "chromium is not installed: run `. scripts/env.sh && memtrace_prereqs --with-test-tools` (CI does)");
        ReportWalk walk = ReportWalk.build(dir, "--stack-depth", "1");
        rows = walk.rows();
        Path html = walk.html();

        Path acted = dir.resolve("acted.html");
        String page = Files.readString(html);
        assertThat(page).contains("</body>");
        Files.writeString(acted, page.replace("</body>", ACTIONS));
        Path out = dir.resolve("dom.html");
        Process p = new ProcessBuilder(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--user-data-dir=" + dir.resolve("profile"), "--window-size=1400,1000", "--virtual-time-budget=10000", "--dump-dom",
                acted.toUri().toString())
                .redirectOutput(out.toFile()).redirectError(dir.resolve("chromium.err").toFile()).start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("chromium finished").isTrue();
        assertThat(p.exitValue()).as(Files.readString(dir.resolve("chromium.err"))).isZero();
        dom = Files.readString(out);
        Matcher m = Pattern.compile("<pre id=\"results\">(.*?)</pre>", Pattern.DOTALL).matcher(dom);
        assertThat(m.find()).as("the actions ran").isTrue();
        assertThat(m.group(1)).as(dom.substring(0, Math.min(dom.length(), 3000))).isNotEmpty();
        seen = new ObjectMapper().readTree(m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"));
    }

    private static ObjectAccesses table() { return ObjectAccesses.of(rows, "table"); }

    private static List<String> texts(String field) {
        List<String> l = new ArrayList<>();
        seen.get(field).forEach(n -> l.add(n.asText()));
        return l;
    }

    private static String n(long v) { return String.format("%,d", v); }

    @Test
    void noScriptError() {
        assertThat(dom).contains("data-rendered=\"yes\"").contains("<div id=\"errors\"></div>");
    }

    /** The time axis runs from table's first access to its last, exactly; offsets from 0 to 1,024 bytes. */
    @Test
    void axesEndAtTheExactFirstAndLastAccess() {
        List<String> x = texts("xTicks");
        assertThat(x.getFirst()).isEqualTo(n(table().first()));
        assertThat(x.getLast()).isEqualTo(n(table().last()));
        List<String> y = texts("yTicks");
        assertThat(y.getFirst()).isEqualTo("0");
        assertThat(y.getLast()).isEqualTo("+1,024");
    }

    /** The top-left cell: the first column's events, bytes 0..31 (1,024 bytes over 32 rows), its loads and stores. */
    @Test
    void tooltipNamesTheCellUnderTheMouse() {
        long from = table().first(), to = table().first() + table().perColumn() - 1;
        List<String[]> cell = table().rows().stream().filter(r -> Long.parseLong(r[0]) <= to && Long.parseLong(r[10]) < 32).toList();
        long start = Long.parseUnsignedLong(table().rows().getFirst()[3]) - Long.parseLong(table().rows().getFirst()[10]);
        long loads = cell.stream().filter(r -> r[1].equals("L")).count(), stores = cell.size() - loads;
        assertThat(stores).isPositive();
        assertThat(seen.get("tipShown").asText()).isEqualTo("block");
        assertThat(seen.get("tipTopLeft").asText()).isEqualTo("table\nevents " + n(from) + ".." + n(to) + "\noffset 0..31\naddress 0x"
                + Long.toHexString(start) + "-0x" + Long.toHexString(start + 31) + "\n" + n(loads) + " loads, " + n(stores) + " stores");
        assertThat(seen.get("tipAfterLeave").asText()).isEqualTo("none");
    }

    /** A click on a heading sorts by it (numbers biggest first), a second reverses; names sort in order. */
    @Test
    void headingsSortTheObjectTable() {
        List<String> written = texts("objectsAsWritten");
        assertThat(written).hasSizeGreaterThan(4);
        List<long[]> loads = new ArrayList<>();
        List<List<String>> objectRows = objectRows();
        for (int i = 0; i < objectRows.size(); i++) loads.add(new long[] {Long.parseLong(objectRows.get(i).get(5).replace(",", "")), i});
        // ties keep the written order
        List<String> byLoads = loads.stream().sorted(Comparator.comparingLong((long[] l) -> -l[0]).thenComparingLong(l -> l[1]))
                .map(l -> written.get((int) l[1])).toList();
        assertThat(texts("byLoads")).isEqualTo(byLoads);
        assertThat(seen.get("loadsSort").asText()).isEqualTo("descending");
        List<String> reversed = loads.stream().sorted(Comparator.comparingLong((long[] l) -> l[0]).thenComparingLong(l -> l[1]))
                .map(l -> written.get((int) l[1])).toList();
        assertThat(texts("byLoadsReversed")).isEqualTo(reversed);
        List<String> byName = texts("byName");
        assertThat(byName).containsExactlyInAnyOrderElementsOf(written);
        assertThat(byName.indexOf("table")).isGreaterThan(byName.indexOf("[stack]"));
    }

    /** The table as the page left it (sorted by name, the last click): object, kind, site, size, lifetime, loads, stores. */
    private static List<List<String>> objectRows() {
        Matcher t = Pattern.compile("<table id=\"objects\">(.*?)</table>", Pattern.DOTALL).matcher(dom);
        assertThat(t.find()).isTrue();
        List<List<String>> result = new ArrayList<>();
        Matcher tr = Pattern.compile("<tr>(.*?)</tr>", Pattern.DOTALL).matcher(t.group(1));
        while (tr.find()) {
            List<String> cells = new ArrayList<>();
            Matcher td = Pattern.compile("<td[^>]*>(.*?)</td>", Pattern.DOTALL).matcher(tr.group(1));
            while (td.find()) cells.add(td.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"));
            if (!cells.isEmpty()) result.add(cells);
        }
        // back to the written order (loads, most first, then name), the order objectsAsWritten holds
        List<String> written = texts("objectsAsWritten");
        result.sort(Comparator.comparingInt(r -> written.indexOf(r.getFirst())));
        return result;
    }

    /** Dragging over the left half zooms on the columns under it (snapped to whole columns); a double-click undoes it. */
    @Test
    void dragZoomsOnWholeColumnsAndDoubleClickUndoes() {
        long n = table().last() - table().first() + 1, per = table().perColumn();
        long to = table().first() + (long) Math.floor(192.0 / 384 * n);
        long column = (to - table().first()) / per;
        long end = Math.min(table().last(), table().first() + (column + 1) * per - 1);
        List<String> x = texts("zoomedXTicks");
        assertThat(x.getFirst()).isEqualTo(n(table().first()));
        assertThat(x.getLast()).isEqualTo(n(end));
        assertThat(end).isLessThan(table().last());
        assertThat(seen.get("zoomedCaption").asText()).startsWith("events " + n(table().first()) + ".." + n(end) + " (zoomed;");
        assertThat(texts("resetXTicks").getLast()).isEqualTo(n(table().last()));
    }

    /** The page map's tooltip names the region and the page under the mouse, with its reads and writes. */
    @Test
    void pageMapTooltipNamesThePage() {
        long start = Long.parseUnsignedLong(seen.get("pageStart").asText().substring(2), 16) & ~4095L;
        assertThat(seen.get("pageTip").asText()).matches(java.util.regex.Pattern.quote(seen.get("pageRegion").asText()
                + "\npage 0x" + Long.toHexString(start) + "-0x" + Long.toHexString(start + 4096) + "\n") + "[\\d,]+ reads, [\\d,]+ writes");
    }

    /** The summary's counts under memtrace's words, not JSON keys. */
    @Test
    void summaryInWords() {
        List<String> labels = texts("summary");
        assertThat(labels).contains("memory regions", "loads", "stores", "block copies", "events lost");
        assertThat(labels).noneMatch(l -> l.matches(".*[A-Z].*"));
    }

    /** The allocation tree: all allocations at the root, one child per call site (no stacks recorded), re-sorted on demand. */
    @Test
    void allocationTreeSplitsByCallSite() {
        // stdio's buffer, the three 528-byte blocks walked word by word (a load and a store per byte), the freed one
        assertThat(seen.get("treeOpen").asBoolean()).isTrue();
        assertThat(seen.get("treeRoot").asText()).startsWith("5,744 bytes (100.0 %) in 5 blocks, ").endsWith("; 5 program points");
        List<String> byBytes = texts("treeByBytes");
        assertThat(byBytes).hasSize(5);
        assertThat(byBytes.getFirst()).isEqualTo("4,096 bytes (71.3 %) in 1 block, read 0.00, written 0.00 per byte, at most 4,096 bytes live"
                + " | at _IO_file_doallocate+140");
        assertThat(byBytes.subList(1, 4)).allMatch(l -> l.matches("528 bytes \\(9\\.2 %\\) in 1 block, read 1\\.00, written 1\\.00 per byte,"
                + " at most 528 bytes live \\| at main\\+\\d+"), "the walked blocks");
        assertThat(byBytes.getLast()).matches("64 bytes \\(1\\.1 %\\) in 1 block, .* at most 64 bytes live \\| at main\\+\\d+");
        // sorted by blocks (all ties: the order stays), the share moves to the blocks
        assertThat(texts("treeByBlocks")).allMatch(l -> l.contains(" in 1 block (20.0 %), "));
        assertThat(seen.get("treeRootByBlocks").asText()).startsWith("5,744 bytes in 5 blocks (100.0 %), ");
    }

    /** A scalar (sink: one int, one store) gets a table row when hot enough, never a map. */
    @Test
    void scalarsGetNoMap() {
        assertThat(texts("objectsAsWritten")).contains("sink");
        assertThat(dom).doesNotContain("data-object=\"sink\"");
        assertThat(dom).contains("data-object=\"table\"");
    }
}
