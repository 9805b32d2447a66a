#!/usr/bin/env bash
# `feedbench diff` end to end on small result files written here: planted changes give the
# right exit code and name the case; bad input gives exit 2 with one clear message.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/result_fixture.bash"

SEQ="file_read/pattern:sequential/bs:65536/engine:psync/workers:1/state:warm/path:source"
RND="file_read/pattern:random/bs:4096/engine:psync/workers:1/state:warm/path:source"
MIB=1048576

fixture base cases="$SEQ|bytes_per_second|$((800*MIB))|9|0.01;$RND|bytes_per_second|$((40*MIB))|9|0.01|lat_p99_us|200|9|0.02"
fixture same cases="$SEQ|bytes_per_second|$((800*MIB))|9|0.012;$RND|bytes_per_second|$((40*MIB))|9|0.01|lat_p99_us|200|9|0.02"
fixture slower cases="$SEQ|bytes_per_second|$((640*MIB))|9|0.01;$RND|bytes_per_second|$((40*MIB))|9|0.01|lat_p99_us|200|9|0.02"
fixture small_drop cases="$SEQ|bytes_per_second|$((784*MIB))|9|0.003;$RND|bytes_per_second|$((40*MIB))|9|0.01|lat_p99_us|200|9|0.02"
fixture faster cases="$SEQ|bytes_per_second|$((1040*MIB))|9|0.01;$RND|bytes_per_second|$((40*MIB))|9|0.01|lat_p99_us|200|9|0.02"
fixture laggy cases="$SEQ|bytes_per_second|$((800*MIB))|9|0.01;$RND|bytes_per_second|$((40*MIB))|9|0.01|lat_p99_us|300|9|0.02"
fixture fewer cases="$SEQ|bytes_per_second|$((800*MIB))|9|0.01;file_read/pattern:shuffled_files/bs:65536|bytes_per_second|1000|3|0"
fixture other_host kernel=6.8.0 sha="$(printf 'b%.0s' {1..64})" \
  cases="$SEQ|bytes_per_second|$((800*MIB))|9|0.012;$RND|bytes_per_second|$((40*MIB))|9|0.01|lat_p99_us|200|9|0.02"
fixture two_base cases="$SEQ|bytes_per_second|1000,1004|-|-"
fixture two_new cases="$SEQ|bytes_per_second|800,803|-|-"   # -20%
fixture two_wild cases="$SEQ|bytes_per_second|600,1002|-|-"   # one wild repetition: -20%
fixture bs4k cases="${SEQ/bs:65536/bs:4096}|bytes_per_second|$((200*MIB))|9|0.01"
fixture disjoint cases="loader/workers:4|samples_per_second|1000|5|0.01"

# Same performance: exit 0, nothing flagged.
expect_exit 0 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/same.json"
expect_in "$WORK/out" "0 regressions, 0 improvements, 0 noisy in 2 compared cases"
expect_in "$WORK/out" "geomean NEW/BASE over the compared cases:"
if grep -q $'\033' "$WORK/out"; then fail "colour written to a pipe"; fi

# A 20% throughput drop over 9 repetitions: exit 1, naming the case.
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/slower.json"
expect_in "$WORK/out" "$SEQ"
expect_in "$WORK/out" "REGRESSION"
expect_in "$WORK/out" "-20.0%"
expect_in "$WORK/out" "1 regression, 0 improvements"

# A 2% drop is within the 5% threshold; a 1% threshold catches it.
expect_exit 0 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/small_drop.json"
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/small_drop.json" --threshold 1%

# An improvement is reported, exit 0.
expect_exit 0 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/faster.json"
expect_in "$WORK/out" "improvement"
expect_in "$WORK/out" "0 regressions, 1 improvement"

# p99 latency rising is a regression; judging only throughput lets it pass.
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/laggy.json"
expect_in "$WORK/out" "lat_p99_us"
expect_exit 0 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/laggy.json" --metric bytes_per_second

# A case of BASE that NEW did not measure fails the diff: nothing measured is not a pass.
# --allow-missing lists it and lets it pass; added cases are listed, not judged.
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/fewer.json"
expect_in "$WORK/out" "MISSING in NEW (fails the diff; --allow-missing to accept):"
expect_in "$WORK/out" "$RND: only in BASE"
expect_in "$WORK/out" "added (only in NEW):"
expect_in "$WORK/out" "file_read/pattern:shuffled_files/bs:65536"
expect_in "$WORK/out" "1 case of BASE not measured in NEW"
expect_exit 0 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/fewer.json" --allow-missing
expect_in "$WORK/out" "missing in NEW (allowed by --allow-missing):"
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/fewer.json" --format junit
expect_in "$WORK/out" "<failure type=\"missing\" message=\"missing: only in BASE, not measured in NEW\""

# A gated metric NEW lacks fails the diff like a missing case, naming case, metric and file,
# whether removed or null (how a NaN is written); a string where a number belongs is bad
# input naming its pointer. --strict changes neither.
python3 - "$WORK/base.json" "$WORK" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for variant, value in (("removed", None), ("null", None), ("string", "fast")):
    for e in doc["benchmarks"]:
        if e["case"].startswith("file_read/pattern:random"):
            e.pop("bytes_per_second", None)
            if variant != "removed":
                e["bytes_per_second"] = value
    json.dump(doc, open(f"{sys.argv[2]}/no_bps_{variant}.json", "w"), indent=1)
PY
for variant in removed null; do
  for strict in "" --strict; do
    expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/no_bps_$variant.json" $strict
    expect_in "$WORK/out" "MISSING in NEW (fails the diff; --allow-missing to accept):"
    expect_in "$WORK/out" "$RND: bytes_per_second missing in NEW ($WORK/no_bps_$variant.json)"
  done
done
expect_exit 0 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/no_bps_removed.json" --allow-missing
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/no_bps_removed.json" --format junit
expect_in "$WORK/out" "<failure type=\"missing\" message=\"missing: bytes_per_second missing in NEW"
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/no_bps_string.json" --strict
expect_in "$WORK/err" "no_bps_string.json: /benchmarks/9/bytes_per_second: expected a number or null, got string \"fast\""
# The other side: a gated metric only NEW has is not judged, and said.
expect_exit 0 "$FEEDBENCH" diff "$WORK/no_bps_removed.json" "$WORK/base.json"
expect_in "$WORK/out" "(bytes_per_second not in BASE ($WORK/no_bps_removed.json): not judged)"

# A case present in NEW whose every round missed its cache state measured nothing: missing.
fixture unachieved unachieved="$RND" cases="$SEQ|bytes_per_second|$((800*MIB))|9|0.01;$RND|bytes_per_second|$((40*MIB))|9|0.01|lat_p99_us|200|9|0.02"
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/unachieved.json"
expect_in "$WORK/out" "$RND: every repetition excluded in NEW (repetition 0: warm not achieved"

# A diff that compared nothing (BASE's only common case measured nothing) is no pass either.
fixture nothing_base unachieved="$SEQ" cases="$SEQ|bytes_per_second|$((800*MIB))|9|0.01"
expect_exit 1 "$FEEDBENCH" diff "$WORK/nothing_base.json" "$WORK/base.json" --allow-missing
expect_in "$WORK/out" "in 0 compared cases"
expect_in "$WORK/out" "nothing was compared"

# 2 vs 2 repetitions: the threshold alone decides, and the output says so once.
expect_exit 1 "$FEEDBENCH" diff "$WORK/two_base.json" "$WORK/two_new.json"
expect_in "$WORK/out" "REGRESSION (weak)"
expect_in "$WORK/out" "weak verdict: too few repetitions (as few as 2 per side, in 1 comparison)"
expect_in "$WORK/out" "use 4 or more repetitions per side"
expect_in "$WORK/out" "-20.0%"
# The same drop made by one wild repetition is noisy, counted apart, and passes.
expect_exit 0 "$FEEDBENCH" diff "$WORK/two_base.json" "$WORK/two_wild.json"
expect_in "$WORK/out" "noisy (spread: CV"
expect_in "$WORK/out" "0 regressions, 0 improvements, 1 noisy in 1 compared case"
expect_exit 1 "$FEEDBENCH" diff "$WORK/two_base.json" "$WORK/two_wild.json" --no-noise-rule

# A page-cached case slower when the host was busier: noisy; the same drop in a cold case
# (which waits on the device) is a regression. Loads per core: 0.55 and 1.30.
WARM3="$SEQ|bytes_per_second|$((800*MIB))|3|0.01"
fixture load_base load="1.0,1.2,2" cases="$WARM3;${SEQ/warm/cold}|bytes_per_second|$((800*MIB))|3|0.01"
fixture load_new load="2.4,2.8,2" cases="$SEQ|bytes_per_second|$((700*MIB))|3|0.01;${SEQ/warm/cold}|bytes_per_second|$((600*MIB))|3|0.01"
expect_exit 1 "$FEEDBENCH" diff "$WORK/load_base.json" "$WORK/load_new.json"
expect_in "$WORK/out" "host load per core: BASE 0.55 (1.00 -> 1.20 on 2 cores), NEW 1.30 (2.40 -> 2.80 on 2 cores)"
expect_in "$WORK/out" "noisy (host load (load per core 0.55 BASE, 1.30 NEW) explains up to x1.75 for a case served from memory)"
expect_in "$WORK/out" "1 regression, 0 improvements, 1 noisy in 2 compared cases"

# --include / --exclude choose cases by name; a bad expression is bad input naming the option.
expect_exit 0 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/slower.json" --exclude 'pattern:seq'
expect_in "$WORK/out" "0 regressions, 0 improvements, 0 noisy in 1 compared case (threshold 5%, alpha 0.05); 1 case left out by --include/--exclude"
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/slower.json" --include 'pattern:seq'
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/slower.json" --include 'state:(warm'
expect_in "$WORK/err" "--include state:(warm: not a regular expression"
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/slower.json" --exclude '['
expect_in "$WORK/err" "--exclude [: not a regular expression"
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/slower.json" --include 'no such case'
expect_in "$WORK/err" "--include/--exclude left no case to compare"

# --list regressed names the cases a confirmation run needs; --rerun-result judges them on it.
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/slower.json" --list regressed
[ "$(cat "$WORK/out")" = "$SEQ" ] || fail "--list regressed: $(cat "$WORK/out")"
fixture rerun cases="$SEQ|bytes_per_second|$((800*MIB))|9|0.01"
expect_exit 0 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/slower.json" --rerun-result "$WORK/rerun.json"
expect_in "$WORK/out" "confirmation re-run: 1 case judged on the repetitions of $WORK/rerun.json"
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/slower.json" --list everything

# Comparability: warnings at the top; --strict fails on them.
expect_exit 0 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/other_host.json"
head -n 4 "$WORK/out" >"$WORK/top"
expect_in "$WORK/top" "warning: config sha256 differs"
expect_in "$WORK/top" "warning: kernel differs: BASE \"6.1.0\", NEW \"6.8.0\""
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/other_host.json" --strict
expect_in "$WORK/out" "--strict: the runs are not comparable"

# --match-ignore: a case whose block size changed still matches (and regressed).
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/bs4k.json"
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/bs4k.json" --match-ignore bs
expect_in "$WORK/out" "NEW ${SEQ/bs:65536/bs:4096}"

# Other formats: JSON for tools, Markdown for a pull request, JUnit written with --out.
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/slower.json" --format json
python3 - "$WORK/out" "$SEQ" <<'PY' || fail "JSON output"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "feedbench-diff/2" and j["regressions"] == 1 and j["exit_code"] == 1, j
c = [c for c in j["cases"] if c["case"] == sys.argv[2]][0]
assert c["metrics"][0]["verdict"] == "regression" and len(c["metrics"][0]["base_values"]) == 9, c
PY
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/slower.json" --format markdown
expect_in "$WORK/out" "| case | metric | base | new | change | p | verdict |"
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/slower.json" --format junit --out "$WORK/report/diff.xml"
[ ! -s "$WORK/out" ] || fail "--out still wrote to stdout"
expect_in "$WORK/err" "1 regression(s)"
expect_in "$WORK/report/diff.xml" "<failure type=\"regression\""
expect_in "$WORK/report/diff.xml" "name=\"$SEQ\""
if ls "$WORK/report" | grep -q tmp; then fail "temporary file left behind"; fi

# Bad input: exit 2 and one message naming what is wrong.
echo '{"schema": "feedbench-result/1", "benchmarks": [' >"$WORK/malformed.json"
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/malformed.json"
expect_in "$WORK/err" "malformed.json"
[ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "expected one message, got: $(cat "$WORK/err")"

echo '{"schema": "something-else/3", "context": {}, "benchmarks": []}' >"$WORK/wrong_schema.json"
expect_exit 2 "$FEEDBENCH" diff "$WORK/wrong_schema.json" "$WORK/base.json"
expect_in "$WORK/err" "/schema"
expect_in "$WORK/err" "feedbench-result/1"

expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/disjoint.json"
expect_in "$WORK/err" "no case in common"

expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/does-not-exist.json"
expect_in "$WORK/err" "does-not-exist.json"

expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/same.json" --metric furlongs
expect_in "$WORK/err" "--metric furlongs: unknown metric"
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/same.json" --threshold lots
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/same.json" --alpha 2
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/same.json" --format html
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/same.json" --match-ignore nokey
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/same.json" --no-such-option
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json"
[ ! -e "$WORK/nothing.xml" ] || fail "bad input wrote a file"
expect_exit 2 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/malformed.json" --out "$WORK/nothing.xml"
[ ! -e "$WORK/nothing.xml" ] || fail "bad input wrote a file"

expect_exit 0 "$FEEDBENCH" diff --help
expect_in "$WORK/out" "exit codes"
echo "ok"
