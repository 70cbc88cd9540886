// CWE-416 (C++): c_str() of a temporary std::string, read after the temporary died.
#include <cstring>
#include <string>
#include "rc.h"
static std::string make(int n) { return std::string(static_cast<size_t>(n), 'q'); }
static void run(int bad)
{
    std::string kept = make(40);
    const char *p = bad ? make(40).c_str() : kept.c_str(); // the temporary dies at the ;
    rc_int((long)strlen(p)); // BAD
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
