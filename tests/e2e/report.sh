# feedbench report: bad input gives exit 2; a report of a real run and of result fixtures
# (file_read + loader with an accelerator sweep, two files) is self-contained, and in headless
# Chromium loads without a JavaScript error and draws every chart (checked by the page itself:
# <html data-report-status="ok N charts"> after testing each canvas for drawn pixels).
# REPORT_SHOTS=DIR keeps the screenshots there, to look at.
source "$(dirname "$0")/lib.bash"

# --- bad input
expect_exit 2 "$FEEDBENCH" report "$WORK/missing.json" --out "$WORK/x.html"
expect_in "$WORK/err" "missing.json"
echo '{"schema": "feedbench-result/1", "benchmarks": [' >"$WORK/broken.json"
expect_exit 2 "$FEEDBENCH" report "$WORK/broken.json" --out "$WORK/x.html"
expect_in "$WORK/err" "broken.json"
expect_exit 2 "$FEEDBENCH" report --out "$WORK/x.html"
[ ! -e "$WORK/x.html" ] || fail "a report was written for bad input"

# --- fixtures: result files in the layout results/README.md documents.
python3 - "$WORK" <<'EOF'
import json, random, sys
work = sys.argv[1]

def bin_of(v):  # the harness's log-linear layout: 128 sub-buckets per power of two
    if v < 128:
        return v, v + 1
    bucket = v.bit_length() - 1 - 6
    w = 1 << (bucket - 1)
    lower = (v >> (bucket - 1)) << (bucket - 1)
    return lower, lower + w

def histogram(values):
    bins = {}
    for v in values:
        b = bin_of(v)
        bins[b] = bins.get(b, 0) + 1
    return {"unit": "ns", "count": len(values), "min": min(values), "max": max(values), "sub_bucket_bits": 7,
            "bins": [[lo, hi, n] for (lo, hi), n in sorted(bins.items())]}

def doc(speed, instance):
    rnd = random.Random(instance)
    benchmarks = []
    for pattern, bs in (("sequential", 1 << 20), ("random", 65536)):
        for path in ("source", "cache"):
            for state in ("cold", "warm", "direct"):
                for workers in (1, 2, 4, 8):
                    name = f"file_read/pattern:{pattern}/bs:{bs}/engine:psync/qd:1/workers:{workers}/state:{state}/path:{path}"
                    base = {"cold": 150e6, "warm": 2.5e9, "direct": 140e6}[state] * (2 if path == "cache" else 1) * speed
                    lat_us = {"cold": 400, "warm": 20, "direct": 420}[state] / (2 if path == "cache" else 1)
                    for rep in range(3):
                        bps = base * min(workers, 4) ** 0.6 * rnd.uniform(0.95, 1.05)
                        lats = [max(1, int(rnd.lognormvariate(0, 0.5) * lat_us * 1000)) for _ in range(400)]
                        residency = 0.0 if state != "warm" else (0.6 if (path, workers) == ("source", 8) else 1.0)
                        entry = {
                            "name": name + "/iterations:1/repeats:3/manual_time", "run_name": name + "/iterations:1/repeats:3/manual_time",
                            "run_type": "iteration", "repetitions": 3, "repetition_index": rep, "threads": 1, "iterations": 1,
                            "real_time": 100.0, "cpu_time": 10.0, "time_unit": "ms",
                            "bytes_per_second": bps, "items_per_second": bps / bs, "files_per_second": bps / (256 * 1024),
                            "lat_p50_us": lat_us, "lat_p99_us": lat_us * 3, "residency_before": residency, "cpu_util": 0.1 * workers,
                            "case": name,
                            "params": {"family": "file_read", "pattern": pattern, "block_size": bs, "engine": "psync", "queue_depth": 1,
                                       "workers": workers, "cache_state": state, "path": path},
                            "cache": {"requested": state, "residency_before": residency,
                                      "achieved": not (state == "warm" and residency < 0.99), "method": "mincore"},
                            "latency": histogram(lats),
                        }
                        benchmarks.append(entry)
    for path in ("source", "cache"):
        for acc in (1, 2, 4, 8):
            for workers in (1, 2, 4):
                name = f"loader/batch:32/workers:{workers}/acc:{acc}/state:cold/path:{path}"
                au = min(0.99, 0.3 * workers * speed * (2 if path == "cache" else 1) / acc ** 0.5)
                benchmarks.append({
                    "name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
                    "threads": 1, "iterations": 1, "real_time": 1000.0, "cpu_time": 100.0, "time_unit": "ms",
                    "samples_per_second": 3000 * au, "au": au, "stall_fraction": 1 - au, "wait_p50_ms": 5 * (1 - au), "epoch_s": 2.0,
                    "case": name,
                    "params": {"family": "loader", "batch_size": 32, "workers": workers, "accelerators": acc, "target_au": 0.9,
                               "cache_state": "cold", "path": path},
                    "cache": {"requested": "cold", "residency_before": 0.0, "achieved": True},
                    "extra": {"verdict": f"AU {au * 100:.1f}% — " + ("storage keeps up" if au >= 0.9 else "training waits for data")},
                })
    return {
        "schema": "feedbench-result/1",
        "context": {"date": "2024-05-01T10:00:00+00:00", "host_name": "gpu-1", "library_version": "1.7.1"},
        "tool": {"version": "0.1.0", "git_commit": "0123456789abcdef0123", "git_dirty": False, "benchmark_version": "1.7.1"},
        "command_line": ["feedbench", "run", "--config", "configs/demo.json", "--out", "result.json"],
        "environment_variables": {"FEEDBENCH_SOURCE": "/data/imagenet"},
        "config": {"file": "configs/demo.json", "name": "demo", "sha256": "ab" * 32,
                   "resolved": {"name": "demo", "families": [{"family": "file_read", "workers": [1, 2, 4, 8]}]}},
        "dataset": {"source": {"root": "/data/imagenet", "files": 320, "bytes": 73400320, "fingerprint": "9f" * 32},
                    "cache": {"root": "/nvme/cache", "files": 160, "bytes": 36700160, "fingerprint": "7e" * 32,
                              "manifest": {"label": "demo-v1", "version": 1}}},
        "environment": {
            "host": {"cpu_model": "AMD EPYC 7R13", "cores": 96, "memory_total_bytes": 1 << 40, "kernel": "6.1.0-18-cloud-amd64",
                     "distribution": "Debian GNU/Linux 12 (bookworm)", "hostname": "gpu-1", "instance_type": instance,
                     "gpus": [{"name": "NVIDIA A100-SXM4-40GB", "memory": "40960 MiB", "driver": "535.104"}] * 8},
            "paths": {"source": {"resolved": "/data/imagenet", "fs_type": "nfs4", "mount_point": "/data", "mount_source": "fs-1:/export",
                                 "device": "", "device_info": {}},
                      "cache": {"resolved": "/nvme/cache", "fs_type": "xfs", "mount_point": "/nvme", "mount_source": "/dev/nvme1n1",
                                "device": "nvme1n1", "device_info": {"model": "Amazon EC2 NVMe Instance Storage", "rotational": False,
                                                                     "read_ahead_kb": 128, "scheduler": "none"}}}},
        "summary": {"note": "fixture"},
        "benchmarks": benchmarks,
    }

json.dump(doc(1.0, "p4d.24xlarge"), open(f"{work}/before.json", "w"), indent=1)
json.dump(doc(1.6, "p5.48xlarge"), open(f"{work}/after.json", "w"), indent=1)
EOF

expect_exit 0 "$FEEDBENCH" report "$WORK/before.json" --out "$WORK/one.html" --title "Qualification of p4d"
expect_in "$WORK/out" "$WORK/one.html"
expect_exit 0 "$FEEDBENCH" report "$WORK/before.json" "$WORK/after.json" --out "$WORK/two.html"
for page in one two; do
  # Self-contained: every src/href is an in-page anchor.
  if grep -oiE '(src|href)=["'"'"']?[^"'"'"' >#][^"'"'"' >]*' "$WORK/$page.html"; then fail "$page.html refers to something outside the page"; fi
done
expect_in "$WORK/one.html" "Source path keeps 1 simulated accelerator at AU ≥ 90%; cache path keeps 4."
expect_in "$WORK/one.html" "<title>Qualification of p4d</title>"
expect_in "$WORK/two.html" 'id="ratios"'
# --label names the files: once per file, refused otherwise before anything is read.
expect_exit 2 "$FEEDBENCH" report "$WORK/before.json" "$WORK/after.json" --label a --out "$WORK/x.html"
expect_in "$WORK/err" "--label: given once for 2 result files"
expect_exit 2 "$FEEDBENCH" report "$WORK/before.json" "$WORK/after.json" --label a --label a --out "$WORK/x.html"
expect_in "$WORK/err" '"a" given twice'
[ ! -e "$WORK/x.html" ] || fail "a report was written for a bad --label"
expect_exit 0 "$FEEDBENCH" report "$WORK/before.json" "$WORK/after.json" --label old --label new --out "$WORK/labels.html"
expect_in "$WORK/labels.html" '"name":"old"'
expect_in "$WORK/labels.html" '<th scope="col" class="num key">new / old</th>'

# --- a real run of a tiny config, reported
mkdir -p "$WORK/data"
"$FEEDBENCH" gen --out "$WORK/data/source" --files 12 --file-size 64KiB --layout flat --seed 1 >/dev/null
cat >"$WORK/tiny.json" <<EOF
{
  "name": "report-e2e",
  "dataset": {"source": "$WORK/data/source"},
  "defaults": {"repetitions": 2},
  "families": [
    {"family": "file_read", "pattern": "sequential", "block_size": "64KiB", "workers": [1, 2],
     "cache_state": ["cold", "warm"], "path": "source"}
  ]
}
EOF
expect_exit 0 "$FEEDBENCH" run --config "$WORK/tiny.json" --out "$WORK/run.json"
expect_exit 0 "$FEEDBENCH" report "$WORK/run.json" --out "$WORK/run.html"
expect_in "$WORK/run.html" "Source path reads at best"

# --- rendered in headless Chromium
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip "chromium is not installed (apt-get install chromium): the pages were written but not rendered"
chrome() {  # chrome PAGE ARGS...: one headless load of file://PAGE, network disabled
  local page=$1; shift
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage \
    --user-data-dir="$WORK/chrome" --enable-logging=stderr --v=0 --virtual-time-budget=5000 \
    "$@" "file://$page" 2>>"$WORK/chrome.log"
}
# The number of charts each page must draw. Fixtures: throughput and latency per pattern and
# state (2 patterns x 3 states), bars per pattern, AU vs workers (2 paths x 4 accelerator
# counts: 8 series) and vs accelerators; with two files the loader's 16 and 12 series are split
# by accelerators (4 charts) and by workers (3). The run: throughput and latency per state, bars.
declare -A want=([one]=16 [two]=21 [run]=5)
for page in one two run; do
  chrome "$WORK/$page.html" --dump-dom >"$WORK/$page.dom" || fail "chromium could not load $page.html (see below)$(tail -20 "$WORK/chrome.log")"
  status=$(grep -o 'data-report-status="[^"]*"' "$WORK/$page.dom" || true)
  [ "$status" = "data-report-status=\"ok ${want[$page]} charts\"" ] || {
    tail -30 "$WORK/chrome.log"; fail "$page.html: expected ${want[$page]} charts drawn, page says: ${status:-nothing (script did not run)}"; }
  if grep -E 'Uncaught|CONSOLE.*(Error|error)' "$WORK/chrome.log"; then fail "$page.html: JavaScript error in the console"; fi
done
# Several files: every line chart has a series per file, named by the file's label (the two
# share a cache label, so their instance types), and none has more than 8.
python3 - "$WORK/two.dom" <<'EOF' || fail "two.html: a chart lacks a series per file, or has too many"
import html, re, sys
dom = open(sys.argv[1]).read()
series = [html.unescape(s).split(" | ") for s in re.findall(r'<canvas[^>]*data-series="([^"]*)"', dom)]
assert len(series) == 21, series
for s in series:
    assert len(s) <= 8, s
    if s != ["cold", "warm", "direct"]:  # the bars: one per state, a category per path and file
        assert any("p4d.24xlarge" in x for x in s) and any("p5.48xlarge" in x for x in s), s
    assert not any("before" in x or "/" in x for x in s), s
EOF
if [ -n "${REPORT_SHOTS:-}" ]; then
  mkdir -p "$REPORT_SHOTS"
  for page in one two run; do
    chrome "$WORK/$page.html" --screenshot="$REPORT_SHOTS/$page.png" --window-size=1280,4200 >/dev/null
  done
fi
echo "ok: reports render, self-contained, every chart drawn"
