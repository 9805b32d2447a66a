#!/usr/bin/env bash
# An output is never an input nor a file of the data: every file a verb writes is compared with
# every file it reads (the config, the result files of diff and report) and with the source and
# cache folders, by device and inode (symlinks and bind mounts count), before the first case runs
# or the first byte is written. Each refusal exits 2 with one message naming both sides, and
# leaves every input as it was; two outputs that are one file are refused too.
source "$(dirname "$0")/lib.bash"

FEEDBENCH=$(realpath "$FEEDBENCH")
"$FEEDBENCH" gen --out "$WORK/src" --files 8 --file-size 16KiB --classes 2 --seed 3 >/dev/null
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" >/dev/null 2>&1 || fail "stage"
first=$(cd "$WORK/src" && find . -name '*.bin' | sort | head -1 | cut -c3-)
mkdir -p "$WORK/cwd"
cat >"$WORK/c.json" <<JSON
{"name": "t", "dataset": {"source": "$WORK/src", "cache": "$WORK/cache"},
 "defaults": {"repetitions": 1, "engine": "psync"},
 "families": [{"family": "file_read", "pattern": "sequential", "block_size": "16KiB", "cache_state": "warm",
               "path": ["source", "cache"]}]}
JSON
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/a.json" --quiet
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/b.json" --quiet

# Every input of the commands below, to prove a refusal left each as it was.
inputs_digest() { tree_digest "$WORK/src"; tree_digest "$WORK/cache"; sha256sum "$WORK/c.json" "$WORK/a.json" "$WORK/b.json"; }
before=$(inputs_digest)
# Every run below would sleep this long before its first case: a refusal after it is late.
export FEEDBENCH_RUN_TEST_DELAY_MS=8000

# refused NAME EXPECTED-TEXT CMD...: exit 2 within 5 s, EXPECTED-TEXT in a one-line message,
# every input unchanged, nothing new in the work folder.
refused() {
  local name=$1 expected=$2; shift 2
  local listing t0 t1
  listing=$(ls -A "$WORK" | grep -vx 'out\|err')
  t0=$(date +%s%N)
  (cd "${CWD:-$WORK/cwd}" && expect_exit 2 "$@")
  t1=$(date +%s%N)
  expect_in "$WORK/err" "$expected"
  [ "$(grep -vc '^feedbench [a-z]*: note:' "$WORK/err")" -le 1 ] || { cat "$WORK/err"; fail "$name: expected one line"; }
  [ $(((t1 - t0) / 1000000)) -lt 5000 ] || fail "$name: refused after $(((t1 - t0) / 1000000)) ms"
  [ "$before" = "$(inputs_digest)" ] || fail "$name: an input changed"
  [ "$(ls -A "$WORK" | grep -vx 'out\|err')" = "$listing" ] || { ls -la "$WORK"; fail "$name: left something behind"; }
  echo "ok: $name"
}
how="(compared by device and inode"

# ---- run: an output in the data ------------------------------------------------------------------
refused out_on_a_source_file "--out $WORK/src/$first: inside dataset.source $WORK/src $how" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/src/$first"
refused csv_in_the_source "--csv $WORK/src/r.csv: inside dataset.source $WORK/src" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --csv "$WORK/src/r.csv"
refused markdown_in_the_cache "--markdown $WORK/cache/r.md: inside dataset.cache $WORK/cache" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --markdown "$WORK/cache/r.md"
refused emit_fio_is_the_source "--emit-fio $WORK/src: is dataset.source $WORK/src" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --emit-fio "$WORK/src"
refused emit_fio_in_the_source "--emit-fio $WORK/src/fio/jobs: inside dataset.source $WORK/src" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --emit-fio "$WORK/src/fio/jobs"
refused benchmark_out_in_the_cache "--benchmark_out $WORK/cache/new/b.json: inside dataset.cache $WORK/cache" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" "--benchmark_out=$WORK/cache/new/b.json"
refused out_in_source_option "--out $WORK/src/r.json: inside --source $WORK/src" \
  "$FEEDBENCH" run --config "$WORK/c.json" --source "$WORK/src" --out "$WORK/src/r.json"
CWD=$WORK/src refused default_out_in_the_source "--out (default) results/t/" \
  "$FEEDBENCH" run --config "$WORK/c.json"
expect_in "$WORK/err" "inside dataset.source $WORK/src"
ln -s "$WORK/src/class_000" "$WORK/link"
before=$(inputs_digest)
refused out_through_a_symlink "--out $WORK/link/r.json: inside dataset.source $WORK/src" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/link/r.json"

# ---- run: an output that is an input, or another output ------------------------------------------
refused out_is_the_config "--out $WORK/c.json: the same file as --config $WORK/c.json $how" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/c.json"
ln -s "$WORK/c.json" "$WORK/config-link"
before=$(inputs_digest)
refused out_is_the_config_by_a_link "--out $WORK/config-link: the same file as --config $WORK/c.json" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/config-link"
refused markdown_is_out "--markdown $WORK/a.json: the same file as --out $WORK/a.json" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/a.json" --markdown "$WORK/a.json"
refused csv_is_out_not_yet_written "--csv $WORK/new/../new/r.json: the same file as --out $WORK/new/r.json" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/new/r.json" --csv "$WORK/new/../new/r.json"
# A ".." past a folder that does not exist yet still names the file it will land on.
refused out_is_the_config_past_a_missing_folder "--out $WORK/none/../c.json: the same file as --config $WORK/c.json" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/none/../c.json"
refused out_in_the_source_past_a_missing_folder "--out $WORK/none/../src/r.json: inside dataset.source $WORK/src" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/none/../src/r.json"
refused report_out_is_its_result_past_a_missing_folder "--out $WORK/zz/../a.json: the same file as RESULT" \
  "$FEEDBENCH" report "$WORK/a.json" --out "$WORK/zz/../a.json"
# Google Benchmark also takes its flags from BENCHMARK_* variables: such an output is checked too.
BENCHMARK_OUT=$WORK/c.json refused benchmark_out_from_the_environment \
  "--benchmark_out $WORK/c.json: the same file as --config $WORK/c.json" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json"
refused dry_run_out_is_the_config "--out $WORK/c.json: the same file as --config" \
  "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/c.json" --dry-run

# ---- report and diff: an output that is a result file they read -----------------------------------
unset FEEDBENCH_RUN_TEST_DELAY_MS
refused report_out_is_its_result "--out $WORK/a.json: the same file as RESULT $WORK/a.json" \
  "$FEEDBENCH" report "$WORK/a.json" --out "$WORK/a.json"
refused report_out_is_a_later_result "--out $WORK/b.json: the same file as RESULT $WORK/b.json" \
  "$FEEDBENCH" report "$WORK/a.json" "$WORK/b.json" --out "$WORK/b.json"
refused diff_out_is_base "--out $WORK/a.json: the same file as BASE $WORK/a.json" \
  "$FEEDBENCH" diff "$WORK/a.json" "$WORK/b.json" --out "$WORK/a.json"
refused diff_out_is_new "--out $WORK/b.json: the same file as NEW $WORK/b.json" \
  "$FEEDBENCH" diff "$WORK/a.json" "$WORK/b.json" --out "$WORK/b.json" --format json
refused diff_out_is_rerun "--out $WORK/config-link: the same file as --rerun-result $WORK/c.json" \
  "$FEEDBENCH" diff "$WORK/a.json" "$WORK/b.json" --rerun-result "$WORK/c.json" --out "$WORK/config-link"

# ---- gen: never into the data set it copies ------------------------------------------------------
refused gen_into_the_like_data_set "--out $WORK/link/copy: inside the --like data set $WORK/src" \
  "$FEEDBENCH" gen --out "$WORK/link/copy" --like "$WORK/src"
refused gen_onto_the_like_cache "--out $WORK/cache: is the --like data set $WORK/cache" \
  "$FEEDBENCH" gen --out "$WORK/cache" --like "$WORK/cache/feedbench-manifest.json" --force

# ---- Bind mounts of the data and of a file (where this machine lets the test mount) --------------
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
  mkdir -p "$WORK/bind"
  touch "$WORK/bound-config"
  before=$(inputs_digest)
  unshare -m --propagation private bash -c '
    set -e
    mount --bind "$1/src/class_001" "$1/bind"
    mount --bind "$1/c.json" "$1/bound-config"
    cd "$1/cwd"
    rc=0; "$2" run --config "$1/c.json" --out "$1/bind/r.json" >"$1/out" 2>"$1/err" || rc=$?
    [ "$rc" = 2 ] || { cat "$1/err"; exit 1; }
    grep -qF -- "--out $1/bind/r.json: inside dataset.source $1/src" "$1/err" || { cat "$1/err"; exit 1; }
    rc=0; "$2" run --config "$1/c.json" --out "$1/bound-config" >"$1/out" 2>"$1/err" || rc=$?
    [ "$rc" = 2 ] || { cat "$1/err"; exit 1; }
    grep -qF -- "--out $1/bound-config: the same file as --config $1/c.json" "$1/err" || { cat "$1/err"; exit 1; }
  ' bind "$WORK" "$FEEDBENCH" || fail "a bind mount of the source or of the config was not refused"
  [ "$before" = "$(inputs_digest)" ] || fail "bind mounts: an input changed"
  echo "ok: bind_mounts"
else
  echo "note: bind mounts not tried (needs root and a mount namespace)"
fi

# ---- What is apart is written as before ----------------------------------------------------------
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --csv "$WORK/r.csv" \
  --markdown "$WORK/r.md" --emit-fio "$WORK/fio" --quiet
[ -s "$WORK/r.json" ] && [ -s "$WORK/r.csv" ] && [ -s "$WORK/r.md" ] && [ -d "$WORK/fio" ] || fail "outputs not written"
expect_exit 0 "$FEEDBENCH" report "$WORK/a.json" "$WORK/b.json" --out "$WORK/report.html"
expect_exit 0 "$FEEDBENCH" diff "$WORK/a.json" "$WORK/b.json" --out "$WORK/d.txt" --allow-missing --threshold 1000
[ "$before" = "$(inputs_digest)" ] || fail "an input changed"
echo "all outputs apart ok"
