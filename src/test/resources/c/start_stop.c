/* Only the stores between memtrace_start() and memtrace_stop() are recorded under --no-autostart. */
#include "memtrace.h"

int before[10], inside[10], after[10];

int main(void) {
    for (int i = 0; i < 10; i++) before[i] = i;
    memtrace_start();
    for (int i = 0; i < 10; i++) inside[i] = i;
    memtrace_stop();
    for (int i = 0; i < 10; i++) after[i] = i;
    return 0;
}
