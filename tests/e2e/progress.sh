# End to end: a run's progress. Redirected (CI, a log): one line per case, with k of n, bytes,
# rate, elapsed and time left, and no live line. On a terminal (a pseudo-terminal from
# script(1)): one live line rewritten in place, cleared before the summary. --quiet: neither.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 8 --file-size 32KiB --layout flat --seed 1 >/dev/null
cat >"$WORK/c.json" <<'JSON'
{"name": "e2e-progress", "dataset": {"source": "${E2E_SOURCE}"}, "defaults": {"repetitions": 2},
 "families": [{"family": "file_read", "pattern": "sequential", "block_size": "32KiB", "engine": "psync",
               "workers": [1, 2], "cache_state": "warm"}]}
JSON
export E2E_SOURCE=$WORK/src
# Progress names a case by its family and what varies among the cases that run.
case1="file_read w1"
case2="file_read w2"

# Redirected: a line per case on stderr, in order, and nothing rewritten in place.
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json"
expect_in "$WORK/err" "[1/2] $case1: 2 repetitions, 512 KiB read at "
expect_in "$WORK/err" "[2/2] $case2: 2 repetitions, 512 KiB read at "
grep -E '^\[2/2\] .*/s; [0-9]+:[0-9]{2} elapsed, ~0:00 left$' "$WORK/err" >/dev/null ||
  { cat "$WORK/err"; fail "the last case's line does not say elapsed and ~0:00 left"; }
lines=$(grep -c '^\[[0-9]/2\] ' "$WORK/err")
[ "$lines" = 2 ] || { cat "$WORK/err"; fail "expected 2 case lines, got $lines"; }
if grep -q $'\r' "$WORK/err" "$WORK/out"; then fail "a live line in redirected output"; fi

# The count follows --benchmark_filter, as Google Benchmark applies it.
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --benchmark_filter=workers:2 \
  --benchmark_repetitions=3
expect_in "$WORK/err" "[1/1] file_read seq 32KiB psync qd1 w2 warm source: 3 repetitions, 768 KiB read at "

# --quiet: no progress at all.
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --quiet
if grep -q '^\[' "$WORK/err"; then cat "$WORK/err"; fail "--quiet printed progress"; fi

# On a terminal: the live line, rewritten with "\r", cleared with ESC [K, no per-case lines.
command -v script >/dev/null || skip "script(1) (util-linux) is not installed: the terminal half is untested"
COLUMNS=200 script -qfec "stty cols 200 2>/dev/null; '$FEEDBENCH' run --config '$WORK/c.json' --out '$WORK/r.json'" \
  /dev/null </dev/null >"$WORK/tty" 2>&1 || { cat "$WORK/tty"; fail "the run on a terminal failed"; }
python3 - "$WORK/tty" "$case1" "$case2" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace", newline="").read()  # keep "\r"
case1, case2 = sys.argv[2], sys.argv[3]
live = re.findall(r"\r(\[\d+/2 rep \d/2\][^\r\n\x1b]*)\x1b\[K", text)
assert live, "no live line:\n" + repr(text[:3000])
assert any(l.startswith("[1/2 rep 1/2] ") and l.endswith(case1) for l in live), live
assert any(l.startswith("[2/2 rep 2/2] ") and l.endswith(case2) for l in live), live
assert all(re.search(r"\d+:\d\d elapsed, (~\d+:\d\d|\?) left", l) for l in live), live
assert any(re.search(r" read, [\d.]+ [KMG]?i?B/s, ", l) for l in live), live
assert not re.search(r"^\[\d/2\] ", text, re.M), "a per-case line on a terminal"
# Cleared before the summary: the result line starts its own line.
assert re.search(r"(^|\r\x1b\[K)result: ", text, re.M), repr(text[-500:])
print("progress ok:", len(live), "live redraws")
PY
echo ok
