// CWE-401 (C++): an object from new whose owner pointer goes out of scope.
#include <string>
#include "rc.h"
struct Node { std::string name; Node *next = nullptr; };
static void run(int bad)
{
    Node *n = new Node;
    n->name = std::string(40, 'n');
    rc_int((long)n->name.size());
    if (!bad) delete n; // BAD: not deleted (the node and its string's buffer leak)
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
