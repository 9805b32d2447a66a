# feedbench run --emit-fio DIR: one fio job file per file_read case, which fio accepts
# (--parse-only) and which reads the same files the same way; skipped where fio is missing.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/data" --files 12 --file-size 64KiB --layout classes >/dev/null
cat >"$WORK/config.json" <<JSON
{
  "name": "emit-fio",
  "dataset": {"source": "$WORK/data"},
  "defaults": {"repetitions": 1, "seed": 7},
  "families": [
    {"family": "file_read", "pattern": "sequential", "block_size": "64KiB", "workers": [1, 2],
     "cache_state": ["cold", "warm"], "path": "source"},
    {"family": "file_read", "pattern": "shuffled_files", "block_size": "16KiB",
     "cache_state": "cold", "path": "source"},
    {"family": "file_read", "pattern": "random", "block_size": "4KiB", "engine": "libaio",
     "queue_depth": 8, "workers": 2, "cache_state": "direct", "path": "source"}
  ]
}
JSON

expect_exit 0 "$FEEDBENCH" run --config "$WORK/config.json" --emit-fio "$WORK/fio" \
  --out "$WORK/result.json" --quiet
expect_in "$WORK/out" "wrote 6 fio job files"
[ "$(ls "$WORK/fio"/*.fio | wc -l)" = 6 ] || fail "expected 6 job files: $(ls "$WORK/fio")"

# What each job must say, checked without fio.
python3 - "$WORK/fio" "$WORK/data" <<'PY' || fail "job files do not match their cases"
import glob, os, sys
jobs, data = sys.argv[1], os.path.realpath(sys.argv[2])
names = sorted(os.path.relpath(os.path.join(d, f), data)
               for d, _, fs in os.walk(data) for f in fs if not f.startswith("."))
for path in sorted(glob.glob(jobs + "/*.fio")):
    text = open(path).read()
    lines = [l for l in text.splitlines() if l and not l.startswith("#")]
    kv = dict(l.split("=", 1) for l in lines if "=" in l and not l.startswith("filename="))
    listed = [n for l in lines if l.startswith("filename=") for n in l[9:].split(":")]
    base = os.path.basename(path)
    assert "thread" in lines and "group_reporting" in lines, base
    assert kv["directory"] == data, (base, kv["directory"])
    assert kv["fadvise_hint"] == "0" and kv["mem_align"] == "4096", base
    if "random" in base:
        assert kv["rw"] == "randread" and kv["ioengine"] == "libaio" and kv["iodepth"] == "8", base
        assert kv["direct"] == "1" and kv["norandommap"] == "1" and kv["numjobs"] == "2", base
        assert kv["io_size"] == str(12 * 65536 // 2), base
        assert sorted(listed) == names, base
    else:
        assert kv["rw"] == "read" and kv["openfiles"] == "1", base
        assert sorted(listed) == names, (base, listed)  # every file once, over all workers
        if "state_cold" in base:
            assert kv["invalidate"] == "1", base
        if "state_warm" in base:
            assert kv["pre_read"] == "1" and kv["invalidate"] == "0", base
        if "shuffled" in base:
            assert listed != sorted(listed), "shuffled_files lists files in sorted order"
            assert kv["bs"] == "16384", base
        if "workers_2" in base:
            assert text.count("[worker") == 2, base
PY

command -v fio >/dev/null || skip "fio is not installed: job files checked, not parsed by fio"
for job in "$WORK"/fio/*.fio; do
  fio --parse-only "$job" >"$WORK/parse.out" 2>&1 || { cat "$WORK/parse.out"; fail "fio rejects $job"; }
done
# One cheap job really runs and reads exactly the data set once.
job=$(ls "$WORK"/fio/*sequential*workers_1*state_warm*.fio | head -1)
fio --output-format=json "$job" >"$WORK/fio.json" 2>"$WORK/fio.err" || { cat "$WORK/fio.err"; fail "fio failed on $job"; }
python3 - "$WORK/fio.json" <<'PY' || fail "fio did not read the data set once"
import json, sys
out = open(sys.argv[1]).read()
doc = json.loads(out[out.index("{"):])
assert doc["jobs"][0]["read"]["io_bytes"] == 12 * 65536, doc["jobs"][0]["read"]["io_bytes"]
PY
