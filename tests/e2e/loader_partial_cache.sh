# The loader on a partial cache (a staged hot set, dataset.partial_cache): on path cache it reads
# each sample from the cache when the cache holds it and from the source otherwise, as file_read
# does, and records the hit share of its skewed sampling. Which copy was read is observed in the
# page cache: every source file is evicted before a cold run, so afterwards only files the
# loader read from the source are resident there.
source "$(dirname "$0")/lib.bash"
command -v fincore >/dev/null || skip "no fincore (util-linux) to see which copies were read"

# 200 files, the hot 10% (20) staged; hot_set:10%:90% over 200 draws (one epoch, 25 steps × 8).
"$FEEDBENCH" gen --out "$WORK/src" --files 200 --file-size 4KiB --layout classes --classes 4 --seed 3 >/dev/null
expect_exit 0 "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/hot" --hot-set 10% --seed 42
before=$(tree_digest "$WORK/src")
cat >"$WORK/c.json" <<JSON
{"name": "loader-partial", "dataset": {"source": "$WORK/src", "cache": "$WORK/hot", "partial_cache": true},
 "defaults": {"repetitions": 1, "seed": 42, "engine": "psync"},
 "families": [{"family": "loader", "batch_size": 8, "workers": 1, "step_time": "1ms", "epochs": 1,
               "warmup_steps": 1, "cache_state": "cold", "path": "cache", "pattern": "hot_set:10%:90%"}]}
JSON
# Nothing of the source in the page cache before the run (the cold case evicts what it reads).
python3 - "$WORK/src" <<'PY'
import os, sys
for d, _, names in os.walk(sys.argv[1]):
    for n in names:
        fd = os.open(os.path.join(d, n), os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
PY
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --quiet
(cd "$WORK/src" && find . -type f | sort | while read -r f; do
   echo "${f#./} $(fincore --raw --noheadings --output PAGES "$f")"; done) >"$WORK/resident"
(cd "$WORK/hot" && find . -name '*.bin' | sed 's|^\./||' | sort) >"$WORK/hot.list"
python3 - "$WORK/r.json" "$WORK/resident" "$WORK/hot.list" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = [b for b in d["benchmarks"] if b.get("run_type") == "iteration"]
assert len(b) == 1 and not b[0].get("error_occurred"), [x.get("error_message") for x in b]
x = b[0]["extra"]
# 200 draws at 90% hot: the share's standard deviation is 0.021; 0.82..0.98 is about 4 of them.
assert "hit_share" in x, sorted(x)
assert 0.82 <= x["hit_share"] <= 0.98, x["hit_share"]
assert x["served_by"] == "cache where it holds the file, else source", x["served_by"]
assert x["dataset_bytes"] == 200 * 4096, x["dataset_bytes"]  # the whole selection, not the hot part
resident = {l.split()[0]: int(l.split()[1]) for l in open(sys.argv[2])}
hot = set(open(sys.argv[3]).read().split())
assert len(hot) == 20, len(hot)
from_source = [f for f, pages in resident.items() if pages > 0]
assert from_source, "no file outside the hot set was read from the source"
assert not hot & set(from_source), ("hot files read from the source", sorted(hot & set(from_source)))
print("hit share", x["hit_share"], "files read from the source", len(from_source))
PY
[ "$before" = "$(tree_digest "$WORK/src")" ] || fail "the source data set changed"
echo ok
