#!/usr/bin/env python3
"""A synthetic result of the qualify-instance sweep, 276 cases (the config's four file_read
families and staging, plus a loader sweep), in the layout results/README.md documents.

usage: qualify_fixture.py OUT.json SPEED INSTANCE [REPETITIONS]
SPEED scales every rate (1.0 = the base); INSTANCE goes into environment.host.instance_type.
Figures follow plausible shapes (workers help up to 4, warm beats cold, the cache path is
faster) with a seeded spread, so a report of it looks like a real one."""
import json
import random
import sys

out, speed, instance = sys.argv[1], float(sys.argv[2]), sys.argv[3]
reps = int(sys.argv[4]) if len(sys.argv) > 4 else 3
rnd = random.Random(instance)
KiB, MiB = 1024, 1024 * 1024


def bin_of(v):  # the harness's log-linear layout: 128 sub-buckets per power of two
    if v < 128:
        return v, v + 1
    bucket = v.bit_length() - 1 - 6
    lower = (v >> (bucket - 1)) << (bucket - 1)
    return lower, lower + (1 << (bucket - 1))


def histogram(lat_us):
    values = [max(1, int(rnd.lognormvariate(0, 0.45) * lat_us * 1000)) for _ in range(120)]
    bins = {}
    for v in values:
        b = bin_of(v)
        bins[b] = bins.get(b, 0) + 1
    return {"unit": "ns", "count": len(values), "min": min(values), "max": max(values), "sub_bucket_bits": 7,
            "bins": [[lo, hi, n] for (lo, hi), n in sorted(bins.items())]}


SHORT = {"pattern": "pattern", "block_size": "bs", "engine": "engine", "queue_depth": "qd", "workers": "workers",
         "cache_state": "state", "path": "path", "batch_size": "batch", "accelerators": "acc", "verify": "verify"}
benchmarks = []


def add(family, params, counters_of, lat_us=None, extra_of=None):
    name = family + "".join(f"/{SHORT[k]}:{str(v).lower() if isinstance(v, bool) else v}" for k, v in params.items())
    state = params.get("cache_state", "cold")
    for rep in range(reps):
        counters = counters_of(rnd.uniform(0.96, 1.04))
        entry = {"name": name + "/iterations:1/manual_time", "run_name": name + "/iterations:1/manual_time",
                 "run_type": "iteration", "repetitions": reps, "repetition_index": rep, "threads": 1, "iterations": 1,
                 "real_time": 100.0, "cpu_time": 10.0, "time_unit": "ms", **counters, "case": name,
                 "params": {"family": family, **params},
                 "cache": {"requested": state, "residency_before": counters.get("residency_before", 0.0),
                           "achieved": True, "method": "mincore"}}
        if lat_us:
            entry["latency"] = histogram(lat_us)
        if extra_of:
            entry["extra"] = extra_of(counters)
        benchmarks.append(entry)


def reads(pattern, bs, engine, qd, workers, state, path):
    device = {"sequential": 900, "random": 60 if bs == 4 * KiB else 400, "shuffled_files": 500}[pattern] * MiB
    if state == "warm":
        device *= 6
    if path == "cache":
        device *= 2.2
    if engine in ("libaio", "io_uring"):
        device *= min(qd, 32) ** 0.5
    rate = device * speed * min(workers, 4) ** 0.55
    lat = bs / rate * 1e6 * workers * (0.3 if state == "warm" else 1)
    params = {"pattern": pattern, "block_size": bs, "engine": engine, "queue_depth": qd, "workers": workers,
              "cache_state": state, "path": path}

    def counters(k):
        bps = rate * k
        return {"bytes_per_second": bps, "items_per_second": bps / bs, "files_per_second": bps / (256 * KiB),
                "lat_p50_us": lat, "lat_p90_us": lat * 1.6, "lat_p99_us": lat * 3, "lat_p999_us": lat * 5,
                "lat_max_us": lat * 9, "residency_before": 1.0 if state == "warm" else 0.0, "cpu_util": 0.05 * workers}
    add("file_read", params, counters, lat)


for path in ("source", "cache"):
    for bs in (128 * KiB, MiB, 4 * MiB):
        for w in (1, 2, 4, 8, 16):
            for st in ("cold", "warm"):
                reads("sequential", bs, "psync", 1, w, st, path)
    for bs in (4 * KiB, 64 * KiB):
        for engine in ("libaio", "io_uring"):
            for qd in (1, 8, 32, 128):
                for w in (1, 4, 16):
                    reads("random", bs, engine, qd, w, "direct", path)
        for engine in ("psync", "mmap"):
            for w in (1, 4, 16):
                for st in ("cold", "warm"):
                    reads("random", bs, engine, 1, w, st, path)
    for engine in ("psync", "io_uring"):
        for w in (1, 2, 4, 8, 16):
            for st in ("cold", "warm"):
                reads("shuffled_files", MiB, engine, 1, w, st, path)
for w in (1, 4):
    add("stage", {"workers": w, "cache_state": "cold", "verify": True},
        lambda k, w=w: {"bytes_per_second": 300 * MiB * speed * w ** 0.5 * k, "files_per_second": 1200 * w ** 0.5 * k,
                        "items_per_second": 1200 * w ** 0.5 * k, "cpu_util": 0.2, "residency_before": 0.0})
for path in ("source", "cache"):
    for acc in (1, 2, 4):
        for w in (1, 2, 4, 8, 16):
            au = min(0.99, 0.25 * w ** 0.8 * speed * (2 if path == "cache" else 1) / acc ** 0.7)

            def loader(k, au=au):
                a = min(0.995, au * k)
                return {"samples_per_second": 4000 * a, "bytes_per_second": 4000 * a * 110 * KiB, "au": a,
                        "stall_fraction": 1 - a, "wait_p50_ms": 20 * (1 - a), "wait_p90_ms": 30 * (1 - a),
                        "wait_p99_ms": 45 * (1 - a), "wait_max_ms": 80 * (1 - a), "epoch_s": 12 / a, "steps": 200,
                        "cpu_util": 0.1 * w, "residency_before": 0.0}
            add("loader", {"batch_size": 32, "workers": w, "accelerators": acc, "cache_state": "cold", "path": path},
                loader, extra_of=lambda c: {"verdict": f"AU {c['au'] * 100:.1f}% — " +
                                            ("storage keeps up" if c["au"] >= 0.9 else "training waits for data"),
                                            "target_au": 0.9})

doc = {
    "schema": "feedbench-result/1",
    "context": {"date": "2026-11-30T10:00:00+00:00", "host_name": "gpu-1", "library_version": "1.7.1"},
    "tool": {"version": "0.1.0", "git_commit": "0123456789abcdef0123", "git_dirty": False, "benchmark_version": "1.7.1"},
    "command_line": ["feedbench", "run", "--config", "configs/qualify-instance.json", "--out", out],
    "environment_variables": {"FEEDBENCH_SOURCE": "/data/imagenet", "FEEDBENCH_CACHE": "/nvme/cache"},
    "config": {"file": "configs/qualify-instance.json", "name": "qualify-instance", "sha256": "ab" * 32,
               "resolved": {"name": "qualify-instance"}},
    "dataset": {"source": {"root": "/data/imagenet", "files": 90000, "bytes": 11796480000, "fingerprint": "9f" * 32},
                "cache": {"root": "/nvme/cache", "files": 90000, "bytes": 11796480000, "fingerprint": "9f" * 32,
                          "manifest": {"label": "imagenet-v1", "version": 1}}},
    "environment": {
        "host": {"cpu_model": "AMD EPYC 7R13", "cores": 96, "memory_total_bytes": 1 << 40, "kernel": "6.1.0-18-cloud-amd64",
                 "distribution": "Debian GNU/Linux 12 (bookworm)", "hostname": "gpu-1", "instance_type": instance,
                 "gpus": [{"name": "NVIDIA A100-SXM4-40GB", "memory": "40960 MiB", "driver": "535.104"}] * 8},
        "paths": {"source": {"resolved": "/data/imagenet", "fs_type": "nfs4", "mount_point": "/data",
                             "mount_source": "fs-1:/export", "device": "", "device_info": {}},
                  "cache": {"resolved": "/nvme/cache", "fs_type": "xfs", "mount_point": "/nvme", "mount_source": "/dev/nvme1n1",
                            "device": "nvme1n1", "device_info": {"model": "Amazon EC2 NVMe Instance Storage",
                                                                 "rotational": False, "read_ahead_kb": 128, "scheduler": "none"}}}},
    "summary": {"note": "synthetic"},
    "benchmarks": benchmarks,
}
assert len({b["case"] for b in benchmarks}) == 276, len({b["case"] for b in benchmarks})
json.dump(doc, open(out, "w"))
