/**
 * What every command says about a file it could not read or write: {@link org.memtrace.io.IoReason}. A leaf:
 * it depends on no other memtrace package, so that {@code launch}, {@code cli} and {@code report}, which may not
 * use one another, give the same words for the same failure.
 */
package org.memtrace.io;
