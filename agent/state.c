/*
 * memtrace agent, its state: the one process-wide state (g, under g.lock; agent.h's struct agent_state), the
 * real functions the wrappers call, and each thread's own (ts, and the out-of-line step's stack and scratch
 * word, initial-exec TLS so that the fault path reads them without a call); and the end of a critical
 * section, which sends again the program's signals deferred while it ran (on_program_signal, fault.c).
 *
 * How its output reads: it writes no record; every other file of the agent reads and writes this state.
 *
 * What it gets wrong: a thread's state is found through the thread pointer, so code that runs on a thread
 * the agent never saw start (a raw clone, refused by limits.c) would share another's; at most as many
 * signals as ts.deferred holds are kept during a critical section, the others are lost.
 */
#include "agent.h"

struct agent_state g;
struct real_functions real;
int hooks_ready;
__thread struct thread_state ts __attribute__((tls_model("initial-exec")));
__thread uintptr_t mt_ool_stack __attribute__((tls_model("initial-exec")));
__thread uint64_t mt_scratch_save __attribute__((tls_model("initial-exec")));

/* Signals that arrived during an out-of-line step, sent again now that it is over: the kernel delivers */
/* each to the program's handler as it would have (same siginfo), on return from the call.             */
void redeliver_deferred(void)
{
    while (ts.ndeferred) {
        siginfo_t si;
        mt_memcpy(&si, &ts.deferred[--ts.ndeferred], sizeof si);
        mt_sys4(SYS_rt_tgsigqueueinfo, g.pid, mytid(), si.si_signo, &si);
    }
}

void leave_critical(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (--ts.critical == 0 && ts.ndeferred && ts.stepping != STEP_OOL) redeliver_deferred();
}
