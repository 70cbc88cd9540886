package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.DevTools;

/**
 * The report of the reportwalk fixture in headless chromium, driven through the DevTools protocol the way a
 * person uses it: the mouse (Input.dispatchMouseEvent) clicks a heading, hovers a heat-map cell, drags a
 * zoom; the page's console, log and uncaught exceptions are watched from before it loads; screenshots are
 * written to target/report-screenshots/ to be looked at. Expected values come from the CSV export of the
 * same saved stream and from the fixture's code. The tests run in order: each acts on the page as the
 * previous one left it.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReportDevToolsTest {
    @TempDir static Path dir;
    static DevTools browser;
    static Path source;
    /** The CSV rows: seq,kind,store,address,size,ip,instruction,thread,region,symbol,offset,source. */
    static List<String[]> rows;
    static final Path SCREENSHOTS = Path.of("target", "report-screenshots");

    @BeforeAll
    static void load() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(DevTools.CHROMIUM),
                "chromium is not installed: run `. scripts/env.sh && memtrace_prereqs --with-test-tools` (CI does)");
        ReportWalk walk = ReportWalk.build(dir, "--stack-depth", "1");
        source = dir.resolve("reportwalk.c");
        rows = walk.rows();
        Path html = walk.html();

        browser = DevTools.start(dir.resolve("profile"), 1400, 900);
        // watched before the page loads, so nothing it says while loading is missed
        browser.send("Runtime.enable");
        browser.send("Log.enable");
        browser.send("Page.enable");
        browser.navigate(html.toUri());
        Files.createDirectories(SCREENSHOTS);
    }

    @AfterAll
    static void close() throws Exception {
        if (browser != null) browser.close();
    }

    /** The centre (or, with dx/dy, a point from the top left) of the first element {@code selector} finds, scrolled into view. */
    private static double[] at(String selector) {
        JsonNode b = browser.evaluate("(() => { const e = " + selector + "; e.scrollIntoView({block: 'center'});"
                + " const b = e.getBoundingClientRect(); return [b.left, b.top, b.width, b.height]; })()");
        return new double[] {b.get(0).asDouble(), b.get(1).asDouble(), b.get(2).asDouble(), b.get(3).asDouble()};
    }

    private static List<String> strings(String expression) {
        List<String> l = new ArrayList<>();
        browser.evaluate(expression).forEach(n -> l.add(n.asText()));
        return l;
    }

    private static void screenshot(String name) throws Exception {
        byte[] png = browser.screenshot();
        assertThat(png).startsWith(0x89, 'P', 'N', 'G');
        Files.write(SCREENSHOTS.resolve(name + ".png"), png);
    }

    private static ObjectAccesses table() { return ObjectAccesses.of(rows, "table"); }

    private static String n(long v) { return String.format("%,d", v); }

    private static final String TABLE_MAP = "[...document.querySelectorAll('canvas.objectmap')].find(c => c.dataset.object === 'table')";

    /** Hovering the global table's top-left cell shows its events, offsets, addresses, loads and stores; leaving hides it. */
    @Test
    @Order(1)
    void hoverShowsTheCellsTooltip() throws Exception {
        double[] map = at(TABLE_MAP);
        browser.mouse("mouseMoved", map[0] + 1, map[1] + 1, "none");
        long from = table().first(), to = table().first() + table().perColumn() - 1;
        List<String[]> cell = table().rows().stream().filter(r -> Long.parseLong(r[0]) <= to && Long.parseLong(r[10]) < 32).toList();
        long start = Long.parseUnsignedLong(table().rows().getFirst()[3]) - Long.parseLong(table().rows().getFirst()[10]);
        long loads = cell.stream().filter(r -> r[1].equals("L")).count(), stores = cell.size() - loads;
        assertThat(stores).isPositive();
        assertThat(browser.evaluate("document.getElementById('tip').textContent").asText()).isEqualTo("table\nevents " + n(from) + ".."
                + n(to) + "\noffset 0..31\naddress 0x" + Long.toHexString(start) + "-0x" + Long.toHexString(start + 31) + "\n"
                + n(loads) + " loads, " + n(stores) + " stores");
        assertThat(browser.evaluate("getComputedStyle(document.getElementById('tip')).display").asText()).isEqualTo("block");
        screenshot("tooltip");
        browser.mouse("mouseMoved", map[0] - 30, map[1] - 30, "none");
        assertThat(browser.evaluate("getComputedStyle(document.getElementById('tip')).display").asText()).isEqualTo("none");
    }

    /** Dragging over the left half zooms on the columns under it; a double-click shows the whole span again. */
    @Test
    @Order(2)
    void dragZoomsAndDoubleClickUndoes() throws Exception {
        double[] map = at(TABLE_MAP);
        String ticks = TABLE_MAP + ".parentNode.querySelectorAll('.xaxis .tick')";
        double y = map[1] + 5;
        // from the left edge to the middle of the canvas (its width W, in CSS pixels as drawn)
        double half = browser.evaluate(TABLE_MAP + ".width").asDouble() / 2;
        browser.mouse("mouseMoved", map[0], y, "none");
        browser.mouse("mousePressed", map[0], y, "left");
        browser.mouse("mouseMoved", map[0] + half / 2, y, "left");
        browser.mouse("mouseMoved", map[0] + half, y, "left");
        browser.mouse("mouseReleased", map[0] + half, y, "left");
        long per = table().perColumn();
        long to = table().first() + (long) Math.floor(0.5 * (table().last() - table().first() + 1));
        long end = Math.min(table().last(), table().first() + ((to - table().first()) / per + 1) * per - 1);
        List<String> zoomed = strings("[..." + ticks + "].map(t => t.textContent)");
        assertThat(zoomed.getFirst()).isEqualTo(n(table().first()));
        assertThat(zoomed.getLast()).isEqualTo(n(end));
        assertThat(end).isLessThan(table().last());
        screenshot("zoomed");
        browser.mouse("mousePressed", map[0] + 10, y, "left");
        browser.mouse("mouseReleased", map[0] + 10, y, "left");
        browser.send("Input.dispatchMouseEvent", Map.of("type", "mousePressed", "x", map[0] + 10, "y", y, "button", "left", "buttons", 1, "clickCount", 2));
        browser.send("Input.dispatchMouseEvent", Map.of("type", "mouseReleased", "x", map[0] + 10, "y", y, "button", "left", "buttons", 0, "clickCount", 2));
        assertThat(strings("[..." + ticks + "].map(t => t.textContent)").getLast()).isEqualTo(n(table().last()));
    }

    /** A click on the loads heading sorts the objects by loads, most first; a second click reverses. */
    @Test
    @Order(3)
    void clickOnAHeadingSorts() throws Exception {
        String names = "[...document.querySelectorAll('#objects tbody tr')].map(tr => tr.children[0].textContent)";
        String loadsCells = "[...document.querySelectorAll('#objects tbody tr')].map(tr => tr.children[5].textContent)";
        String heading = "[...document.querySelectorAll('#objects th')].find(h => h.firstChild.textContent === 'loads')";
        List<String> written = strings(names);
        List<String> loads = strings(loadsCells);
        assertThat(written).hasSizeGreaterThan(4);
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < written.size(); i++) order.add(i);
        Comparator<Integer> byLoads = Comparator.comparingLong(i -> Long.parseLong(loads.get(i).replace(",", "")));
        double[] h = at(heading);
        browser.click(h[0] + h[2] / 2, h[1] + h[3] / 2);
        assertThat(strings(names)).isEqualTo(order.stream().sorted(byLoads.reversed().thenComparing(i -> i)).map(written::get).toList());
        assertThat(browser.evaluate(heading + ".getAttribute('aria-sort')").asText()).isEqualTo("descending");
        screenshot("sorted");
        browser.click(h[0] + h[2] / 2, h[1] + h[3] / 2);
        assertThat(strings(names)).isEqualTo(order.stream().sorted(byLoads.thenComparing(i -> i)).map(written::get).toList());
        assertThat(browser.evaluate(heading + ".getAttribute('aria-sort')").asText()).isEqualTo("ascending");
    }

    /**
     * The cache section: the line filling table (256 stores) misses L1 and L2 once per 64-byte line, the
     * line summing it twice (512 loads) always hits; the annotated source shows those lines of reportwalk.c
     * with these counts beside them.
     */
    @Test
    @Order(4)
    void cacheMissesBySourceLineAndAnnotatedSource() throws Exception {
        List<String> fixture = Files.readAllLines(source);
        int storeLine = fixture.indexOf("    for (int i = 0; i < 256; i++) table[i] = i;") + 1;
        int loadLine = fixture.indexOf("        for (int i = 0; i < 256; i++) sum += table[i];") + 1;
        assertThat(storeLine).isPositive();
        assertThat(loadLine).isPositive();
        List<String> headings = strings("[...document.querySelectorAll('#cachelines th')].map(h => h.firstChild.textContent)");
        assertThat(headings).containsExactly("source line", "loads", "stores", "L1 load misses", "L1 store misses", "L2 load misses", "L2 store misses");
        String rowOf = "[...document.querySelectorAll('#cachelines tbody tr')].map(tr => [...tr.children].map(td => td.textContent))"
                + ".find(r => r[0] === %s)";
        assertThat(strings(String.format(rowOf, "'" + source + ":" + storeLine + "'"))).containsExactly(source + ":" + storeLine, "0", "256", "0", "16", "0", "16");
        assertThat(strings(String.format(rowOf, "'" + source + ":" + loadLine + "'"))).containsExactly(source + ":" + loadLine, "512", "0", "0", "0", "0", "0");
        // the annotated file: its path, then the source lines with their counts; the text is the file's, as text
        assertThat(browser.evaluate("document.querySelector('#annotated .srcfile').textContent").asText()).isEqualTo(source.toString());
        String annotated = "[...document.querySelector('#annotated table.src').rows].map(tr => [...tr.cells].map(td => td.textContent))";
        JsonNode shown = browser.evaluate(annotated);
        List<String> store = null, load = null;
        for (JsonNode row : shown) {
            List<String> cells = new ArrayList<>();
            row.forEach(c -> cells.add(c.asText()));
            if (cells.size() == 8 && cells.get(6).equals(String.valueOf(storeLine))) store = cells;
            if (cells.size() == 8 && cells.get(6).equals(String.valueOf(loadLine))) load = cells;
        }
        assertThat(store).containsExactly(".", "256", ".", "16", ".", "16", String.valueOf(storeLine), fixture.get(storeLine - 1));
        assertThat(load).containsExactly("512", ".", ".", ".", ".", ".", String.valueOf(loadLine), fixture.get(loadLine - 1));
        at("document.querySelector('#annotated table.src')");
        screenshot("annotated");
    }

    /** Nothing went wrong on the way: no uncaught exception, no console error or warning, no log error. */
    @Test
    @Order(5)
    void noConsoleErrorNorException() {
        assertThat(browser.evaluate("document.body.dataset.rendered").asText()).isEqualTo("yes");
        assertThat(browser.evaluate("document.getElementById('errors').textContent").asText()).isEmpty();
        assertThat(browser.events("Runtime.exceptionThrown")).isEmpty();
        assertThat(browser.events("Runtime.consoleAPICalled")).noneMatch(e -> List.of("error", "warning", "assert").contains(e.path("type").asText()));
        assertThat(browser.events("Log.entryAdded")).noneMatch(e -> e.path("entry").path("level").asText().equals("error"));
        // the protocol does report them: a console error made on purpose arrives
        browser.evaluate("console.error('probe')");
        assertThat(browser.events("Runtime.consoleAPICalled")).anyMatch(e -> e.path("type").asText().equals("error"));
    }
}
