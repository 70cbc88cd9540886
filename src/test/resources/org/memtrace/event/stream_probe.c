/*
 * stream_probe.c: prints the event stream's layout as agent/include/memtrace_stream.h defines it (the ring's
 * header page, the record header, the record types and flag values), one "name value" line each, for
 * StreamLayoutProbeTest to compare with org.memtrace.event.StreamLayout's constants. It checks the constants
 * both sides name, not the records' field offsets, which the Java decoder spells where it reads them.
 */
#include <stddef.h>
#include <stdio.h>

#include "memtrace_stream.h"

#define P(name, value) printf("%s %llu\n", name, (unsigned long long)(value))

int main(void)
{
    P("MAGIC", MT_MAGIC);
    P("VERSION", MT_VERSION);
    P("HEADER_SIZE", MT_HEADER_SIZE);
    P("OFF_MAGIC", offsetof(struct mt_ring_header, magic));
    P("OFF_VERSION", offsetof(struct mt_ring_header, version));
    P("OFF_HEADER_SIZE", offsetof(struct mt_ring_header, header_size));
    P("OFF_CAPACITY", offsetof(struct mt_ring_header, capacity));
    P("OFF_AGENT_PID", offsetof(struct mt_ring_header, agent_pid));
    P("OFF_HEAD", offsetof(struct mt_ring_header, head));
    P("OFF_TAIL", offsetof(struct mt_ring_header, tail));
    P("OFF_LOST", offsetof(struct mt_ring_header, lost));
    P("OFF_DONE", offsetof(struct mt_ring_header, done));
    P("RECORD_HEADER_SIZE", sizeof(struct mt_rec_header));
    P("MT_PAD", MT_PAD);
    P("MT_HELLO", MT_HELLO);
    P("MT_ACCESS", MT_ACCESS);
    P("MT_BLOCK", MT_BLOCK);
    P("MT_ALLOC", MT_ALLOC);
    P("MT_MODULE", MT_MODULE);
    P("MT_MAPPING", MT_MAPPING);
    P("MT_RANGE", MT_RANGE);
    P("MT_THREAD", MT_THREAD);
    P("MT_CONTROL", MT_CONTROL);
    P("MT_EXIT", MT_EXIT);
    P("MT_STATS", MT_STATS);
    P("MT_FORK", MT_FORK);
    P("MT_WRITER", MT_WRITER);
    P("MT_FALLBACK", MT_FALLBACK);
    P("ACC_WRITE", MT_ACC_WRITE);
    P("ACC_SAME_STEP", MT_ACC_SAME_STEP);
    P("BLK_OP_MASK", MT_BLK_OP_MASK);
    P("BLK_SYSCALL", MT_BLK_SYSCALL);
    P("WRITER_NONE", MT_WRITER_NONE);
    P("MAP_TRACED", MT_MAP_TRACED);
    P("RANGE_ADD", MT_RANGE_ADD);
    P("RANGE_REMOVE", MT_RANGE_REMOVE);
    P("THREAD_START", MT_THREAD_START);
    P("THREAD_EXIT", MT_THREAD_EXIT);
    P("CTL_START", MT_CTL_START);
    P("CTL_STOP", MT_CTL_STOP);
    P("EXIT_NORMAL", MT_EXIT_NORMAL);
    P("EXIT_EXEC", MT_EXIT_EXEC);
    P("EXIT_SIGNAL", MT_EXIT_SIGNAL);
    P("EXIT_EXEC_FAILED", MT_EXIT_EXEC_FAILED);
    return 0;
}
