// Rewrite sweep (bench/rewrite-sweep.sh): C++ exceptions thrown through several rewritten frames (the
// unwinder reads return addresses and .eh_frame of moved code), caught, rethrown, thrown in std::thread,
// and iostreams, std::map, std::sort. Prints a deterministic report; exit status 3.
#include <algorithm>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

struct Err : std::runtime_error {
    int depth;
    Err(const std::string &m, int d) : std::runtime_error(m), depth(d) {}
};

struct Guard {
    static int alive;
    Guard() { alive++; }
    ~Guard() { alive--; }
};
int Guard::alive = 0;

__attribute__((noinline)) int dive(int n, std::vector<int> &trail) {
    Guard g;
    trail.push_back(n);
    if (n == 0) throw Err("bottom", (int)trail.size());
    return dive(n - 1, trail) + 1;
}

__attribute__((noinline)) int relay(int n) {
    std::vector<int> trail;
    try {
        return dive(n, trail);
    } catch (Err &e) {
        std::ostringstream os;
        os << e.what() << "@" << e.depth;
        throw std::logic_error(os.str());
    }
}

int main() {
    int caught = 0;
    for (int i = 1; i <= 200; i++) {
        try {
            relay(i % 17);
        } catch (const std::logic_error &e) {
            if (i == 200) std::cout << "last: " << e.what() << "\n";
            caught++;
        }
    }
    std::cout << "caught " << caught << " guards alive " << Guard::alive << "\n";
    std::mutex m;
    std::map<int, std::string> results;
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; t++)
        ts.emplace_back([t, &m, &results] {
            std::string r;
            try {
                relay(t + 3);
            } catch (std::exception &e) {
                r = e.what();
            }
            std::vector<int> v;
            for (int i = 0; i < 5000; i++) v.push_back((i * 7919 + t) % 1000);
            std::sort(v.begin(), v.end());
            std::lock_guard<std::mutex> l(m);
            results[t] = r + " sorted " + std::to_string(v[2500]);
        });
    for (auto &t : ts) t.join();
    for (auto &[k, v] : results) std::cout << k << ": " << v << "\n";
    try {
        throw 42;
    } catch (int x) {
        std::cerr << "int " << x << "\n";
    }
    return 3;
}
