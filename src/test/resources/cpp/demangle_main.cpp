// A small C++ program for DemangleTest: a namespace, a template class with a method, objects made by
// operator new, a std::vector, a namespaced global. noinline keeps each function its own symbol at -O0.
#include <vector>

namespace shapes {
int tally[4];

template <typename T>
class Box {
public:
    explicit Box(T v) : value(v) {}
    __attribute__((noinline)) void put(T v) { value = v; tally[1]++; }
    T value;
};

__attribute__((noinline)) long sum(const std::vector<long>& v) {
    long s = 0;
    for (long x : v) s += x;
    return s;
}
}  // namespace shapes

int main() {
    shapes::Box<int>* b = new shapes::Box<int>(1);
    b->put(7);
    std::vector<long> v;
    for (long i = 0; i < 3; i++) v.push_back(i * b->value);
    long s = shapes::sum(v);
    shapes::tally[0] = (int) s;
    delete b;
    return s == 21 ? 0 : 1;
}
