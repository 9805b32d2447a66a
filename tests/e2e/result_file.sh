# End to end (issue 3): a real run's result file has every field, typed; two runs of one config
# agree on config hash and data fingerprint, a touched file changes the fingerprint; a killed
# run leaves no partial result; a reader that only knows Google Benchmark's keys reads it.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 16 --file-size 32KiB --layout flat --seed 1 >/dev/null
cat >"$WORK/c.json" <<'JSON'
{"name": "e2e-result", "dataset": {"source": "${E2E_SOURCE}"}, "defaults": {"repetitions": 3},
 "families": [{"family": "file_read", "pattern": "sequential", "block_size": "32KiB", "cache_state": "warm",
               "engine": "${E2E_UNSET_ENGINE:-psync}"}]}
JSON
unset E2E_UNSET_ENGINE
export E2E_SOURCE=$WORK/src BENCHMARK_E2E_MARKER=on
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/a.json" --quiet
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/b.json"
# Google Benchmark's raw DEBUG warning becomes one note saying what it means for the figures.
if grep -q "Library was built as DEBUG" "$WORK/out" "$WORK/err"; then fail "the library's raw DEBUG warning was shown"; fi
notes=$(cat "$WORK/out" "$WORK/err" | grep -c "^note: Google Benchmark was built as DEBUG" || true)
[ "$notes" -le 1 ] || fail "the DEBUG note was shown $notes times"
touch -d '2020-01-01 00:00:00' "$WORK/src/file_000003.bin"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/c.json.result" --quiet

python3 - "$WORK/a.json" "$WORK/b.json" "$WORK/c.json.result" <<'PY'
import json, sys
a, b, c = (json.load(open(p)) for p in sys.argv[1:])
def typed(doc, path, kind):
    cur = doc
    for k in path.split("."):
        assert k in cur, f"missing {path}"
        cur = cur[k]
    assert isinstance(cur, kind), f"{path}: {type(cur).__name__}"
for path, kind in [("schema", str), ("context", dict), ("context.date", str), ("context.num_cpus", int),
                   ("context.library_version", str),
                   ("tool.version", str), ("tool.git_commit", str), ("tool.git_dirty", bool),
                   ("tool.compiler", str), ("tool.build_type", str), ("tool.benchmark_version", str),
                   ("command_line", list), ("environment_variables", dict),
                   ("config.sha256", str), ("config.resolved", dict), ("config.name", str),
                   ("dataset.source.files", int), ("dataset.source.bytes", int),
                   ("dataset.source.fingerprint", str),
                   ("environment.host.cpu_model", str), ("environment.host.cores", int),
                   ("environment.host.memory_total_bytes", int), ("environment.host.kernel", str),
                   ("environment.host.hostname", str), ("environment.host.gpus", list),
                   ("environment.paths.source.resolved", str), ("environment.paths.source.fs_type", str),
                   ("environment.paths.source.mount_point", str), ("benchmarks", list)]:
    typed(a, path, kind)
assert a["schema"] == "feedbench-result/1" and a["schema_revision"] == 2, (a["schema"], a.get("schema_revision"))
assert a["environment_variables"].get("E2E_SOURCE"), "expanded ${VAR} not recorded"
assert a["environment_variables"].get("BENCHMARK_E2E_MARKER") == "on"
# A ${VAR:-default} whose VAR was unset is the config's default, not a variable the user set.
assert "E2E_UNSET_ENGINE" not in a["environment_variables"], a["environment_variables"]
assert a["config"]["defaults_used"] == {"E2E_UNSET_ENGINE": "psync"}, a["config"].get("defaults_used")
# The library's build type as the library says it, and a note when it is a debug build.
assert a["context"]["library_build_type"] in ("debug", "release"), a["context"]["library_build_type"]
assert ("library_build_note" in a["context"]) == (a["context"]["library_build_type"] == "debug")
assert a["command_line"][:2] == ["feedbench", "run"], a["command_line"]
its = [x for x in a["benchmarks"] if x["run_type"] == "iteration"]
aggs = [x for x in a["benchmarks"] if x["run_type"] == "aggregate"]
# Google Benchmark's aggregates fold excluded repetitions too: shown, not kept.
assert len(its) == 3 and not aggs, (len(its), len(aggs))
def decode_runs(h):
    # base64 of zlib of LEB128 varints: per run of non-empty bins, the gap, the length, the counts.
    import base64, zlib
    raw, pos, counts = zlib.decompress(base64.b64decode(h["runs"])), 0, []
    def varint():
        nonlocal pos
        v = shift = 0
        while True:
            b = raw[pos]; pos += 1
            v |= (b & 0x7f) << shift; shift += 7
            if not b & 0x80:
                return v
    while pos < len(raw):
        varint(); n = varint()
        counts += [varint() for _ in range(n)]
    return counts
for x in its:
    for k, kind in [("name", str), ("run_name", str), ("repetitions", int), ("repetition_index", int),
                    ("iterations", int), ("real_time", float), ("cpu_time", float), ("time_unit", str),
                    ("case", str), ("params", dict), ("cache", dict), ("latency_hist", dict)]:
        assert isinstance(x[k], kind), (k, type(x[k]))
    h = x["latency_hist"]
    assert h["encoding"] == "zlib-varint-runs" and h["sub_bucket_bits"] == 7, h
    assert sum(decode_runs(h)) == h["count"] > 0, "histogram bins"
    assert "latency" not in x, "revision 1's bins, which revision-1 readers would parse"
    assert x["cache"]["requested"] == "warm" and isinstance(x["cache"]["achieved"], bool)
assert a["config"]["sha256"] == b["config"]["sha256"] == c["config"]["sha256"]
assert a["dataset"]["source"]["fingerprint"] == b["dataset"]["source"]["fingerprint"]
assert a["dataset"]["source"]["fingerprint"] != c["dataset"]["source"]["fingerprint"], "touch not seen"

# A reader that knows only Google Benchmark's JSON (like its compare.py).
def gbench_read(doc):
    assert "context" in doc and "benchmarks" in doc
    out = {}
    for bm in doc["benchmarks"]:
        if bm.get("run_type") == "aggregate":
            continue
        out.setdefault(bm["name"], []).append(bm["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[bm["time_unit"]])
    return out
assert len(gbench_read(a)) == 1
print("result files ok")
PY

# Google Benchmark's own compare.py (Debian: libbenchmark-tools, with python3-scipy) reads it.
compare=/usr/share/benchmark/compare.py
py=""
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import scipy' 2>/dev/null; then py=$p; break; fi
done
if [ -f "$compare" ] && [ -n "$py" ]; then
  "$py" "$compare" benchmarks "$WORK/a.json" "$WORK/b.json" >"$WORK/compare.txt" 2>&1 ||
    { cat "$WORK/compare.txt"; fail "compare.py could not read two result files"; }
  expect_in "$WORK/compare.txt" "file_read/pattern:sequential/bs:32768/engine:psync/qd:1/workers:1/state:warm/path:source/iterations:1/repeats:3/manual_time"
  expect_in "$WORK/compare.txt" "OVERALL_GEOMEAN"
else
  echo "note: Google Benchmark's compare.py not installed (libbenchmark-tools, python3-scipy): not run"
fi

# A run killed part-way leaves no result file, not even a temporary one.
"$FEEDBENCH" gen --out "$WORK/big" --files 200 --file-size 256KiB --layout flat --seed 2 >/dev/null
mkdir "$WORK/results"
E2E_SOURCE=$WORK/big "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/results/r.json" --quiet \
  --set repetitions=200 --set cache_state=cold >/dev/null 2>&1 &
pid=$!
sleep 2
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
left=$(ls -A "$WORK/results")
[ -z "$left" ] || fail "a killed run left: $left"
echo ok
