/**
 * memtrace cc's driver: what a call runs (CcPlan, shared by the CLI's own path and the server) and the compile
 * server that plans the calls and runs the as steps of a build in one JVM (CcServer, its wire format CcRequest;
 * docs/compiled-in.md, "The compile server"). It uses the rewriter (instrument) and the native files (launch);
 * it must not depend on the commands (cli) nor on the reading side (mtr, trace, analysis, madt, report, export).
 */
package org.memtrace.cc;
