/**
 * The command line: one picocli command per user command (run, cc, print, analyze, cachesim, convert, report,
 * skeleton), which parse options, open inputs and outputs, pick the recorder or reader, assemble the
 * interpretation stage with its analyses, and turn the outcome into one line per problem and an exit status.
 * Nothing depends on it; it holds no logic another command or package would need (that lives in the package
 * whose job it is).
 */
package org.memtrace.cli;
