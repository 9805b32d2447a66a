#!/usr/bin/env bash
# Two qualification cards written by hand, as a user keeps them from two qualify runs (this
# month's and last month's instance), given to the built binary's diff and report: a cell that
# feeds fewer beyond its repetitions' spread fails the diff (exit 1), a drop within the spread
# is noise (exit 0); report draws both side by side and prints each card within 120 columns; a
# card beside a result file is bad input (exit 2) naming both files. A malformed card and the
# verbs' other refusals are unit tests (tests/unit/cli_test.cc), each
# start of the sanitized binary costing half a second here.
source "$(dirname "$0")/lib.bash"

# card NAME INSTANCE STORE_COLD STORE_COLD_MIN STORE_COLD_MAX: writes $WORK/NAME.json.
card() {
  cat >"$WORK/$1.json" <<JSON
{
  "schema": "feedbench-card/1",
  "created_utc": "2026-12-06T18:00:00Z",
  "feedbench_version": "0.9.0",
  "target_au": 0.9,
  "speedup": 1,
  "host": {"instance_type": "$2", "cores": 2},
  "storage": {"store": {"device": "nvme1n1", "fs_type": "nfs4", "mount_point": "/mnt/store"}},
  "workloads": [
    {"name": "images", "step_ns": 98000000, "step_source": "profile: MLPerf Storage resnet50 (A100)",
     "paths": [
       {"path": "store", "state": "cold", "accelerators_fed": $3, "accelerators_fed_min": $4,
        "accelerators_fed_max": $5, "repetitions": 3, "limit": "the store's bandwidth",
        "per_accelerator": {"bytes_per_second": 117440512, "samples_per_second": 4081, "cpu_cores": 0.8}},
       {"path": "cache", "state": "steady", "accelerators_fed": 8, "repetitions": 3,
        "limit": "the host's CPU: decode (the cache could feed 14; 2 cores decode for 8)",
        "per_accelerator": {"bytes_per_second": 117440512, "samples_per_second": 4081, "cpu_cores": 0.8}},
       {"path": "store", "state": "steady", "measured": false, "reason": "the budget (20 min) ran out"}]}
  ],
  "results": []
}
JSON
}
card last m5.large 6 5 7
card fewer m6i.large 4 4 4   # below last month's lowest repetition (5): fewer
card within m6i.large 5 4 6  # at last month's lowest: within the spread, noise

expect_exit 1 "$FEEDBENCH" diff "$WORK/last.json" "$WORK/fewer.json"
expect_in "$WORK/out" "images    store  cold    6 (5-7, 3x)   4 (3x)        -33%    FEWER"
expect_in "$WORK/out" "(not measured in BASE: the budget (20 min) ran out)"
expect_in "$WORK/out" "1 cell feeds fewer, 0 more, 0 noisy in 2 compared cells"

expect_exit 0 "$FEEDBENCH" diff "$WORK/last.json" "$WORK/within.json"
expect_in "$WORK/out" "noisy"
expect_in "$WORK/out" "(within BASE's spread: its 3 repetitions fed 5 to 7)"

# Report: the cards side by side at the head of the page, each printed as the console card.
expect_exit 0 "$FEEDBENCH" report "$WORK/last.json" "$WORK/fewer.json" --out "$WORK/cards.html"
expect_in "$WORK/out" "feedbench card: accelerators fed at AU >= 90%; host m5.large, 2 cores"
expect_in "$WORK/out" "what to do:"
expect_in "$WORK/cards.html" "<th>m5.large: fed</th><th>m5.large: limit</th><th>m6i.large: fed</th>"
if awk 'length > 120 { exit 1 }' "$WORK/out"; then :; else fail "a card line is wider than 120 columns"; fi

# Bad input: a result file beside a card.
echo '{"schema": "feedbench-result/1", "context": {}, "benchmarks": []}' >"$WORK/result.json"
expect_exit 2 "$FEEDBENCH" diff "$WORK/last.json" "$WORK/result.json"
expect_in "$WORK/err" "expected cards or result files, not both: $WORK/last.json is a card (feedbench-card/1)"
echo "card diff and report: ok"
