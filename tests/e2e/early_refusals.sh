#!/usr/bin/env bash
# What can be refused is refused before the first case runs: output paths that cannot be written
# (--out, its default, --csv, --markdown, --benchmark_out=, --emit-fio), an O_DIRECT block size
# that is not a multiple of the device's alignment, a block past the largest size. Each exits 2
# with one line, quickly (the first case would wait seconds first), with no case run and nothing
# written. `run --dry-run` makes the same checks; `diff --out` and `report --out` check theirs
# before comparing or rendering.
source "$(dirname "$0")/lib.bash"

FEEDBENCH=$(realpath "$FEEDBENCH")
"$FEEDBENCH" gen --out "$WORK/src" --files 8 --file-size 64KiB --classes 2 --seed 3 >/dev/null
mkdir -p "$WORK/cwd" "$WORK/cwd_results_file" "$WORK/outdir"
printf 'not a folder' >"$WORK/afile"
printf 'not a folder' >"$WORK/cwd_results_file/results"

config() {  # config NAME FAMILIES-JSON: writes $WORK/NAME.json
  printf '{"name": "t", "dataset": {"source": "%s"}, "defaults": {"repetitions": 1, "engine": "psync"}, "families": %s}\n' \
    "$WORK/src" "$2" >"$WORK/$1.json"
}
config good '[{"family": "file_read", "pattern": "sequential", "block_size": "16KiB", "cache_state": "cold"}]'
config misaligned '[{"family": "file_read", "pattern": "sequential", "block_size": "16KiB", "cache_state": "cold"},
                    {"family": "file_read", "pattern": "sequential", "block_size": 1000, "cache_state": "direct"}]'
config aligned '[{"family": "file_read", "pattern": "sequential", "block_size": "64KiB", "cache_state": "direct"}]'
config huge '[{"family": "file_read", "pattern": "sequential", "block_size": "3GiB", "cache_state": "cold"}]'

# Every run below would sleep this long once its paths are printed, before its first case: a
# refusal that comes later than that is a late one.
export FEEDBENCH_RUN_TEST_DELAY_MS=8000
listing_before=$(ls -A "$WORK")

# refused NAME EXPECTED-TEXT CMD...: runs CMD from $CWD (default an empty folder); expects exit 2
# within 5 s, EXPECTED-TEXT on stderr in a message of at most two lines, no case reported, and
# nothing written in the folder or beside the work files.
refused() {
  local name=$1 expected=$2; shift 2
  local cwd=${CWD:-$WORK/cwd} cwd_before
  cwd_before=$(ls -A "$cwd")
  local t0 t1
  t0=$(date +%s%N)
  (cd "$cwd" && expect_exit 2 "$@")
  t1=$(date +%s%N)
  expect_in "$WORK/err" "$expected"
  [ "$(grep -vc '^feedbench run: note:' "$WORK/err")" -le 2 ] || { cat "$WORK/err"; fail "$name: expected a one-line message"; }
  ! grep -q 'file_read/' "$WORK/out" || { cat "$WORK/out"; fail "$name: a case was reported before the refusal"; }
  [ $(((t1 - t0) / 1000000)) -lt 5000 ] || fail "$name: refused after $(((t1 - t0) / 1000000)) ms, not before the first case"
  [ "$(ls -A "$cwd")" = "$cwd_before" ] || { ls -la "$cwd"; fail "$name: a refused command wrote files"; }
  [ "$(ls -A "$WORK" | grep -vx 'out\|err')" = "$(echo "$listing_before" | grep -vx 'out\|err')" ] ||
    { ls -la "$WORK"; fail "$name: a refused command left something in the work folder"; }
  echo "ok: $name"
}

# ---- Output paths ------------------------------------------------------------------------------
refused out_under_file "--out: cannot write $WORK/afile/r.json: $WORK/afile is not a folder" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/afile/r.json"
refused out_is_folder "--out: cannot write $WORK/outdir: it is a folder, expected a file name" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/outdir"
refused out_unwritable "--out: cannot write /proc/feedbench-e2e/r.json: cannot create a file in /proc" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out /proc/feedbench-e2e/r.json
CWD=$WORK/cwd_results_file refused out_default "--out (default results/t/" \
  "$FEEDBENCH" run --config "$WORK/good.json"
expect_in "$WORK/err" "results is not a folder"
refused csv "--csv: cannot write $WORK/afile/r.csv: $WORK/afile is not a folder" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/r.json" --csv "$WORK/afile/r.csv"
refused markdown "--markdown: cannot write $WORK/afile/r.md: $WORK/afile is not a folder" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/r.json" --markdown "$WORK/afile/r.md"
refused benchmark_out "--benchmark_out: cannot write $WORK/afile/b.json: $WORK/afile is not a folder" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/r.json" "--benchmark_out=$WORK/afile/b.json"
refused emit_fio_under_file "--emit-fio: cannot write into $WORK/afile/fio: $WORK/afile is not a folder" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/r.json" --emit-fio "$WORK/afile/fio"
refused emit_fio_is_file "--emit-fio: cannot write into $WORK/afile: it is a file, expected a folder" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/r.json" --emit-fio "$WORK/afile"
[ ! -e "$WORK/r.json" ] || fail "a result file for a refused run"

# ---- Options that would do nothing are refused, not ignored -------------------------------------
refused budget_empty "--budget: expected a duration such as 20m, 90s or 1.5h, got ''" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/r.json" --budget ""
refused throttle_cache_without_cache "--throttle cache=1MiB/s: the config $WORK/good.json has no cache" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/r.json" --throttle cache=1MiB/s
expect_in "$WORK/err" "set dataset.cache (or --cache)"
sed 's|"dataset": {|"dataset": {"throttle": {"cache": "1MiB/s"}, |' "$WORK/good.json" >"$WORK/cwd/throttled.json"
refused config_throttle_cache_without_cache "$WORK/cwd/throttled.json: /dataset/throttle/cache: the config has no cache" \
  "$FEEDBENCH" run --config "$WORK/cwd/throttled.json" --out "$WORK/r.json"
rm "$WORK/cwd/throttled.json"
refused out_empty "--out: expected a file name, got ''" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out ""
refused csv_empty "--csv: expected a file name, got ''" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/r.json" --csv ""
refused emit_fio_empty "--emit-fio: expected a folder, got ''" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/r.json" --emit-fio ""

# ---- Block sizes -------------------------------------------------------------------------------
refused direct_misaligned "$WORK/misaligned.json: /families/1/block_size: block_size 1000 of case file_read/pattern:sequential/bs:1000/" \
  "$FEEDBENCH" run --config "$WORK/misaligned.json" --out "$WORK/r.json"
expect_in "$WORK/err" "is not a multiple of"
expect_in "$WORK/err" "O_DIRECT"
refused huge_block "$WORK/huge.json: /families/0/block_size: expected a size of at most 1 GiB, got \"3GiB\"" \
  "$FEEDBENCH" run --config "$WORK/huge.json" --out "$WORK/r.json"
refused huge_block_set "expected a size of at most 1 GiB, got \"3GiB\"" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/r.json" --set block_size=3GiB

# ---- --dry-run refuses what the run would refuse --------------------------------------------------
refused dry_run_misaligned "is not a multiple of" \
  "$FEEDBENCH" run --config "$WORK/misaligned.json" --dry-run
refused dry_run_out "--out: cannot write $WORK/afile/r.json" \
  "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/afile/r.json" --dry-run
# A cache that no longer holds what its manifest lists (the cheap listing check).
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" >/dev/null 2>&1 || fail "stage"
config cached '[{"family": "file_read", "pattern": "sequential", "block_size": "16KiB", "cache_state": "cold", "path": "cache"}]'
sed -i "s|\"source\": \"$WORK/src\"|\"source\": \"$WORK/src\", \"cache\": \"$WORK/cache\"|" "$WORK/cached.json"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/cached.json" --dry-run
rm "$(find "$WORK/cache" -name '*.bin' | sort | head -1)"
listing_before=$(ls -A "$WORK")
refused dry_run_cache "does not hold what its manifest lists" \
  "$FEEDBENCH" run --config "$WORK/cached.json" --dry-run
# What it accepts, it accepts without leaving anything behind: not the folders --out would need,
# not the probe file.
expect_exit 0 "$FEEDBENCH" run --config "$WORK/aligned.json" --dry-run --out "$WORK/new/a/b/r.json" \
  --csv "$WORK/new/c.csv" --emit-fio "$WORK/new/fio" "--benchmark_out=$WORK/new/b.json"
[ ! -e "$WORK/new" ] || fail "--dry-run left folders behind"
[ "$(ls -A "$WORK" | grep -vx 'out\|err')" = "$(echo "$listing_before" | grep -vx 'out\|err')" ] ||
  { ls -la "$WORK"; fail "--dry-run left something in the work folder"; }
echo "ok: dry_run_accepts"

# ---- diff --out and report --out: checked before comparing ----------------------------------------
unset FEEDBENCH_RUN_TEST_DELAY_MS
expect_exit 0 "$FEEDBENCH" run --config "$WORK/good.json" --out "$WORK/base.json" --quiet
listing_before=$(ls -A "$WORK")
refused diff_out "--out: cannot write $WORK/afile/d.md: $WORK/afile is not a folder" \
  "$FEEDBENCH" diff "$WORK/base.json" "$WORK/base.json" --out "$WORK/afile/d.md"
refused report_out "--out: cannot write $WORK/afile/r.html: $WORK/afile is not a folder" \
  "$FEEDBENCH" report "$WORK/base.json" --out "$WORK/afile/r.html"
refused report_out_folder "--out: cannot write $WORK/outdir: it is a folder, expected a file name" \
  "$FEEDBENCH" report "$WORK/base.json" --out "$WORK/outdir"
refused diff_out_empty "--out: expected a file name, got ''" \
  "$FEEDBENCH" diff "$WORK/base.json" "$WORK/base.json" --out ""
refused diff_rerun_empty "--rerun-result: expected a file name, got ''" \
  "$FEEDBENCH" diff "$WORK/base.json" "$WORK/base.json" --rerun-result ""
expect_exit 0 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/base.json" --out "$WORK/new/d.md"
[ -s "$WORK/new/d.md" ] || fail "diff --out into a new folder wrote nothing"
echo "all early refusals ok"
