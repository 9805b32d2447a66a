# What `run` refuses, and what it records about the checks it made: a cache whose folder no
# longer holds what its manifest lists (cheap listing check; --verify-cache re-hashes), empty
# selections, a filter that matches nothing, a run whose every case was skipped, files that
# shrink before a round (every case excluded: nothing measured), the kind of fingerprint, and
# access times left alone (O_NOATIME).
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 12 --file-size 64KiB --layout classes --classes 2 --seed 4 >/dev/null
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" >/dev/null 2>&1 || fail "stage"
cp -a "$WORK/cache" "$WORK/cache.good"
restore_cache() { rm -rf "$WORK/cache"; cp -a "$WORK/cache.good" "$WORK/cache"; }
first=$(cd "$WORK/cache" && find . -name '*.bin' | sort | head -1 | cut -c3-)
second=$(cd "$WORK/cache" && find . -name '*.bin' | sort | sed -n 2p | cut -c3-)

cat >"$WORK/c.json" <<JSON
{
  "name": "e2e-refusals",
  "dataset": {"source": "\${E2E_SOURCE}", "cache": "\${E2E_CACHE:-$WORK/cache}"},
  "defaults": {"repetitions": 1, "seed": 5, "engine": "psync"},
  "families": [
    {"family": "file_read", "pattern": "sequential", "block_size": "16KiB", "cache_state": "cold",
     "path": ["source", "cache"]}
  ]
}
JSON
export E2E_SOURCE=$WORK/src
before=$(tree_digest "$WORK/src")

# 1. A good cache: measured, and the result says what was checked.
# Access times older than the mtimes: relatime would update them on a read without O_NOATIME.
find "$WORK/src" -type f -exec touch -a -d '2001-01-01 00:00:00' {} +
atimes=$(find "$WORK/src" -type f -printf '%A@ %p\n' | sort)
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r1.json" --fingerprint content
[ "$atimes" = "$(find "$WORK/src" -type f -printf '%A@ %p\n' | sort)" ] || fail "the run changed access times"
python3 - "$WORK/r1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
src, cache = d["dataset"]["source"], d["dataset"]["cache"]
assert src["fingerprint_kind"] == "metadata" and len(src["fingerprint"]) == 64, src
assert len(src["content_fingerprint"]) == 64, src
assert "4 KiB" in src["content_sample"], src
# The staged copies hold the same bytes: the same content fingerprint, another metadata root.
assert cache["content_fingerprint"] == src["content_fingerprint"], (cache, src)
v = cache["verification"]
assert v == {"method": "listing+sizes+mtimes", "ok": True, "problems": [], "files_checked": 12,
             "bytes_checked": 12 * 65536}, v
assert cache["verified"] is True, cache
its = [b for b in d["benchmarks"] if b["run_type"] == "iteration"]
assert len(its) == 2 and not any(b.get("error_occurred") for b in its), its
for b in its:
    assert b["extra"]["noatime"] is True, b["extra"]
    assert b["extra"].get("round_complete", True) is True, b["extra"]
PY

# 2. A file deleted from the cache, one resized: the manifest still matches the source, the
#    folder does not. Refused before anything runs (exit 2), naming the files.
rm "$WORK/cache/$first"
printf 'short' >"$WORK/cache/$second"
expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r2.json"
expect_in "$WORK/err" "does not hold what its manifest lists"
expect_in "$WORK/err" "missing from the cache: $first"
expect_in "$WORK/err" "size differs from the staged copy: $second (5 bytes, staged 65536)"
expect_in "$WORK/err" "--allow-unverified-cache"
[ ! -e "$WORK/r2.json" ] || fail "a result file for a refused run"
# Measured anyway when asked, and recorded as not verified, with the problems.
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r3.json" --allow-unverified-cache
expect_in "$WORK/err" "warning: measuring an unverified cache"
python3 - "$WORK/r3.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["dataset"]["cache"]
assert c["verified"] is False and c["verification"]["ok"] is False, c
assert any(p.startswith("missing from the cache: ") for p in c["verification"]["problems"]), c
PY

# 3. Same size, mtime put back: the listing cannot tell; --verify-cache re-hashes and refuses.
restore_cache
printf 'X' | dd of="$WORK/cache/$first" bs=1 seek=100 conv=notrunc status=none
touch -r "$WORK/src/$first" "$WORK/cache/$first"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r4.json" --benchmark_filter=path:cache
expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r5.json" --verify-cache
expect_in "$WORK/err" "content differs from the manifest's SHA-256: $first"
expect_in "$WORK/err" "checked by sha256"
restore_cache
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r6.json" --verify-cache --benchmark_filter=path:cache
python3 -c "
import json
v = json.load(open('$WORK/r6.json'))['dataset']['cache']['verification']
assert v['method'] == 'sha256' and v['ok'] and v['files_checked'] == 12, v
"

# 4. Nothing to measure is an input error before any case runs: an empty source folder (an
#    unmounted mount point looks like this), an include that matches nothing, an empty cache.
mkdir "$WORK/empty"
E2E_SOURCE=$WORK/empty expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r7.json"
expect_in "$WORK/err" "the source selection under $WORK/empty holds no files"
python3 -c "
import json; c = json.load(open('$WORK/c.json')); c['dataset']['include'] = ['nothing/**', '*.jpeg']
json.dump(c, open('$WORK/include.json', 'w'))"
expect_exit 2 "$FEEDBENCH" run --config "$WORK/include.json" --out "$WORK/r7.json"
expect_in "$WORK/err" "holds no files (include: 'nothing/**', '*.jpeg')"
E2E_CACHE=$WORK/empty expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r7.json"
expect_in "$WORK/err" "the cache selection under $WORK/empty holds no files"
[ ! -e "$WORK/r7.json" ] || fail "a result file for an empty selection"

# 5. A filter that matches no case: nothing measured, exit 1, no result file.
expect_exit 1 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r8.json" --benchmark_filter=nosuchcase
expect_in "$WORK/err" "no case matches --benchmark_filter=nosuchcase"
[ ! -e "$WORK/r8.json" ] || fail "a result file when no case ran"

# 6. Every case skipped (no file holds a whole record): the skips are recorded, exit 1.
cat >"$WORK/skip.json" <<JSON
{
  "name": "e2e-all-skipped",
  "dataset": {"source": "$WORK/src"},
  "defaults": {"repetitions": 1},
  "families": [{"family": "loader", "samples": "records:1GiB", "batch_size": 2, "steps": 2,
                "step_time": "1ms", "cache_state": "warm"}]
}
JSON
expect_exit 1 "$FEEDBENCH" run --config "$WORK/skip.json" --out "$WORK/r9.json"
expect_in "$WORK/err" "every case was skipped"
expect_in "$WORK/err" "holds a whole record"
python3 -c "
import json
d = json.load(open('$WORK/r9.json'))
its = [b for b in d['benchmarks'] if b['run_type'] == 'iteration']
assert its and all(b['error_occurred'] for b in its), its
"

[ "$before" = "$(tree_digest "$WORK/src")" ] || fail "the source data set changed"

# 7. Files that shrink after the scan: every round reads less than planned, so no repetition is
#    a figure; each says so (label, extra.round_complete false, bytes planned and read), and with
#    every case excluded nothing was measured: exit 1.
FEEDBENCH_RUN_TEST_DELAY_MS=3000 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r10.json" \
  --benchmark_filter=path:source --set engine='["psync","mmap"]' --set cache_state=warm \
  >"$WORK/out" 2>"$WORK/err" &
pid=$!
for _ in $(seq 1 100); do grep -q "^source" "$WORK/out" 2>/dev/null && break; sleep 0.1; done
truncate -s 1000 "$WORK/src/$first"
rc=0
wait $pid || rc=$?
[ "$rc" = 1 ] || { cat "$WORK/err"; fail "expected exit 1 when every repetition was excluded, got $rc"; }
expect_in "$WORK/err" "feedbench run: nothing measured: every case was skipped or excluded (2 cases; the result file records why): short round: read"
# The console names the excluded round and why; the result keeps the label.
expect_in "$WORK/out" "excluded (repetition 0: short round: read"
python3 - "$WORK/r10.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
its = [b for b in d["benchmarks"] if b["run_type"] == "iteration"]
assert len(its) == 2, [b["case"] for b in its]
for b in its:
    e = b["extra"]
    assert e["round_complete"] is False, (b["case"], e)
    assert e["bytes_planned"] == 12 * 65536 and e["bytes_read"] == 11 * 65536 + 1000, e
    assert "incomplete round" in b["label"], b["label"]
PY
echo ok
