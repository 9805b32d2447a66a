# tools/compare-fio's fio side: every workload's job file is one fio accepts (--parse-only), and
# the small-file page-cache peers read what their comparison says - one file's blocks through the
# page cache, from cold, each block exactly once - checked by running each on a small evicted
# file: as many reads as blocks, and every block cached afterwards (fio's norandommap would
# leave about 63%; a second job reading the first's part would leave the rest uncached). That a
# read asks for one page only (fadvise_hint=random) is checked in the job's text. First,
# compare-fio's evict() must empty the cache of a file just written (it failed to before it
# wrote dirty pages back). Skipped where fio is missing, or on tmpfs (nothing can be evicted).
# Before that, with a stand-in fio (no fio needed): compare-fio gives fio the fastest of its
# clock sources, probed once per run, leaving out one fio refuses or calls unreliable, names it
# in its output and its JSON, and passes gtod_reduce=1 where feedbench runs with --no-latency;
# with the real fio, the probe picks one of fio's sources in well under 10 s, and the jobs
# with clocksource= and gtod_reduce=1 parse.
source "$(dirname "$0")/lib.bash"

mkdir -p "$WORK/bin"
cat >"$WORK/bin/fio" <<'STANDIN'
#!/usr/bin/env python3
# A stand-in fio: each clock source's IOPS come from STANDIN_IOPS ("cpu=250000,..."; a source
# not named there is refused), STANDIN_NOTE_<source> is printed before the JSON, and every job
# it is given is appended to STANDIN_LOG.
import json, os, re, sys
if sys.argv[1:] == ["--version"]:
    print("fio-standin")
    sys.exit(0)
job = open(sys.argv[-1]).read()
with open(os.environ["STANDIN_LOG"], "a") as f:
    f.write(job + "---\n")
m = re.search(r"^clocksource=(\S+)$", job, re.M)
cs = m.group(1) if m else "default"
rates = dict(kv.split("=") for kv in os.environ["STANDIN_IOPS"].split(",") if kv)
if cs not in rates:
    print("fio: clocksource=%s: not supported here" % cs, file=sys.stderr)
    sys.exit(1)
if os.environ.get("STANDIN_NOTE_" + cs):
    print(os.environ["STANDIN_NOTE_" + cs])
iops = float(rates[cs])
print(json.dumps({"fio version": "fio-standin", "jobs": [{"read": {"iops": iops, "bw_bytes": iops * 4096}}]}))
STANDIN
chmod +x "$WORK/bin/fio"
PATH="$WORK/bin:$PATH" PYTHONPATH="$(dirname "$0")" python3 - "$FEEDBENCH_SOURCE_DIR/tools" "$WORK" "$FEEDBENCH" <<'PY' \
  || fail "compare-fio's choice of fio's clock source"
import contextlib, io, json, os, sys
import tool_module
tools, work, feedbench = sys.argv[1:4]
cf = tool_module.load(tools, "compare-fio")
log = os.environ["STANDIN_LOG"] = os.path.join(work, "standin.log")


def probe(iops, **notes):
    os.environ["STANDIN_IOPS"] = iops
    for cs in cf.CLOCKSOURCES:
        os.environ.pop("STANDIN_NOTE_" + cs, None)
    os.environ.update({"STANDIN_NOTE_" + k: v for k, v in notes.items()})
    open(log, "w").close()
    got = cf.probe_clocksources(work, work)
    return got, open(log).read().split("---\n")[:-1]


# The fastest wins, each source timed PROBE_PASSES times on a page-cached 4 KiB random read.
(chosen, best, left_out), jobs = probe("gettimeofday=19700,clock_gettime=314000,cpu=250000")
assert chosen == "clock_gettime" and best["gettimeofday"] == 19700 and not left_out, (chosen, best, left_out)
assert len(jobs) == 3 * cf.PROBE_PASSES, len(jobs)
for want in ("rw=randread", "bs=4096", "pre_read=1", "time_based=1", "runtime=250ms"):
    assert all(want in j.splitlines() for j in jobs), (want, jobs[0])
# A clock fio calls unreliable here is left out however fast; so is one fio refuses.
(chosen, best, left_out), _ = probe("gettimeofday=19700,clock_gettime=314000,cpu=900000",
                                    cpu="fio: clocksource=cpu may not be reliable")
assert chosen == "clock_gettime" and "cpu" not in best and "reliable" in left_out["cpu"], (chosen, left_out)
(chosen, best, left_out), _ = probe("gettimeofday=19700")
assert chosen == "gettimeofday" and set(left_out) == {"clock_gettime", "cpu"}, (chosen, left_out)
(chosen, best, left_out), _ = probe("")
assert chosen is None and "fio's default" in cf.describe_probe(chosen, best, left_out, 0.1)

# A whole run (one small page-cached workload, one round): the probe's choice is named in the
# output, set in the workload's job, and written to the JSON; --no-latency reaches both sides.
cf.DATASETS["rand"] = (2, 256 * 1024)
cf.WORKLOADS[:] = [r for r in cf.WORKLOADS if r[0] == "rand-4k-cached-psync-1w"]
for no_latency in (False, True):
    os.environ["STANDIN_IOPS"] = "gettimeofday=19700,clock_gettime=314000,cpu=250000"
    open(log, "w").close()
    out = io.StringIO()
    sys.argv = ["compare-fio", "--rounds", "1", "--dir", os.path.join(work, "cf"), "--feedbench", feedbench,
                "--json", os.path.join(work, "cf.json")] + (["--no-latency"] if no_latency else [])
    with contextlib.redirect_stdout(out):
        rc = cf.main()
    text = out.getvalue()
    assert rc == 0, text
    assert "fio clocksource: clock_gettime, the fastest" in text, text
    assert "fio's clock source: clock_gettime" in text, text
    job = [j for j in open(log).read().split("---\n") if "[rand-4k-cached-psync-1w]" in j]
    assert len(job) == 1 and "clocksource=clock_gettime" in job[0].splitlines(), job
    assert ("gtod_reduce=1" in job[0].splitlines()) == no_latency, job[0]
    doc = json.load(open(os.path.join(work, "cf.json")))
    assert doc[0]["fio_clocksource"] == "clock_gettime", doc[0]
    assert doc[0]["fio_clocksource_probe"]["iops"]["clock_gettime"] == 314000, doc[0]
    assert "clocksource=clock_gettime" in doc[0]["fio"], doc[0]["fio"]
    assert ("gtod_reduce=1" in doc[0]["fio"]) == no_latency, doc[0]["fio"]
    assert doc[0]["feedbench"].endswith(" --no-latency") == no_latency, doc[0]["feedbench"]
print("compare-fio clock source: the stand-in's fastest chosen, named and passed on")
PY

command -v fio >/dev/null || skip "no fio (tools/install-deps installs it)"
command -v fincore >/dev/null || skip "no fincore (util-linux)"

"$FEEDBENCH" gen --out "$WORK/data" --files 1 --file-size 1MiB --layout flat --seed 3 >/dev/null
rc=0
PYTHONPATH="$(dirname "$0")" python3 - "$FEEDBENCH_SOURCE_DIR/tools" "$WORK" <<'PY' || rc=$?
import json, os, subprocess, sys, time
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
# The real fio: the probe picks the fastest of its clock sources (one it refuses, or calls
# unreliable, left out) in well under 10 s; a job with it and gtod_reduce=1 parses.
t = time.time()
chosen, best, left_out = cf.probe_clocksources(work, work)
took = time.time() - t
assert took < 8, "the probe took %.1f s" % took
assert chosen in cf.CLOCKSOURCES and best[chosen] == max(best.values()), (chosen, best, left_out)
print(cf.describe_probe(chosen, best, left_out, took))
for options in ({"clocksource": chosen}, {"clocksource": chosen, "gtod_reduce": True}):
    job = os.path.join(work, "clock.fio")
    with open(job, "w") as f:
        f.write(cf.fio_job(cf.Workload(cf.WORKLOADS[4]), files, **options))
    r = subprocess.run(["fio", "--parse-only", job], capture_output=True, text=True)
    assert r.returncode == 0, (options, r.stdout + r.stderr)

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
                   ("small-4k-cold-io_uring-2x16-page-cache-peer", 2),
                   ("small-4k-cold-io_uring-2x32-page-cache-peer", 2)):
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
