# Rewrite sweep (bench/rewrite-sweep.sh): exceptions, threads, json, re; deterministic output, exit status 4.
import json, re, sys, threading

def parse(s):
    try:
        return int(s)
    except ValueError as e:
        return str(e).split(":")[0]

out = {}
def work(k):
    out[k] = sum(i * i for i in range(2000 + k))
ts = [threading.Thread(target=work, args=(k,)) for k in range(3)]
for t in ts: t.start()
for t in ts: t.join()
doc = json.dumps({"sums": out, "parsed": [parse(x) for x in ["12", "x", "7"]]}, sort_keys=True)
print(doc)
print(re.findall(r"(\w+)=(\d+)", "a=1 bb=22 ccc=333"))
try:
    {}["missing"]
except KeyError as e:
    print("KeyError", e)
print("stderr line", file=sys.stderr)
sys.exit(4)
