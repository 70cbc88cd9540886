package org.memtrace.instrument;

import java.util.ArrayList;
import java.util.List;

/**
 * The one syntax memtrace uses to put several option words into one string: {@code MEMTRACE_CC_FLAGS}
 * (written by users), {@code MEMTRACE_CC_OPTIONS} (the driver's hand-over to the rewriter) and the options a
 * cc-built object records. It is the shell's, minus expansion: words are separated by unquoted blanks;
 * {@code '...'} keeps everything up to the next {@code '} literally; inside {@code "..."} a backslash
 * escapes only {@code "} and {@code \}; outside quotes a backslash keeps the next character literally. So a
 * value copied from a shell command line means the same here, and {@link #join} output reads back exactly.
 */
public final class OptionWords {
    private OptionWords() {
    }

    /**
     * The words of {@code text}; none for null or blank text.
     *
     * @throws IllegalArgumentException with a one-line message for an unterminated quote or a trailing backslash
     */
    public static List<String> split(String text) {
        var words = new ArrayList<String>();
        if (text == null) {
            return words;
        }
        var word = new StringBuilder();
        boolean inWord = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case ' ', '\t', '\n', '\r' -> {
                    if (inWord) {
                        words.add(word.toString());
                        word.setLength(0);
                        inWord = false;
                    }
                }
                case '\'' -> {
                    int close = text.indexOf('\'', i + 1);
                    if (close < 0) {
                        throw new IllegalArgumentException("unterminated ' quote at column " + (i + 1) + " of '" + text + "'");
                    }
                    word.append(text, i + 1, close);
                    inWord = true;
                    i = close;
                }
                case '"' -> {
                    int j = i + 1;
                    for (; j < text.length() && text.charAt(j) != '"'; j++) {
                        char d = text.charAt(j);
                        if (d == '\\' && j + 1 < text.length() && (text.charAt(j + 1) == '"' || text.charAt(j + 1) == '\\')) {
                            d = text.charAt(++j);
                        }
                        word.append(d);
                    }
                    if (j >= text.length()) {
                        throw new IllegalArgumentException("unterminated \" quote at column " + (i + 1) + " of '" + text + "'");
                    }
                    inWord = true;
                    i = j;
                }
                case '\\' -> {
                    if (i + 1 >= text.length()) {
                        throw new IllegalArgumentException("a backslash ends '" + text + "': nothing to escape");
                    }
                    word.append(text.charAt(++i));
                    inWord = true;
                }
                default -> {
                    word.append(c);
                    inWord = true;
                }
            }
        }
        if (inWord) {
            words.add(word.toString());
        }
        return words;
    }

    /** One string that {@link #split} (and a POSIX shell) reads back as exactly {@code words}. */
    public static String join(List<String> words) {
        var out = new StringBuilder();
        for (String w : words) {
            if (!out.isEmpty()) {
                out.append(' ');
            }
            out.append(plain(w) ? w : "'" + w.replace("'", "'\\''") + "'");
        }
        return out.toString();
    }

    /** Characters that mean nothing special to split or to a shell, so the word needs no quotes. */
    private static boolean plain(String w) {
        if (w.isEmpty()) {
            return false;
        }
        for (int i = 0; i < w.length(); i++) {
            char c = w.charAt(i);
            if (!(Character.isLetterOrDigit(c) || "-_=.,/:+@%".indexOf(c) >= 0)) {
                return false;
            }
        }
        return true;
    }
}
