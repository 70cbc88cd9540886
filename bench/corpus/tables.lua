-- bench/corpus.sh's Lua workload: what interpreted programs spend their time on, tables used as arrays, as
-- hash maps with string keys and as objects with methods, string building, closures and table.sort with a
-- comparator. Prints a checksum, the same on every build.
local N = tonumber(arg and arg[1]) or 8000

-- objects: points with a metatable, a method call per access
local Point = {}
Point.__index = Point
function Point.new(x, y) return setmetatable({x = x, y = y}, Point) end
function Point:dist2(o) local dx, dy = self.x - o.x, self.y - o.y; return dx * dx + dy * dy end

local seed = 12345
local function rand(n) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n end

local pts = {}
for i = 1, N do pts[i] = Point.new(rand(1000), rand(1000)) end

-- a hash map with string keys: word counts of made-up words
local counts, words = {}, {}
for i = 1, N do
  local w = "w" .. rand(5000)
  words[i] = w
  counts[w] = (counts[w] or 0) + 1
end
local uniq = {}
for w, c in pairs(counts) do uniq[#uniq + 1] = {word = w, count = c} end
table.sort(uniq, function(a, b) if a.count ~= b.count then return a.count > b.count end return a.word < b.word end)

-- nearest of a few probes among the points, through the method
local near = 0
for k = 1, 20 do
  local p, best = pts[k], math.huge
  for i = 1, #pts do local d = p:dist2(pts[i]); if d > 0 and d < best then best = d end end
  near = near + best
end

-- closures over an accumulator, strings joined by table.concat
local function counter() local c = 0; return function(d) c = c + d; return c end end
local acc = counter()
local parts = {}
for i = 1, N // 4 do acc(#words[i]); parts[#parts + 1] = words[i]:upper() end
local joined = table.concat(parts, ",")

-- sort the points by x, then y
table.sort(pts, function(a, b) if a.x ~= b.x then return a.x < b.x end return a.y < b.y end)

print(#uniq, uniq[1].word, uniq[1].count, near, acc(0), #joined, pts[1].x, pts[#pts].y)
