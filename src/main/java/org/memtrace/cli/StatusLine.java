package org.memtrace.cli;

import java.io.PrintWriter;

/**
 * A status line on the terminal's bottom row that the traced program's output never mixes with: the rows
 * above become the terminal's scrolling region (DECSTBM, as apt's progress bar does), so the program's lines
 * and memtrace's own messages scroll there, and the bottom row is drawn with the cursor saved and restored
 * around it (DECSC/DECRC), so a program halfway through a line goes on where it was. Each update is one
 * write(2), which the terminal driver never interleaves with the program's writes.
 *
 * <p>What it gets wrong: a program that takes the whole screen (curses, an editor) or saves the cursor
 * itself draws over the line or has it drawn over its bottom row ({@code --no-progress}); a memtrace killed
 * with SIGKILL leaves the scrolling region set ({@code reset} or {@code tput csr} restores it). A terminal
 * that shrank below three rows gets no line.
 */
final class StatusLine {
    private final PrintWriter err;
    /** The rows the scrolling region was set for; 0 while none is set. */
    private int rows;

    StatusLine(PrintWriter err) {
        this.err = err;
    }

    /** Draws {@code text} on the bottom row of a terminal of {@code size}, cut to fit; nothing on a tiny one. */
    synchronized void show(String text, Terminal.Size size) {
        if (size == null || size.rows() < 3 || size.columns() < 10) {
            clear();
            return;
        }
        StringBuilder s = new StringBuilder();
        if (rows != size.rows()) {
            if (rows != 0) s.append(clearRow(rows));
            // index down and back up (IND, RI: the column stays): a cursor on the bottom row scrolls the screen up
            // one row and ends above it, a program's half-written line with it; then the region, cursor kept
            s.append("\033D\033M\0337\033[1;").append(size.rows() - 1).append("r\0338");
            rows = size.rows();
        }
        String cut = text.length() < size.columns() ? text : text.substring(0, size.columns() - 1);
        s.append("\0337\033[").append(rows).append(";1H\033[2K").append(cut).append("\0338");
        err.print(s);
        err.flush();
    }

    /** Clears the line and gives the terminal its whole screen back; nothing when no line was drawn. */
    synchronized void clear() {
        if (rows == 0) return;
        err.print(clearRow(rows) + "\0337\033[r\0338");
        err.flush();
        rows = 0;
    }

    private static String clearRow(int row) {
        return "\0337\033[" + row + ";1H\033[2K\0338";
    }
}
