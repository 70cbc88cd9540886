/* placeholder while the agent is being written */
#include "memtrace_stream.h"
