/*
 * memtrace public API for traced programs: bound the part of the run that is recorded.
 *
 *     #include "memtrace.h"
 *     memtrace_start();   ... accesses recorded here ...   memtrace_stop();
 *
 * Run under `memtrace run --no-autostart` to record only between the calls (by default recording starts
 * right before main). The functions are declared weak and every call checks that they are present, so a
 * program using them builds with plain gcc and runs normally without memtrace. MadT__start/MadT__stop
 * are the MadT paper's names for the same two calls.
 */
#ifndef MEMTRACE_H
#define MEMTRACE_H

#ifdef __cplusplus
extern "C" {
#endif

void memtrace_start(void) __attribute__((weak));
void memtrace_stop(void) __attribute__((weak));
void MadT__start(void) __attribute__((weak));
void MadT__stop(void) __attribute__((weak));

#define memtrace_start() do { if (memtrace_start) (memtrace_start)(); } while (0)
#define memtrace_stop() do { if (memtrace_stop) (memtrace_stop)(); } while (0)
#define MadT__start() do { if (MadT__start) (MadT__start)(); } while (0)
#define MadT__stop() do { if (MadT__stop) (MadT__stop)(); } while (0)

#ifdef __cplusplus
}
#endif

#endif
