// CWE-416: std::map::erase(it) and then ++it: the increment reads the freed node. Twin: it = erase(it).
#include <map>
#include "corpus.h"

namespace cxx_uaf_map_erase {
static void run(bool bad)
{
    std::map<int, long> m;
    for (int i = 0; i < 6; i++) m[i] = i * 10;
    for (auto it = m.begin(); it != m.end();) {
        if (it->first % 2 == 0) {
            if (bad) { m.erase(it); ++it; } /* BAD */
            else it = m.erase(it);
        } else {
            ++it;
        }
        if (bad) break;
    }
    print_int(static_cast<long>(m.size()));
}

void bad() { run(opaque(1) != 0); }
void good() { run(opaque(0) != 0); }
}
