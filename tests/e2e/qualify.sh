#!/usr/bin/env bash
# `feedbench qualify` as a platform team runs it, kept small: the tokens workload (LLM sequences
# of 32 KiB from shards) at 20 times the profile's speed, through a store folder and a cache
# folder, K searched up to 2. The card it writes is read back as JSON, as Markdown and by diff
# and report; its data folders are gone afterwards; --keep leaves them for a second qualify,
# which reuses them; a folder of that name qualify did not make is refused (exit 2) untouched.
# The first qualify searches each cell twice (--repetitions 2) for a node of 4 and writes a small
# checkpoint to each path: the card holds both searches, each path's best reads, the stage and
# the checkpoints.
# The search, the limits' names and the other refusals are unit tests (tests/unit/qualify_test.cc).
source "$(dirname "$0")/lib.bash"

mkdir -p "$WORK/store" "$WORK/cache"
run_qualify() {
  "$FEEDBENCH" qualify --store "$WORK/store" --cache "$WORK/cache" --workload tokens --speedup 20 \
    --max-accelerators 2 --budget 5min "$@"
}

expect_exit 0 run_qualify --out "$WORK/card.json" --markdown "$WORK/card.md" --html "$WORK/card.html" \
  --repetitions 2 --accelerators-per-node 4 --checkpoint-scale 0.001
expect_in "$WORK/out" "feedbench qualify: 1 workload(s), store and cache; data to write 896 KiB a path"
expect_in "$WORK/out" "tokens: staged"
expect_in "$WORK/out" "tokens   store #2   1 accelerator(s): cold AU"
expect_in "$WORK/out" "checkpoint llama3-8b x 0.001: 100 MiB by 8 ranks, written to each path and restored cold"
expect_in "$WORK/out" "tokens: the store reads its files at"
expect_in "$WORK/out" "checkpoint llama3-8b, cache: written at"
expect_in "$WORK/out" "reads, staging and checkpoints:"
expect_in "$WORK/out" "feedbench card: accelerators fed at AU >= 90%"
expect_in "$WORK/out" "card: $WORK/card.json"
if awk 'length > 120 { exit 1 }' "$WORK/out"; then :; else fail "a line of qualify's output is wider than 120 columns"; fi
[[ -z "$(ls -A "$WORK/store" "$WORK/cache" | grep -v ':$' | grep -v '^$')" ]] ||
  fail "qualify left its data sets: $(ls -A "$WORK/store" "$WORK/cache")"

/usr/bin/python3 - "$WORK/card.json" <<'PY' || fail "the card is not as docs/card.md says"
import json, sys
card = json.load(open(sys.argv[1]))
assert card["schema"] == "feedbench-card/1", card["schema"]
(w,) = card["workloads"]
assert w["name"] == "tokens" and w["step_ns"] == 50_000_000, (w["name"], w["step_ns"])
cells = {(c["path"], c["state"]): c for c in w["paths"]}
assert set(cells) == {("store", "cold"), ("store", "steady"), ("cache", "cold"), ("cache", "steady")}, cells
for c in cells.values():
    # 32 KiB a second per accelerator: two of them are far from any limit of this host.
    assert c["accelerators_fed"] == 2 and c["repetitions"] == 2, c
    assert c["limit"].startswith("none found up to 2 accelerators"), c["limit"]
    assert 30_000 < c["per_accelerator"]["bytes_per_second"] < 40_000 * 20, c["per_accelerator"]
assert card["results"] and all(r["schema"] == "feedbench-result/1" for r in card["results"])
assert set(card["storage"]) == {"store", "cache"}, card["storage"]
assert card["accelerators_per_node"] == 4, card.get("accelerators_per_node")
reads = {r["path"]: r for r in w["reads"]}
assert set(reads) == {"store", "cache"}, w["reads"]
for r in reads.values():
    assert r["bytes_per_second"] > 0 and r["workers"] in (1, 4, 16) and r["accelerators"] > 2, r
st = w["staging"]
assert st["bytes"] > 0 and st["seconds"] > 0 and st["bytes_per_second"] > 0, st
# Both paths feed 2 (the cap) of the node's 4: the cache gains nothing, staging never pays.
assert st["pays_after_epochs"] is None, st
ck = {c["path"]: c for c in card["checkpoints"]}
assert set(ck) == {"store", "cache"}, card["checkpoints"]
for c in ck.values():
    assert c["model"] == "llama3-8b" and c["scale"] == 0.001 and c["ranks"] == 8, c
    assert 100_000_000 <= c["bytes"] <= 105_000_000 and c["full_bytes"] == 105_000_000_000, c
    assert c["write_bytes_per_second"] > 0 and c["restore_bytes_per_second"] > 0, c
PY
expect_in "$WORK/card.md" "| tokens | store | cold |"
expect_in "$WORK/card.html" "Qualification card"

expect_exit 0 "$FEEDBENCH" diff "$WORK/card.json" "$WORK/card.json"
expect_exit 0 "$FEEDBENCH" report "$WORK/card.json" --out "$WORK/report.html"

# --keep: the data stays, marked, and the next qualify reuses it.
expect_exit 0 run_qualify --keep --out "$WORK/kept.json" --checkpoint-scale 0
[[ -f "$WORK/store/feedbench-qualify-tokens/.feedbench-qualify" ]] || fail "--keep removed the store's data set"
expect_exit 0 run_qualify --out "$WORK/again.json" --checkpoint-scale 0
expect_in "$WORK/out" "tokens: reusing the store's data set, kept by an earlier qualify: $WORK/store/feedbench-qualify-tokens"
expect_in "$WORK/out" "tokens: reusing the staged copy, kept by an earlier qualify: $WORK/cache/feedbench-qualify-tokens"

# A folder of qualify's name that qualify did not make: refused, untouched, no card.
mkdir -p "$WORK/store/feedbench-qualify-tokens" && echo mine >"$WORK/store/feedbench-qualify-tokens/notes.txt"
expect_exit 2 run_qualify --out "$WORK/refused.json"
expect_in "$WORK/err" "--store: $WORK/store/feedbench-qualify-tokens exists without a .feedbench-qualify marker"
[[ "$(cat "$WORK/store/feedbench-qualify-tokens/notes.txt")" == mine ]] || fail "qualify touched a folder not its own"
[[ ! -e "$WORK/refused.json" ]] || fail "a refused qualify wrote a card"
echo "qualify: ok"
