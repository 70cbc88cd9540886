// A container's blocks are named by the user's function that grew it (StackDepthTest), not by
// std::allocator: two vectors grown by two functions.
#include <vector>

static std::vector<long> squares;
static std::vector<long> cubes;

static void fill_squares(int n)
{
    for (int i = 0; i < n; i++) squares.push_back((long)i * i);
}

static void fill_cubes(int n)
{
    for (int i = 0; i < n; i++) cubes.push_back((long)i * i * i);
}

int main()
{
    fill_squares(3);
    fill_cubes(2);
    return (int)(squares.size() + cubes.size()) - 5;
}
