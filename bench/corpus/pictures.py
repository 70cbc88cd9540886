# The pictures of bench/corpus.sh's image programs, the same bytes every run: a scene of smooth gradients,
# discs and stripes under a little noise (a photograph's kind of content, so the codecs neither coast on flat
# colour nor fight white noise), written as binary PPM (P6) or as an RGB PNG (zlib, filter 0 on every row).
# Usage: python3 pictures.py ppm|png WIDTH HEIGHT OUTPUT
import random, struct, sys, zlib

kind, w, h, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rnd = random.Random(5)
discs = [(rnd.randrange(w), rnd.randrange(h), rnd.randrange(20, w // 4), [rnd.randrange(256) for _ in range(3)]) for _ in range(24)]
rows = []
for y in range(h):
    px = [[(x * 255) // w, (y * 255) // h, ((x + y) * 127) // (w + h) + ((x // 16 + y // 16) % 2) * 40] for x in range(w)]
    for cx, cy, rad, col in discs:
        dy = y - cy
        if dy * dy < rad * rad:
            half = int((rad * rad - dy * dy) ** 0.5)
            for x in range(max(0, cx - half), min(w, cx + half + 1)):
                p = px[x]
                px[x] = [(p[0] + col[0]) // 2, (p[1] + col[1]) // 2, (p[2] + col[2]) // 2]
    noise = rnd.randbytes(w)
    rows.append(bytes(max(0, min(255, c + noise[x] % 13 - 6)) for x in range(w) for c in px[x]))
with open(path, "xb") as f:
    if kind == "ppm":
        f.write(b"P6\n%d %d\n255\n" % (w, h) + b"".join(rows))
    else:
        def chunk(t, d):
            return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(b"".join(b"\0" + r for r in rows), 6)) + chunk(b"IEND", b""))
