# The shipped imagenet-like config at a small scale: a folder of real JPEGs, its hot 10% staged
# with stage --hot-set, skewed reads from the source and through the partial cache (hit share
# recorded, the cache serving what it holds), and a loader that decodes every sample.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 40 --format jpeg --file-size 16KiB..48KiB --classes 4 --seed 7 >/dev/null
before=$(tree_digest "$WORK/src")
expect_exit 0 "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/hot" --hot-set 10% --seed 42
expect_in "$WORK/err" "hot set: 4 of 40 files (10%, seed 42)"
[ "$(find "$WORK/hot" -name '*.jpg' | wc -l)" = 4 ] || fail "the cache does not hold the 4 hot files"

FEEDBENCH_SOURCE=$WORK/src FEEDBENCH_CACHE=$WORK/hot expect_exit 0 \
  "$FEEDBENCH" run --config "$FEEDBENCH_SOURCE_DIR/configs/imagenet-like.json" --out "$WORK/r.json" --quiet \
  --set repetitions=1 --set workers=2 --set batch_size=4 --set steps=8 --set warmup_steps=4 --set step_time=1ms
python3 - "$WORK/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
its = [b for b in d["benchmarks"] if b.get("run_type") == "iteration"]
errors = [b.get("error_message") for b in its if b.get("error_occurred")]
assert not errors, errors
reads = {(b["params"]["pattern"], b["params"]["path"]): b["extra"] for b in its if b["params"]["family"] == "file_read"}
assert set(reads) == {(p, r) for p in ("hot_set:10%:90%", "zipf:1.1") for r in ("source", "cache")}, reads.keys()
# 40 draws: the 4 hot files take 90% of them under hot_set (0.6 or more of 40 draws), about
# 55% under zipf:1.1 (ranks 1-4 of 40); the same draws, so the same share, on both paths.
for (pattern, path), x in reads.items():
    low, high = (0.6, 1.0) if pattern.startswith("hot_set") else (0.2, 0.9)
    assert low <= x["hit_share"] <= high, (pattern, path, x["hit_share"])
    assert x["served_by"] == ("source" if path == "source" else "cache where it holds the file, else source"), x
h = reads[("hot_set:10%:90%", "source")]["hit_share"]
assert h == reads[("hot_set:10%:90%", "cache")]["hit_share"], "the same draws on both paths"
loader = [b for b in its if b["params"]["family"] == "loader"]
assert loader and all(b["extra"]["decode_ms_per_mib"] > 0 for b in loader), loader
assert all(b["params"]["pattern"] == "hot_set:10%:90%" for b in loader), [b["params"] for b in loader]
assert all(b["extra"]["decoded_pixels"] % (224 * 224) == 0 for b in loader)
print("hit share", h)
PY
# A partial cache that is not part of the run's selection is refused before anything runs.
expect_exit 2 "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/x" --hot-set 100%
expect_in "$WORK/err" "--hot-set: expected a percentage of the files above 0% and below 100%, such as 10%, got '100%'"
python3 - "$FEEDBENCH_SOURCE_DIR/configs/imagenet-like.json" "$WORK/part.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["dataset"]["include"] = ["class_000/**"]
json.dump(c, open(sys.argv[2], "w"))
PY
FEEDBENCH_SOURCE=$WORK/src FEEDBENCH_CACHE=$WORK/hot expect_exit 2 "$FEEDBENCH" run --config "$WORK/part.json" --dry-run
expect_in "$WORK/err" "is not part of this selection"
[ "$before" = "$(tree_digest "$WORK/src")" ] || fail "the source data set changed"
echo ok
