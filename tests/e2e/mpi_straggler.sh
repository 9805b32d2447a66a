# A slow rank (its reads held to a low rate, standing in for a slow node or link) is named a
# straggler, with its host and its rate against the median rank's, and drags the aggregate.
source "$(dirname "$0")/lib.bash"
require_mpirun

"$FEEDBENCH" gen --out "$WORK/src" --files 24 --file-size 64KiB --layout flat --seed 4 >/dev/null
cat >"$WORK/c.json" <<JSON
{
  "name": "mpi-straggler",
  "dataset": {"source": "$WORK/src"},
  "defaults": {"repetitions": 1, "seed": 7, "engine": "psync"},
  "families": [
    {"family": "file_read", "pattern": "sequential", "block_size": "64KiB", "workers": 1,
     "cache_state": "warm", "path": "source"}
  ]
}
JSON
# Rank 1 reads its 512 KiB share at 2 MiB/s (about 0.25 s); the others from memory.
cat >"$WORK/rank.sh" <<SH
if [ "\$OMPI_COMM_WORLD_RANK" = 1 ]; then exec "\$@" --throttle source=2MiB/s; else exec "\$@"; fi
SH
expect_exit 0 timeout 120 "${MPIRUN[@]}" -np 3 bash "$WORK/rank.sh" "$FEEDBENCH" run --config "$WORK/c.json" \
  --out "$WORK/r.json"
expect_in "$WORK/out" "straggler: rank 1"
python3 - "$WORK/r.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
b = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"][0]
x = b["extra"]
st = x["stragglers"]
assert [s["rank"] for s in st] == [1], st
assert st[0]["host"] == x["ranks"][1]["host"] and st[0]["vs_median"] < 0.5, st
rates = [r["bytes_per_second"] for r in x["ranks"]]
assert rates[1] <= 2.2 * 2**20, rates
# The aggregate waits for the slowest rank: below three times its rate.
assert b["bytes_per_second"] < 3 * 2.2 * 2**20, b["bytes_per_second"]
PY
# The report draws a per-rank chart of the case, ranks coloured by host, with the straggler
# line; in headless Chromium (when installed) it renders with no JavaScript error.
expect_exit 0 "$FEEDBENCH" report "$WORK/r.json" --out "$WORK/r.html"
expect_in "$WORK/r.html" '<section id="across-ranks">'
expect_in "$WORK/r.html" "straggler: rank 1 (host "
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROMIUM" ]; then
  timeout 60 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage \
    --user-data-dir="$WORK/chrome" --enable-logging=stderr --v=0 --virtual-time-budget=5000 \
    --window-size=1280,900 --dump-dom "file://$WORK/r.html#selfcheck" >"$WORK/r.dom" 2>"$WORK/chrome.log" ||
    fail "chromium could not load the report$(tail -20 "$WORK/chrome.log")"
  if grep -E 'Uncaught|CONSOLE.*(Error|error)' "$WORK/chrome.log"; then fail "JavaScript error in the console"; fi
  python3 - "$WORK/r.dom" <<'PY'
import html, json, re, sys
dom = open(sys.argv[1]).read()
r = json.loads(html.unescape(re.search(r'<pre id="selfcheck" hidden[^>]*>(.*?)</pre>', dom, re.S).group(1)))
assert r["status"].startswith("ok ") and not r["errors"], (r["status"], r["errors"])
assert all(c["drawn"] for c in r["charts"]), r["charts"]
sec = re.search(r'<section id="ranks">(.*?)</section>', dom, re.S)
assert sec, "no per-rank chart section"
assert 'data-series="host ' in sec.group(1), sec.group(1)[:500]
assert "Straggler: rank 1 (host " in html.unescape(sec.group(1)), sec.group(1)[:2000]
PY
fi
echo PASS
