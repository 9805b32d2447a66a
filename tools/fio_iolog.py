#!/usr/bin/python3
"""Turn a `feedbench watch --trace` file into a fio iolog, and replay it with fio.

Why: the trace (format feedbench-watch-trace version 1 or 2, docs/trace-format.md) records every read a
job's data loading made, with its time. Replaying those reads with fio, an independent
tool, at the recorded times checks how long the same I/O takes on another file system or
machine without the job, its Python or its GPU.

write_iolog() streams the trace and writes a fio iolog version 3 (fio >= 3.31, HOWTO
"Trace file format v3"):

    fio version 3 iolog
    TIMESTAMP FILENAME add|open|close
    TIMESTAMP FILENAME read OFFSET LENGTH

What fio's source (iolog.c) does with it, checked against fio 3.33 by running it:

- TIMESTAMP is in MICROseconds (fio's own write_iolog prints utime_since_now(); the
  replay feeds the difference to a microsecond delay). Milliseconds would replay 1000x
  slower. We write the recorded `ts` (microseconds since the job started), rounded.
- Only differences count: each line waits (TIMESTAMP - previous TIMESTAMP) after the
  previous line, less the time the previous I/O took; the first line starts at once.
  A line after a 0 timestamp gets no wait at all, so no timestamp here is below 1.
  Timestamps must not go down (a smaller one means no wait), so reads are sorted by start:
  the trace holds them process by process.
- FILENAME is read with sscanf("%256s"): no whitespace, at most 256 bytes.
- One fio job replays every read in order, one at a time (psync, iodepth 1), so reads the
  job's workers made at the same time are serialised; the replay runs near the recorded
  span only while each read is shorter than the gap to the next.
- Pacing is only good at the scale of batches. fio keeps the time it overslept a wait as
  an offset taken off the next waits, but when (gap - offset) is shorter than the time
  since the last I/O was issued it returns without waiting and without updating the
  offset, so one oversleep can cancel every later wait of a similar gap: measured here,
  20,000 4 KiB reads 10-100 us apart replayed in 25-70% of their span, while batches of
  reads 25 us apart, 170 ms between batches, replayed within 0.5-2.5% of it. Lateness is
  not made up either: when an I/O takes longer than its gap, the excess stays. fio issue 1537
  (replays "2x or more longer" than the trace) and PR 1540, which accumulates both, are
  not in fio 3.33 (3.33 predates them) nor, as far as fio's git history shows, in any
  release: the PR was left open. With psync the issue's main cause (submission time left
  out of the I/O's time, for async engines) does not arise: a synchronous engine stamps
  the I/O before reading.
- replay_redirect sends every line's I/O to one single file or device, so it must NOT be
  used for a trace of many files; paths are instead mapped onto `source` here.
  replay_align only rounds offsets down to a power of 2 (not lengths): not needed for
  buffered reads, and not enough to make every traced read valid for direct=1.
- fio drops each file's page cache when it opens it (invalidate=1, its default), so the
  replay reads cold; pass "--invalidate=0" in extra_args to keep the cache. A recorded job
  of 2 workers (200 reads, 13.5 MiB, 214 ms span, mostly from the cache) replayed in
  330-370 ms cold and 230-260 ms warm: reads slower than their gaps make it late.

run_fio_replay() runs the iolog and reports fio's JSON: jobs[0]["job_runtime"] (ms, from
the job's start to its end, waits included) is the replay time to hold against the
recorded span; jobs[0]["read"]["runtime"] (ms) is the same for reads, and
jobs[0]["elapsed"] is whole seconds of the run, set-up included.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from array import array
from urllib.parse import unquote_to_bytes

FORMAT, VERSION = "feedbench-watch-trace", 2
HEAD = '{"otherData": '


def _events(trace_path):
    """Yields the trace's otherData, then each event; line by line when the file is laid out
    as feedbench writes it (otherData on the first line, one event a line), else json.load."""
    with open(trace_path, encoding="utf-8") as f:
        first, other = f.readline().rstrip(), None
        if first.startswith(HEAD) and first.endswith(","):
            try:
                other = json.loads(first[len(HEAD):-1])
            except json.JSONDecodeError:  # otherData spread over lines: not that layout
                pass
        if other is not None:
            yield other
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    yield json.loads(line[:-1] if line.endswith(",") else line)
            return
        f.seek(0)
        whole = json.load(f)
    yield whole.get("otherData", {})
    yield from whole.get("traceEvents", [])


def write_iolog(trace_path, out_path, source=None, recorded_root=None):
    """Writes the fio iolog v3 replaying the trace's reads into batches (args.pass not null,
    bytes > 0) at their recorded times. Each path is mapped onto `source` by its path relative
    to `recorded_root` (default: the longest common folder of the replayed files; default
    source: recorded_root). Each file is added and opened just before its first read and
    closed just after its last.
    RETURNS: {"reads", "bytes", "files", "span_ms" (first read's start to last read's end,
    as recorded), "unmatched" (replayable reads of no known open: left out)}."""
    if os.path.exists(out_path) and os.path.samefile(out_path, trace_path):
        raise ValueError(f"{out_path}: the trace itself: write the iolog elsewhere")
    events = _events(trace_path)
    other = next(events)
    if other.get("format") != FORMAT or not isinstance(other.get("version"), int) \
            or other["version"] > VERSION:
        raise ValueError(f"{trace_path}: not a {FORMAT} v{VERSION} trace")

    # Version 2 writes each path %XX-encoded where a byte is no UTF-8 (and '%'): decoded to the
    # file's own bytes. A relative trace's paths are under a folder it does not name.
    encoded = other["version"] >= 2
    relative = other.get("paths") == "relative"
    if relative and source is None:
        raise ValueError(f"{trace_path}: its paths are relative to the job's data folder: name a copy with source")
    if relative:
        recorded_root = "."
    opens = {}                        # (pid, file) -> path
    keys = {}                         # (pid, file) -> its number in the arrays below
    start, end = array("d"), array("d")
    key, offset, length = array("q"), array("q"), array("q")
    for e in events:
        cat, a = e.get("cat"), e.get("args", {})
        if cat == "open":
            opens[(e["pid"], a["file"])] = os.fsdecode(unquote_to_bytes(a["path"])) if encoded else a["path"]
        elif cat == "read" and a.get("pass") is not None and a.get("bytes", 0) > 0:
            start.append(e["ts"])
            end.append(e["ts"] + e.get("dur", 0))
            key.append(keys.setdefault((e["pid"], a["file"]), len(keys)))
            offset.append(a["offset"])
            length.append(a["bytes"])

    # Each read's file, by its number among the replayed files; -1: of no known open.
    recorded, file_of = [], {}
    path_of_key = [None] * len(keys)
    for k, n in keys.items():
        path_of_key[n] = opens.get(k)
    fno = array("q")
    for n in key:
        path = path_of_key[n]
        if path is None:
            fno.append(-1)
            continue
        if path not in file_of:
            file_of[path] = len(recorded)
            recorded.append(path)
        fno.append(file_of[path])

    order = sorted((i for i in range(len(start)) if fno[i] >= 0), key=start.__getitem__)
    if not order:
        raise ValueError(f"{trace_path}: no read into a batch to replay")
    if recorded_root is None:
        recorded_root = os.path.commonpath([os.path.dirname(p) for p in recorded])
    source = recorded_root if source is None else source
    names = []
    for p in recorded:
        rel = os.path.relpath(p, recorded_root)
        if rel == ".." or rel.startswith("../"):
            raise ValueError(f"{p} is not under {recorded_root}")
        name = os.path.normpath(os.path.join(source, rel))
        if any(c.isspace() for c in name) or len(os.fsencode(name)) > 256:
            raise ValueError(f"fio cannot read this name in an iolog: {name!r}")
        names.append(name)

    last = {fno[i]: i for i in order}  # each file's last read
    opened, total = set(), 0
    with open(out_path, "w", encoding="utf-8", errors="surrogateescape") as out:
        out.write("fio version 3 iolog\n")
        for i in order:
            f, t = fno[i], max(1, round(start[i]))
            if f not in opened:
                opened.add(f)
                out.write(f"{t} {names[f]} add\n{t} {names[f]} open\n")
            out.write(f"{t} {names[f]} read {offset[i]} {length[i]}\n")
            total += length[i]
            if last[f] == i:
                out.write(f"{t} {names[f]} close\n")
    return {"reads": len(order), "bytes": total, "files": len(names),
            "span_ms": round((max(end[i] for i in order) - start[order[0]]) / 1e3, 3),
            "unmatched": len(start) - len(order)}


def run_fio_replay(iolog_path, fio="fio", extra_args=(), prefix=()):
    """Runs fio on the iolog: one job, psync, buffered (direct=0), read only, timestamps
    honoured. `extra_args` come last, so they override (e.g. "--direct=1"); `prefix` runs fio
    through another command (a throttle's cgroup: tools/slow-device run DIR --).
    RETURNS: {"runtime_ms" (jobs[0].job_runtime), "read_runtime_ms" (jobs[0].read.runtime),
    "elapsed_s" (jobs[0].elapsed), "bytes", "reads", "wall_s", "fio_version", "command"}."""
    if ":" in iolog_path:
        raise ValueError("fio splits read_iolog on ':'")
    cmd = [*prefix, fio, "--name=replay", f"--read_iolog={iolog_path}", "--ioengine=psync",
           "--direct=0", "--readonly", "--output-format=json", *extra_args]
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    text, brace = done.stdout, done.stdout.find("{")
    notes = " ".join((text[:brace] if brace >= 0 else text).split() + done.stderr.split())
    if done.returncode != 0 or brace < 0:  # fio prints its errors before the JSON
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {notes}")
    report = json.loads(text[brace:text.rindex("}") + 1])
    job = report["jobs"][0]
    return {"runtime_ms": job["job_runtime"], "read_runtime_ms": job["read"]["runtime"],
            "elapsed_s": job.get("elapsed"), "bytes": job["read"]["io_bytes"],
            "reads": job["read"]["total_ios"], "wall_s": wall,
            "fio_version": report.get("fio version"), "command": cmd}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--out", required=True, help="the iolog to write")
    ap.add_argument("--source", help="the folder to read the files from (default: where recorded)")
    ap.add_argument("--recorded-root", help="the recorded folder --source stands for")
    ap.add_argument("--run", action="store_true", help="replay the iolog with fio")
    ap.add_argument("--fio", default="fio")
    args = ap.parse_args(argv)
    w = write_iolog(args.trace, args.out, args.source, args.recorded_root)
    print(f"{args.out}: {w['reads']} reads, {w['bytes']} bytes, {w['files']} files, "
          f"recorded span {w['span_ms']:.1f} ms"
          + (f" ({w['unmatched']} reads of no known open left out)" if w["unmatched"] else ""))
    if args.run:
        r = run_fio_replay(args.out, args.fio)
        print(f"{r['fio_version']}: {r['reads']} reads, {r['bytes']} bytes in {r['runtime_ms']} ms "
              f"(recorded {w['span_ms']:.1f} ms, x{r['runtime_ms'] / max(w['span_ms'], 1e-3):.2f})"
              + ("" if r["bytes"] == w["bytes"] else f"; fio read {r['bytes']}, the trace {w['bytes']}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
