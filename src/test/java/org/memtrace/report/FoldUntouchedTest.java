package org.memtrace.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The page heat map's rows: long runs of untouched regions of one name are one row, everything else stays. */
class FoldUntouchedTest {
    private static Map<String, Object> row(String name, long start, long pages, boolean touched) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("start", "0x" + Long.toHexString(start));
        m.put("end", "0x" + Long.toHexString(start + pages * 4096));
        m.put("pages", pages);
        m.put("traced", true);
        m.put("touched", touched ? List.of(new long[] {0, 1, 0}) : List.of());
        return m;
    }

    @Test
    void aLongRunOfStubPagesIsOneRow() {
        List<Map<String, Object>> rows = new ArrayList<>();
        rows.add(row("libc.so.6", 0x1000, 2, true));
        // rewrite mode's one-page stubs: 20 untouched [anon] regions, a gap of one page between each
        for (int i = 0; i < 20; i++) rows.add(row("[anon]", 0x10000 + i * 0x2000L, 1, false));
        rows.add(row("[anon]", 0x40000, 1, true));
        List<Map<String, Object>> folded = Report.foldUntouched(rows);
        assertThat(folded).hasSize(3);
        Map<String, Object> run = folded.get(1);
        assertThat(run).containsEntry("name", "[anon]").containsEntry("start", "0x10000").containsEntry("end", "0x37000")
                .containsEntry("pages", 20L).containsEntry("regions", 20);
        assertThat(folded.get(2)).doesNotContainKey("regions");
    }

    @Test
    void shortRunsAndTouchedRegionsStayAsTheyAre() {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < Report.FOLDED_RUN - 1; i++) rows.add(row("libc.so.6", 0x1000 + i * 0x1000L, 1, false));
        rows.add(row("libc.so.6", 0x100000, 1, true));
        for (int i = 0; i < Report.FOLDED_RUN; i++) rows.add(row("[anon]", 0x200000 + i * 0x1000L, 1, i == 3));
        assertThat(Report.foldUntouched(rows)).isEqualTo(rows);
    }
}
