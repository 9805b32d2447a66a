# A cache of a hot subset (staged with --include) works with the shipped qualify config: the run
# names the mismatch instead of looping, every command it prints fixes what it claims when run
# as printed, the label survives, and "from-cache" reads the selection from the manifest.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 24 --file-size 16KiB..64KiB --layout classes --classes 3 --seed 5 >/dev/null
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --include 'class_000/**' --label hot-v1 >/dev/null 2>&1 || fail "stage"
cp -a "$WORK/cache" "$WORK/cache2"
qualify="$FEEDBENCH_SOURCE_DIR/configs/qualify-instance.json"
mkdir -p "$WORK/scratch" && export FEEDBENCH_SCRATCH=$WORK/scratch  # its checkpoint case writes there

# printed_command FILE WORDS: the first `...` in FILE that starts with WORDS, feedbench replaced
# by the binary under test.
printed_command() {
  grep -o "\`$2[^\`]*\`" "$1" | head -1 | tr -d '`' | sed "s|^feedbench |\"\$FEEDBENCH\" |"
}

# The qualify config reads every file; the cache holds class_000 only.
expect_exit 2 "$FEEDBENCH" run --config "$qualify" --source "$WORK/src" --cache "$WORK/cache" --dry-run
expect_in "$WORK/err" "holds another selection than this run reads (the cache: include 'class_000/**', label hot-v1; the run: every file)"
stage_cmd=$(printed_command "$WORK/err" "feedbench stage")
run_cmd=$(printed_command "$WORK/err" "feedbench run")
[ -n "$stage_cmd" ] && [ -n "$run_cmd" ] || fail "no command printed"
case "$stage_cmd" in *"--label hot-v1"*) ;; *) fail "the stage command drops the label: $stage_cmd" ;; esac

# The run command as printed: measures the cached subset (a dry run: the refusal is gone).
expect_exit 0 eval "$run_cmd"
# The stage command as printed: caches the run's selection, keeping the label; then no refusal.
expect_exit 0 eval "$stage_cmd"
expect_in "$WORK/out" "cache ready: label hot-v1"
expect_exit 0 "$FEEDBENCH" run --config "$qualify" --source "$WORK/src" --cache "$WORK/cache" --dry-run

# dataset.include "from-cache" in a config: the selection is the manifest's, and recorded.
cat > "$WORK/hot.json" <<JSON
{"name": "hot", "dataset": {"source": "$WORK/src", "cache": "$WORK/cache2", "include": "from-cache"},
 "defaults": {"repetitions": 1},
 "families": [{"family": "file_read", "pattern": "sequential", "block_size": "64KiB",
               "workers": 1, "cache_state": "warm", "path": ["source", "cache"]}]}
JSON
expect_exit 0 "$FEEDBENCH" run --config "$WORK/hot.json" --out "$WORK/hot-result.json" --quiet
expect_in "$WORK/out" "cache: label hot-v1, include 'class_000/**'"
python3 - "$WORK/hot-result.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["selection"] == {"include": ["class_000/**"], "from": "cache manifest"}, d["config"]["selection"]
assert d["dataset"]["source"]["files"] == d["dataset"]["cache"]["files"] == 8, d["dataset"]
PY

# The source changed since staging: the printed command restages it, keeping the label.
f=$(cd "$WORK/src" && ls class_000 | head -1)
printf 'more' >> "$WORK/src/class_000/$f"
expect_exit 2 "$FEEDBENCH" run --config "$WORK/hot.json" --out "$WORK/x.json" --quiet
expect_in "$WORK/err" "the source changed since staging"
stage_cmd=$(printed_command "$WORK/err" "feedbench stage")
expect_exit 0 eval "$stage_cmd"
expect_in "$WORK/out" "cache ready: label hot-v1"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/hot.json" --out "$WORK/x.json" --quiet

# No manifest to read the selection from: bad input, naming the config and the pointer.
mkdir "$WORK/empty"
expect_exit 2 "$FEEDBENCH" run --config "$WORK/hot.json" --cache "$WORK/empty" --dry-run
expect_in "$WORK/err" "/dataset/include: \"from-cache\": the cache $WORK/empty has no complete manifest"
echo ok
