// CWE-415: a class without a copy constructor copied; both copies delete the same buffer (rule of three).
#include <cstring>
#include "corpus.h"

namespace cxx_double_delete {
class text {
public:
    explicit text(const char *s);
    text(const text &o, bool deep);   // deep = false is the implicit copy constructor's shallow copy
    ~text();
    const char *c_str() const { return data_; }
private:
    char *data_;
};

text::text(const char *s) : data_(new char[strlen(s) + 1]) { strcpy(data_, s); }
text::text(const text &o, bool deep) : data_(deep ? new char[strlen(o.data_) + 1] : o.data_) { if (deep) strcpy(data_, o.data_); }
text::~text() { delete[] data_; } /* BAD */

static void run(bool deep)
{
    text a("shared");
    {
        text b(a, deep);
        print_line(b.c_str());
    }
    print_line(deep ? a.c_str() : "after");
}

void bad() { run(opaque(0) != 0); }
void good() { run(opaque(1) != 0); }
}
