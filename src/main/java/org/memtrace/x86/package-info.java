/**
 * The x86-64 model shared by the static and the dynamic side: Zydis 4 through the Foreign Function and Memory
 * API with hand-written layouts, and plain records for instructions, operands, registers and memory accesses.
 * It must not depend on any other memtrace package.
 */
package org.memtrace.x86;
