/**
 * memtrace skeleton --emit-c: a .mtr trace as a C program and its logged input, which print the run's data
 * accesses again (docs/skeleton-c.md). It must not depend on the recorders, the analyses or the command line
 * (launch, analysis, cli).
 */
package org.memtrace.skeleton;
