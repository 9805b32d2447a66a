#!/usr/bin/env python3
"""A result file of about MB megabytes: IN's entries repeated (each copy's case names made
distinct with a /copy:K segment), in the layout a run writes today (revision 2: latency
histograms compact under latency_hist, one entry per line). For measuring diff and report at
the size of a large sweep (docs/limits.md, tests/e2e/result_memory.sh).

usage: grow_result.py IN.json OUT.json MB
IN is any result (tests/e2e/qualify_fixture.py writes one); its revision-1 latency bins are
converted to the compact form."""
import base64
import json
import sys
import zlib

src, out, mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
SUB_BITS = 7


def index_of(v):  # harness/base/include/feedbench/base/histogram.h: Histogram::index_of
    if v < (1 << SUB_BITS):
        return v
    bucket = v.bit_length() - 1 - SUB_BITS + 1
    return (bucket << SUB_BITS) + (v >> (bucket - 1)) - (1 << SUB_BITS)


def varint(n):
    b = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        b.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(b)


def compact(latency):  # Histogram::to_compact_json: runs of non-empty bins, varints, zlib, base64
    counts = {index_of(lo): n for lo, _, n in latency["bins"] if n}
    raw, nxt, indexes = bytearray(), 0, sorted(counts)
    i = 0
    while i < len(indexes):
        end = i
        while end + 1 < len(indexes) and indexes[end + 1] == indexes[end] + 1:
            end += 1
        raw += varint(indexes[i] - nxt) + varint(end - i + 1)
        for k in range(i, end + 1):
            raw += varint(counts[indexes[k]])
        nxt, i = indexes[end] + 1, end + 1
    return {"count": latency["count"], "encoding": "zlib-varint-runs", "max": latency["max"], "min": latency["min"],
            "runs": base64.b64encode(zlib.compress(bytes(raw))).decode(), "sub_bucket_bits": SUB_BITS, "unit": "ns"}


doc = json.load(open(src))
entries = doc.pop("benchmarks")
for e in entries:
    if "latency" in e:
        e["latency_hist"] = compact(e.pop("latency"))
lines = [json.dumps(e, separators=(",", ":")) for e in entries]
per_entry = sum(len(line) + 6 for line in lines) / len(lines)
n = max(len(entries), int(mb * 1e6 / per_entry))
doc["schema_revision"] = 2
head = json.dumps(doc, indent=2)
with open(out, "w") as f:
    f.write(head[:-2] + ',\n  "benchmarks": [')
    for i in range(n):
        e, k = entries[i % len(entries)], i // len(entries)
        if k:
            e = dict(e)
            for key in ("name", "run_name"):
                e[key] = e[key].replace("/iterations:", f"/copy:{k}/iterations:")
            e["case"] = e["case"] + f"/copy:{k}"
            line = json.dumps(e, separators=(",", ":"))
        else:
            line = lines[i]
        f.write(("\n    " if i == 0 else ",\n    ") + line)
    f.write("\n  ]\n}\n")
