package org.memtrace.symbols;

import static org.memtrace.symbols.Dwarf.*;

import java.util.HashMap;
import java.util.Map;

/**
 * The compilation directory ({@code DW_AT_comp_dir}) of each compilation unit, by the offset of its line table
 * ({@code DW_AT_stmt_list}). A DWARF 4 line table leaves its directory 0 implicit: it is the unit's
 * compilation directory, which only {@code .debug_info} holds; {@link DwarfLines} joins it to relative file
 * names so that a source compiled as {@code gcc -c src/a.c} in {@code /home/me/proj} is found as
 * {@code /home/me/proj/src/a.c} from any working directory, as addr2line and gdb find it (DWARF 5 tables
 * carry it themselves).
 *
 * <p>Reads each unit's first DIE only. Any flaw gives no directories at all (names stay as compiled, found
 * through {@code --source-dir} as before): a guess from half a section could name a wrong file.
 */
final class DwarfCompDirs {
    private DwarfCompDirs() {}

    /** Line-table offset to absolute compilation directory; empty when the section cannot be read. */
    static Map<Long, String> read(DwarfSections s) {
        Map<Long, String> dirs = new HashMap<>();
        try {
            Map<Long, DwarfAbbrev[]> tables = new HashMap<>();
            DwarfForm f = new DwarfForm();
            DwarfCursor c = new DwarfCursor(s.info());
            while (c.position < c.limit) {
                DwarfUnit u = DwarfUnit.read(c, s, tables);
                c.position = u.end();
                DwarfCursor d = new DwarfCursor(s.info());
                d.position = u.firstDie();
                d.limit(u.end());
                long code = d.uleb();
                if (code <= 0 || code >= u.abbrevs().length || u.abbrevs()[(int) code] == null) continue;
                DwarfAbbrev a = u.abbrevs()[(int) code];
                if (a.tag() != TAG_COMPILE_UNIT && a.tag() != TAG_PARTIAL_UNIT) continue;
                long stmtList = -1;
                String dir = null;
                for (int i = 0; i < a.attributes().length; i++) {
                    f.read(d, u, a.forms()[i], a.implicitConstants()[i]);
                    if (a.attributes()[i] == AT_STMT_LIST && (f.kind == DwarfForm.Kind.SECTION_OFFSET || f.kind == DwarfForm.Kind.CONSTANT)) stmtList = f.value;
                    else if (a.attributes()[i] == AT_COMP_DIR && f.isString()) dir = string(s, u, f);
                }
                if (stmtList >= 0 && dir != null && dir.startsWith("/")) dirs.put(stmtList, dir);
            }
        } catch (DwarfException | RuntimeException e) {
            // A flaw anywhere: no directory is trusted (see the class comment); names stay as compiled.
            return Map.of();
        }
        return dirs;
    }

    private static String string(DwarfSections s, DwarfUnit u, DwarfForm f) throws DwarfException {
        return switch (f.kind) {
            case INLINE_STRING -> DwarfCursor.stringAt(s.info(), f.value, ".debug_info");
            case STRING_OFFSET -> f.form == FORM_LINE_STRP
                    ? DwarfCursor.stringAt(s.lineStr(), f.value, ".debug_line_str")
                    : DwarfCursor.stringAt(s.str(), f.value, ".debug_str");
            default -> s.indexedString(u, f.value);
        };
    }
}
