# The limit, attributed, on real slow storage: an ext4 image on a loop device read with O_DIRECT
# underneath (tools/slow-device), reads throttled by the kernel to 40 MiB/s. Four crafted loader
# cases must each name their own limit, from the device's own counters and the host's CPU:
#   storage-bound  cold, no transform, demand 100 MiB/s on a 40 MiB/s store
#   fed by storage cold, no transform, demand 12 MiB/s
#   page cache     cold, hot_set:10%:90% (the hot files read again from memory), demand 50 MiB/s
#   CPU-bound      warm, decode on this host's cores with 4 workers per core, a 1 ms step
# and the summary's first lines state the accelerators fed and the limit. At these short steps
# PyTorch's own hand-over would be the limit of most (its own test: LoaderLimitTest): the cases
# take a free hand-over (framework none), so each names the limit it was crafted for.
source "$(dirname "$0")/lib.bash"
slow="$FEEDBENCH_SOURCE_DIR/tools/slow-device"
why=$("$slow" check 2>&1) || skip "${why#slow-device: }"
SD="$WORK/sd"
trap '"$slow" down "$SD" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
"$slow" up "$SD" --size 512M --read-bps 40M >/dev/null
MNT="$SD/mnt"

# 800 JPEGs of about 64 KiB (50 MiB: it fits in memory); the same files feed every case.
"$FEEDBENCH" gen --out "$MNT/src" --files 800 --format jpeg --file-size 64KiB --layout flat --seed 5 >/dev/null
workers=$((4 * $(nproc)))
cat >"$WORK/c.json" <<JSON
{"name": "limits", "dataset": {"source": "$MNT/src"},
 "defaults": {"repetitions": 1, "seed": 42, "engine": "psync", "warmup_steps": 1, "path": "source",
              "epochs": 1, "framework": "none"},
 "families": [
  {"family": "loader", "batch_size": 8, "workers": 2, "step_time": "5ms", "steps": 40, "cache_state": "cold",
   "transform": "none"},
  {"family": "loader", "batch_size": 2, "workers": 2, "step_time": "10ms", "steps": 60, "cache_state": "cold",
   "transform": "none", "target_au": 0.85},
  {"family": "loader", "batch_size": 8, "workers": 2, "step_time": "10ms", "steps": 100, "cache_state": "cold",
   "transform": "none", "pattern": "hot_set:10%:90%", "target_au": 0.85},
  {"family": "loader", "batch_size": 16, "workers": $workers, "prefetch": 1, "step_time": "1ms", "steps": 48,
   "cache_state": "warm", "transform": "decode:224"}
 ]}
JSON
"$slow" run "$SD" -- "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" >"$WORK/out" 2>"$WORK/err" ||
  { cat "$WORK/out" "$WORK/err"; fail "the run failed"; }
python3 - "$WORK/r.json" "$WORK/out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
runs = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
assert len(runs) == 4 and not any(b.get("error_occurred") for b in runs), [b.get("error_message") for b in runs]
def case(pred):
    (b,) = [b for b in runs if pred(b["params"])]
    x = b["extra"]
    assert x["judged"], x["verdict"]
    assert any("(loop" in d for d in x.get("devices", [])), x.get("devices")  # the device's own counters
    return b, x, x["limit"]
MiB = 1 << 20

b, x, l = case(lambda p: p["batch_size"] == 8 and p["steps"] == 40)
assert not l["fed"] and l["by"] == "storage", l
assert 30 * MiB <= l["device_bytes_per_second"] <= 44 * MiB, l  # the throttle's 40 MiB/s
assert l["memory_share"] < 0.1, l
assert "limit: storage — the device delivered" in x["verdict"], x["verdict"]

b, x, l = case(lambda p: p["batch_size"] == 2)
assert l["fed"] and l["by"] == "storage", (x["verdict"], l)
assert x["verdict"].split(" — ")[1].startswith("storage keeps up: the device delivered"), x["verdict"]

b, x, l = case(lambda p: p.get("pattern") == "hot_set:10%:90%")
assert l["fed"] and l["by"] == "page_cache", (x["verdict"], l)
assert l["memory_share"] >= 0.5 and l["reread_share"] >= 0.5, l
assert "fed by the page cache, not storage" in x["verdict"], x["verdict"]

b, x, l = case(lambda p: p["transform"] == "decode:224")
assert not l["fed"] and l["by"] == "cpu", (x["verdict"], l)
assert l["cpu_busy"] >= 0.85 and l["transform_share"] > 0.5, l
assert "limit: the decode's CPU" in x["verdict"], x["verdict"]
# One round cannot know whether more workers help (its worker sweep says that): it names the cores.
assert "more workers" not in x["verdict"], x["verdict"]
assert x["verdict_line"].startswith("AU ") and "limit: the decode's CPU, " in x["verdict_line"], x["verdict_line"]
assert x["cpu_bound"] is True

# The summary opens with its table (path, state, accelerators fed, limit, rate), then the
# accelerators fed, then each path and state's limit on a short line naming its case, details below.
answers = doc["summary"]["answers"]
feeds = answers["paths"][0]["feeds"]
assert feeds["cold"]["limit"]["by"] in ("storage", "page_cache"), feeds["cold"]
assert feeds["warm"]["limit"]["by"] == "cpu", feeds["warm"]
text = open(sys.argv[2]).read()
summary = text[text.index("\nSummary\n"):]
raw = summary.splitlines()[2:]
assert raw[0].split() == ["path", "state", "accelerators", "fed", "limit", "rate"], raw[:4]
assert raw[1].split()[:2] == ["source", "cold"] and raw[2].split()[:2] == ["source", "warm"], raw[:4]
assert "transform CPU" in raw[2], raw[:4]
heads = [l for l in raw if l.startswith("  ") and not l.startswith("   ")]
assert heads[3].startswith("  accelerators fed at AU"), heads[:6]
assert heads[4].startswith("  source cold: ") and "(at " in heads[4] and len(heads[4]) <= 120, heads[:6]
assert heads[5].startswith("  source warm: limit: the decode's CPU") and "(at " in heads[5], heads[:6]
print("ok:", [r["extra"]["limit"]["by"] or "?" for r in runs])
PY
