# tools/compare-fio's fio side: every workload's job file is one fio accepts (--parse-only), and
# the small-file page-cache peers read what their comparison says - one file's blocks through the
# page cache, from cold, each block exactly once - checked by running each on a small evicted
# file: as many reads as blocks, and every block cached afterwards (fio's norandommap would
# leave about 63%; a second job reading the first's part would leave the rest uncached). That a
# read asks for one page only (fadvise_hint=random) is checked in the job's text. First,
# compare-fio's evict() must empty the cache of a file just written (it failed to before it
# wrote dirty pages back). Skipped where fio is missing, or on tmpfs (nothing can be evicted).
source "$(dirname "$0")/lib.bash"
command -v fio >/dev/null || skip "no fio (tools/install-deps installs it)"
command -v fincore >/dev/null || skip "no fincore (util-linux)"

"$FEEDBENCH" gen --out "$WORK/data" --files 1 --file-size 1MiB --layout flat --seed 3 >/dev/null
rc=0
PYTHONPATH="$(dirname "$0")" python3 - "$FEEDBENCH_SOURCE_DIR/tools" "$WORK" <<'PY' || rc=$?
import json, os, subprocess, sys
import tool_module
tools, work = sys.argv[1], sys.argv[2]
cf = tool_module.load(tools, "compare-fio")

data = os.path.join(work, "data")
files = [os.path.join(data, f) for f in sorted(os.listdir(data))]


def cached(path):
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", path],
                         capture_output=True, text=True, check=True).stdout.split()
    return int(out[0])


# compare-fio's eviction empties the cache of a file just written (gen leaves its pages dirty,
# and DONTNEED drops clean pages only): it writes back first. Where nothing can be evicted
# (tmpfs), nothing below can be checked.
if subprocess.run(["stat", "-f", "-c", "%T", data], capture_output=True, text=True).stdout.strip() == "tmpfs":
    print("SKIP: %s is on tmpfs: nothing can be evicted" % data)
    sys.exit(77)
cf.evict(files)
assert cached(files[0]) == 0, "evict() left %d bytes of a freshly written file cached" % cached(files[0])
for row in cf.WORKLOADS:
    w = cf.Workload(row).fio_side()
    job = os.path.join(work, w.name + ".fio")
    with open(job, "w") as f:
        f.write(cf.fio_job(w, files))
    r = subprocess.run(["fio", "--parse-only", job], capture_output=True, text=True)
    assert r.returncode == 0, (w.name, r.stdout + r.stderr)

size = os.path.getsize(files[0])
for name, jobs in (("small-4k-cold-io_uring-qd32-page-cache-peer", 1),
                   ("small-4k-cold-io_uring-2x16-page-cache-peer", 2)):
    peer = cf.Workload(next(r for r in cf.WORKLOADS if r[0] == name))
    w = peer.fio_side()
    assert peer.state == "cold" and w.state == "cold" and not w.direct and w.workers == jobs, name
    text = cf.fio_job(w, files)
    opts = set(text.splitlines())
    for want in ("direct=0", "invalidate=1", "fadvise_hint=random", "rw=randread", "bs=4096",
                 "numjobs=%d" % jobs):
        assert want in opts, (name, want, text)
    assert "norandommap=1" not in opts and "fadvise_hint=0" not in opts, text
    # Run it on the 1 MiB file (256 blocks of 4 KiB), evicted first: the data set's sizes shrink
    # to this file's, and psync stands in where io_uring is refused.
    total = cf.DATASETS[w.dataset][0] * cf.DATASETS[w.dataset][1]
    text = text.replace("=%d\n" % (total // jobs), "=%d\n" % (size // jobs))
    for engine in ("io_uring", "psync"):
        job = os.path.join(work, "peer-%s.fio" % engine)
        body = text.replace("ioengine=io_uring", "ioengine=" + engine)
        if engine == "psync":
            body = "\n".join(l for l in body.splitlines() if l not in ("fixedbufs=1", "registerfiles=1")) + "\n"
        with open(job, "w") as f:
            f.write(body)
        cf.evict(files)
        if cached(files[0]) != 0:
            print("SKIP: %s stays cached after eviction (tmpfs?)" % files[0])
            sys.exit(77)
        r = subprocess.run(["fio", "--output-format=json", job], capture_output=True, text=True)
        if r.returncode == 0:
            break
        print("%s: fio with ioengine=%s failed, trying psync: %s" % (name, engine, (r.stderr or r.stdout)[-300:]))
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout[r.stdout.index("{"):])
    assert doc["jobs"][0]["read"]["total_ios"] == size // 4096, (name, doc["jobs"][0]["read"]["total_ios"])
    assert cached(files[0]) == size, "%s: every block read once: %d of %d bytes cached" % (
        name, cached(files[0]), size)
print("compare-fio jobs: %d parse; the page-cache peers read %d blocks, each once (%s)"
      % (len(cf.WORKLOADS), size // 4096, engine))
PY
if [ "$rc" = 77 ]; then exit 77; fi
[ "$rc" = 0 ] || fail "compare-fio's job files"
echo "compare-fio jobs: ok"
