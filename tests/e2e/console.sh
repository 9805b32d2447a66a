# End to end: what a person reads. The shipped qualify config's console output fits 120
# columns (a real run, shortened: one repetition, one worker count, a filter); cases show one
# line each under their family's header; no colour in a pipe; every verb's --help lists its
# options one line each; --set sweeps any parameter.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 24 --file-size 16KiB..64KiB --layout classes --classes 3 --seed 5 >/dev/null
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --label e2e >/dev/null 2>&1
mkdir -p "$WORK/scratch"  # the qualify config's checkpoint case writes there
export FEEDBENCH_SOURCE=$WORK/src FEEDBENCH_CACHE=$WORK/cache FEEDBENCH_SCRATCH=$WORK/scratch

# widest FILE: the columns of FILE's widest line (UTF-8 characters, ANSI escapes left out).
widest() {
  python3 -c "
import re, sys
w = max((len(re.sub(r'\x1b\[[0-9;]*m', '', l.rstrip('\n'))) for l in open(sys.argv[1], encoding='utf-8')), default=0)
print(w)" "$1"
}

# Every family of the qualify config, with both paths, cold, warm and direct: queue depths 1
# and 128 and the stage family stand for the rest of the sweep.
expect_exit 0 "$FEEDBENCH" run --config "$FEEDBENCH_SOURCE_DIR/configs/qualify-instance.json" --out "$WORK/q.json" \
  --set repetitions=2 --set workers=1 --benchmark_filter='(qd:(1|128)/|^stage/)'
cat "$WORK/out" "$WORK/err" >"$WORK/all"
w=$(widest "$WORK/all")
[ "$w" -le 120 ] || { awk 'length > 120' "$WORK/all"; fail "the qualify run's console output is $w columns wide"; }
if grep -q $'\033' "$WORK/out" "$WORK/err"; then fail "colour written to a pipe"; fi
# Grouped by the config's family entries, one line per case, short labels.
expect_in "$WORK/out" "file_read /families/0: seq psync qd1 w1; 2 repetitions (12 cases)"
expect_in "$WORK/out" "file_read /families/1: rand w1 direct; 2 repetitions (16 cases)"
expect_in "$WORK/out" "stage /families/4: w1 cold verify; 2 repetitions (1 case)"
grep -Eq '^  128KiB cold source +[0-9.]+ [KMG]i?B/s +[0-9.]+% +[0-9.]+k? +[0-9.]+ [mu]?s +[0-9]+% +ok$' "$WORK/out" ||
  { cat "$WORK/out"; fail "no line for the 128KiB cold source case"; }
cases=$(grep -cE ' (ok|[0-9]+ excluded|skipped)$' "$WORK/out")
[ "$cases" = 53 ] || { cat "$WORK/out"; fail "expected 53 case lines, got $cases"; }
if sed '/^Summary$/q' "$WORK/out" | grep 'file_read/pattern:'; then fail "a full case name in the table"; fi
# The summary opens with the answers' table, then its sentences; the result file keeps the full names.
grep -A1 '^Summary$' "$WORK/out" | grep -Eq '^  path +state +accelerators fed +limit +rate$' ||
  { cat "$WORK/out"; fail "the summary does not open with the answers' table"; }
grep -Eq '^  source +cold +- +- +[0-9.]+ [KMG]i?B/s read$' "$WORK/out" || { cat "$WORK/out"; fail "no cold source row"; }
grep -q '^  source: reads at best ' "$WORK/out" || { cat "$WORK/out"; fail "no answer for the source"; }
expect_in "$WORK/out" "  does the cache help? cold: "
python3 -c "
import json
d = json.load(open('$WORK/q.json'))
names = {b['name'].split('/iterations')[0] for b in d['benchmarks']}
assert 'file_read/pattern:sequential/bs:131072/engine:psync/qd:1/workers:1/state:cold/path:source' in names, names
"

# Google Benchmark's table stays one option away.
expect_exit 0 "$FEEDBENCH" run --config "$FEEDBENCH_SOURCE_DIR/configs/qualify-instance.json" --out "$WORK/g.json" \
  --set repetitions=1 --set workers=1 --benchmark_filter='bs:131072/.*state:cold/path:source' --display gbench
expect_in "$WORK/out" "file_read/pattern:sequential/bs:131072/engine:psync/qd:1/workers:1/state:cold/path:source/iterations:1"
expect_in "$WORK/out" "bytes_per_second"
expect_exit 2 "$FEEDBENCH" run --config "$FEEDBENCH_SOURCE_DIR/configs/qualify-instance.json" --display table
expect_in "$WORK/err" "--display: expected compact or gbench, got 'table'"

# --set sweeps any parameter from the command line, as --set workers=[1,2] does.
expect_exit 0 "$FEEDBENCH" run --config "$FEEDBENCH_SOURCE_DIR/configs/demo.json" --dry-run --include-from-cache \
  --set 'path=[source,cache]' --set 'block_size=[64KiB,1MiB]'
expect_in "$WORK/out" "/bs:65536/engine:psync/qd:1/workers:1/state:cold/path:cache"
expect_in "$WORK/out" "/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source"

# A dry run's plan and its estimate fit 120 columns too.
expect_exit 0 "$FEEDBENCH" run --config "$FEEDBENCH_SOURCE_DIR/configs/qualify-instance.json" --dry-run
expect_in "$WORK/out" "estimated duration: "
w=$(widest "$WORK/out")
[ "$w" -le 120 ] || { awk 'length > 120' "$WORK/out"; fail "the qualify dry run is $w columns wide"; }

# Every verb's --help: its options, one line each, within 120 columns.
for verb in run gen stage verify diff report env; do
  expect_exit 0 "$FEEDBENCH" "$verb" --help
  w=$(widest "$WORK/out")
  [ "$w" -le 120 ] || { cat "$WORK/out"; fail "$verb --help is $w columns wide"; }
  grep -q '^  -h, --help  ' "$WORK/out" || { cat "$WORK/out"; fail "$verb --help lists no options"; }
  # An option's description never continues on a line of its own.
  if grep -E '^ {20,}[a-z(]' "$WORK/out" | grep -v '^ *feedbench ' >/dev/null; then
    cat "$WORK/out"; fail "$verb --help wraps an option's description"
  fi
done
expect_exit 0 "$FEEDBENCH" run --help
for option in --config --set --throttle --budget --dry-run --display --quiet --benchmark_filter=REGEX; do
  grep -q -- "^  .*$option" "$WORK/out" || { cat "$WORK/out"; fail "run --help does not list $option"; }
done
# An error that points to --help points to that list.
expect_exit 2 "$FEEDBENCH" run --bogus
expect_in "$WORK/err" "(see feedbench run --help)"

# On a terminal: colour, unless NO_COLOR or TERM=dumb.
command -v script >/dev/null || skip "script(1) (util-linux) is not installed: the terminal half is untested"
run_on_terminal() {
  script -qfec "stty cols 200 2>/dev/null; $1 '$FEEDBENCH' run --config '$FEEDBENCH_SOURCE_DIR/configs/qualify-instance.json' \
    --out '$WORK/t.json' --set repetitions=1 --set workers=1 --benchmark_filter='bs:131072/.*warm/path:source'" \
    /dev/null </dev/null >"$WORK/tty" 2>&1 || { cat "$WORK/tty"; fail "the run on a terminal failed"; }
}
run_on_terminal "TERM=xterm"
grep -q $'\033\\[32mok\033\\[0m' "$WORK/tty" || { cat -v "$WORK/tty"; fail "no colour on a terminal"; }
run_on_terminal "TERM=xterm NO_COLOR=1"
if grep -q $'\033\\[3[0-9]m' "$WORK/tty"; then cat -v "$WORK/tty"; fail "colour despite NO_COLOR"; fi
run_on_terminal "TERM=dumb"
if grep -q $'\033\\[3[0-9]m' "$WORK/tty"; then cat -v "$WORK/tty"; fail "colour on TERM=dumb"; fi
echo ok
