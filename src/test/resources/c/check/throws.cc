// C++ without a bug (CheckOutputTest): exceptions thrown through 20-25 checked frames (their redzones must not
// survive the throw into libstdc++'s frames), maps, strings, threads. Prints a line, must report nothing.
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>
#include <thread>
static int depth(int n) { char buf[64]; buf[n % 64] = 1; if (n == 0) throw std::runtime_error("bottom"); return depth(n - 1) + buf[n % 64]; }
int main(int argc, char **argv) {
  std::map<std::string, std::vector<int>> m;
  for (int i = 0; i < 1000; i++) m[std::to_string(i % 37)].push_back(i);
  auto p = std::make_unique<std::string>("hello world, a long enough string to be on the heap");
  int caught = 0;
  for (int i = 0; i < 100; i++) { try { depth(20 + i % 5); } catch (const std::exception &e) { caught += e.what()[0] == 'b'; } }
  std::vector<std::thread> ts;
  std::vector<long> sums(4);
  for (int t = 0; t < 4; t++) ts.emplace_back([&, t] { std::vector<int> v(10000, t); for (int x : v) sums[t] += x; });
  for (auto &t : ts) t.join();
  std::cout << m.size() << " " << *p << " " << caught << " " << sums[3] << std::endl;
  return 0;
}
