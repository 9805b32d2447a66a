"""A trace as `feedbench watch --trace` writes it (docs/trace-format.md), for the replay's tests:
one pass over every .bin file of DATA (sorted), BATCH files a batch dealt to 2 workers in turn,
each file read whole in one call, a step of STEP_MS after each batch but the last, and CPU_MS of
the worker's CPU in each fetch.

    replay_trace.py DATA OUT [--batch 4] [--step-ms 5] [--cpu-ms 0]
"""

import argparse
import json
import os

parser = argparse.ArgumentParser()
parser.add_argument("data")
parser.add_argument("out")
parser.add_argument("--batch", type=int, default=4)
parser.add_argument("--step-ms", type=float, default=5)
parser.add_argument("--cpu-ms", type=float, default=0)
a = parser.parse_args()
names = sorted(n for n in os.listdir(a.data) if n.endswith(".bin"))
other = {"format": "feedbench-watch-trace", "version": 1, "name": "synthetic", "origin_ns": 1,
         "command": ["synthetic"],
         "passes": [{"pass": 1, "batch_size": a.batch, "num_workers": 2, "prefetch_factor": 2,
                     "persistent_workers": False, "pid": 1, "workers": [2, 3]}]}
ev = []
batches = len(names) // a.batch
step_us = a.step_ms * 1000
fetch_us = max(400, a.cpu_ms * 1000 + 100)
for b in range(batches):
    t, pid = 100 + b * (fetch_us + step_us + 100), 2 + b % 2
    ev.append({"args": {"batch": b, "pass": 1}, "cat": "batch", "dur": fetch_us + 50, "name": "wait", "ph": "X",
               "pid": 1, "tid": 1, "ts": t})
    if b + 1 < batches:
        ev.append({"args": {"batch": b, "pass": 1}, "cat": "batch", "dur": step_us, "name": "step", "ph": "X",
                   "pid": 1, "tid": 1, "ts": t + fetch_us + 50})
    ev.append({"args": {"batch": b, "pass": 1, "worker": b % 2, "samples": a.batch, "cpu_ms": a.cpu_ms},
               "cat": "fetch", "dur": fetch_us, "name": "fetch", "ph": "X", "pid": pid, "tid": pid, "ts": t})
    for k in range(a.batch):
        f = b * a.batch + k
        size = os.path.getsize(os.path.join(a.data, names[f]))
        ev.append({"args": {"file": f, "path": os.path.join(a.data, names[f]), "size": size}, "cat": "open",
                   "name": "open", "ph": "i", "pid": pid, "s": "t", "tid": pid, "ts": t + 1})
        ev.append({"args": {"file": f, "offset": 0, "bytes": size, "pass": 1, "batch": b}, "cat": "read",
                   "dur": 10, "name": "read", "ph": "X", "pid": pid, "tid": pid, "ts": t + 2})
with open(a.out, "w") as out:
    json.dump({"otherData": other, "displayTimeUnit": "ms", "traceEvents": ev}, out)
