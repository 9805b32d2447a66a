"""A small real PyTorch training job for feedbench watch's tests: a Dataset over the files of a
folder, a DataLoader with workers, a CPU step; it times itself the method's way (AU = step /
(step + wait), wait from asking for a batch to getting it, over every batch but each pass's last)
and prints {"au": ..., "batches": ..., "steps_per_second": ..., "wait_p50_ms": ...} as its last
line (steps per second over the loop's wall time, from the first iter() to the last pass's end,
which tools/watch-overhead compares watched and not; the median wait over every batch, as the
statement `batch = next(it)` took it: the store frees the previous batch). The files are those
under DATA, its subfolders' too. --sample-kib K makes each sample a tensor of K KiB (the workers
hand it over in shared memory). Run under /usr/bin/python3 (python3-torch).

    watch_job.py DATA [--workers 2] [--batch 8] [--step-ms 20] [--epochs 1] [--start fork|spawn]
                      [--sleep-ms 0] [--burn-ms 0] [--loaders 1] [--crash-after N] [--sample-kib 0]
"""
import argparse
import json
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Files(Dataset):
    def __init__(self, root, sleep_ms, burn_ms, sample_kib):
        self.paths = []
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = [n for n in subfolders if not n.startswith(".")]
            self.paths += [os.path.join(folder, n) for n in names if not n.startswith(".")]
        self.paths.sort()
        self.sleep_s, self.burn_ns = sleep_ms / 1e3, int(burn_ms * 1e6)
        self.floats = sample_kib * 256

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            data = f.read()
        if self.sleep_s:
            time.sleep(self.sleep_s)  # a slow store: the worker waits off the CPU
        end = time.thread_time_ns() + self.burn_ns
        while time.thread_time_ns() < end:  # a heavy transform: the worker computes
            pass
        return torch.zeros(self.floats) if self.floats else torch.tensor(len(data))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--step-ms", type=float, default=20)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--start", default="fork")
    ap.add_argument("--sleep-ms", type=float, default=0)
    ap.add_argument("--burn-ms", type=float, default=0)
    ap.add_argument("--loaders", type=int, default=1)
    ap.add_argument("--crash-after", type=int, default=-1)
    ap.add_argument("--sample-kib", type=int, default=0)
    a = ap.parse_args()
    ds = Files(a.data, a.sleep_ms, a.burn_ms, a.sample_kib)
    extra = {"multiprocessing_context": a.start} if a.workers > 0 else {}
    loaders = [DataLoader(ds, batch_size=a.batch, shuffle=True, num_workers=a.workers, **extra)
               for _ in range(a.loaders)]
    clock = time.monotonic_ns
    wait = step = batches = 0
    waits = []
    loop_start = clock()
    for _ in range(a.epochs):
        for loader in loaders:
            it = iter(loader)
            prev = None  # the previous batch's (got, wait): its step ends at this ask
            batch = None
            while True:
                ask = clock()
                try:
                    batch = next(it)  # as a training loop holds it: the previous one freed here
                except StopIteration:
                    break
                got = clock()
                waits.append(got - ask)
                if prev is not None:
                    step += ask - prev[0]
                    wait += prev[1]
                prev = (got, got - ask)
                batches += 1
                if batches == a.crash_after:
                    raise RuntimeError("crashed on purpose after %d batches" % batches)
                deadline = got + int(a.step_ms * 1e6)
                time.sleep(max(0, deadline - clock() - 100_000) / 1e9)
                while clock() < deadline:
                    pass
    loop_s = (clock() - loop_start) / 1e9
    # The last batch of each pass has no step after it, as watch counts.
    waits.sort()
    print(json.dumps({"au": step / (step + wait), "batches": batches,
                      "steps_per_second": batches / loop_s if loop_s > 0 else 0.0,
                      "wait_p50_ms": waits[(len(waits) - 1) // 2] / 1e6 if waits else None}))


if __name__ == "__main__":
    sys.exit(main())
