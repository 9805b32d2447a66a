#!/usr/bin/env bash
# A cache measured though it fails its checks (--allow-unverified-cache) is said unverified
# wherever a figure or an answer measured on it is printed, not only in the result file: the
# console summary, the Markdown (--markdown) and the HTML page (feedbench report) carry
# "(cache unverified)" on each line, row and sentence of the cache path. A verified cache's
# outputs carry none.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 96 --file-size 16KiB --layout flat --seed 8 >/dev/null
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --label trust-v1 >/dev/null 2>&1 || fail "stage"
cat >"$WORK/c.json" <<JSON
{"name": "e2e-unverified", "dataset": {"source": "$WORK/src", "cache": "$WORK/cache"},
 "defaults": {"repetitions": 1, "seed": 3, "engine": "psync"},
 "families": [{"family": "file_read", "pattern": "sequential", "block_size": "16KiB", "workers": 1,
               "cache_state": "warm", "path": ["source", "cache"]},
              {"family": "loader", "batch_size": 4, "workers": [1, 2], "step_time": "2ms", "steps": 20,
               "cache_state": "warm", "path": "cache", "framework": "none"}]}
JSON

# unwrap FILE: the console's lines as printed before wrapping (a wrapped line's continuation is
# indented 4 more than the line it continues).
unwrap() {
  python3 - "$1" <<'PY'
import sys
out, base = [], None
for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    indent = len(line) - len(line.lstrip(" "))
    if out and base is not None and line.strip() and indent == base + 4:
        out[-1] += " " + line.strip()
        continue
    out.append(line)
    base = indent
print("\n".join(out))
PY
}

# A cached copy edited in place, its size and mtime kept: only --verify-cache's re-hash finds it.
f=$(ls "$WORK/cache" | grep -v -e MANIFEST -e feedbench | head -1)
printf 'X' | dd of="$WORK/cache/$f" bs=1 seek=100 conv=notrunc status=none
touch -r "$WORK/src/$f" "$WORK/cache/$f"
expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --verify-cache --out "$WORK/refused.json"
expect_in "$WORK/err" "content differs from the manifest's SHA-256: $f"

expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --verify-cache --allow-unverified-cache --quiet \
  --out "$WORK/r.json" --markdown "$WORK/r.md"
expect_in "$WORK/err" "warning: measuring an unverified cache"
unwrap "$WORK/out" >"$WORK/console"
python3 -c "
import json
c = json.load(open('$WORK/r.json'))['dataset']['cache']
assert c['verified'] is False and c['allow_unverified_cache'] is True, c
"
expect_exit 0 "$FEEDBENCH" report "$WORK/r.json" --out "$WORK/r.html"

q="(cache unverified)"
qe="\\(cache unverified\\)"  # the same, in an extended regular expression
# The console and the Markdown print the same summary: the cache path's answer, its best
# throughput, source vs cache, the loader's verdicts and its worker sweep on the cache.
for text in "$WORK/console" "$WORK/r.md"; do
  expect_in "$text" "  cache $q: can storage feed the simulated trainers? warm: "
  grep -E "^    cache +warm +[0-9.]+ [KMG]i?B/s .*path:cache $qe\$" "$text" >/dev/null ||
    { cat "$text"; fail "no qualified best throughput line of the cache in $text"; }
  grep -E "^  source vs cache, .*: cache path was .* [KMG]i?B/s cache\) $qe\$" "$text" >/dev/null ||
    { cat "$text"; fail "no qualified source vs cache line in $text"; }
  grep -E "^  does the cache help\? warm: .* $qe\$" "$text" >/dev/null ||
    { cat "$text"; fail "no qualified cache answer in $text"; }
  grep -E "^    workers:[0-9]+: AU [0-9.]+% .* $qe( |\$)" "$text" >/dev/null ||
    { cat "$text"; fail "no qualified loader verdict on the cache in $text"; }
  grep -E "^  minimum workers: .* in loader.* $qe\$" "$text" >/dev/null ||
    { cat "$text"; fail "no qualified minimum workers line on the cache in $text"; }
  # The source's lines stay as they were.
  grep -E "^  source: .*\(cache unverified\)" "$text" >/dev/null && fail "a source line qualified in $text"
done
# The Markdown's table rows of cache cases.
grep -E "^\| \`file_read/.*/path:cache\` $qe \| 1 \|" "$WORK/r.md" >/dev/null ||
  { cat "$WORK/r.md"; fail "no qualified file_read row of the cache in the Markdown"; }
grep -E "^\| \`loader/.*/path:cache(/framework:none)?\` $qe \|" "$WORK/r.md" >/dev/null ||
  { cat "$WORK/r.md"; fail "no qualified loader row of the cache in the Markdown"; }
grep -E "^\| \`file_read/.*/path:source\` \|" "$WORK/r.md" >/dev/null || fail "the source's row qualified"
# The page: its headline sentences and each cache case's row.
expect_in "$WORK/r.html" "<li>Cache path $q feeds the simulated trainers warm: AU "
expect_in "$WORK/r.html" "<li>Cache path $q reads at best "
grep -E "<li>Does the cache help\? Warm: [^<]* $qe\.</li>" "$WORK/r.html" >/dev/null ||
  fail "no qualified cache answer on the page"
grep -E "<th scope=\"row\" class=\"label\">[^<]*cache $qe</th>" "$WORK/r.html" >/dev/null ||
  fail "no qualified cache row on the page"
grep -E "\"cache_qualifier\":\"\\(cache unverified\\)\"" "$WORK/r.html" >/dev/null ||
  fail "the page's charts are not told the cache is unverified"

# Rendered (where Chromium is here): the charts name the cache path with the same words.
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROMIUM" ]; then
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage \
    --user-data-dir="$WORK/chrome" --virtual-time-budget=5000 --dump-dom "file://$WORK/r.html" \
    >"$WORK/r.dom" 2>"$WORK/chrome.log" || { tail -20 "$WORK/chrome.log"; fail "chromium could not load r.html"; }
  grep -F 'data-report-status="ok ' "$WORK/r.dom" >/dev/null || fail "r.html: the charts were not drawn"
  grep -E "<canvas[^>]*data-series=\"source \| cache $qe\"" "$WORK/r.dom" >/dev/null ||
    { grep -o '<canvas[^>]*data-series="[^"]*"' "$WORK/r.dom"; fail "no chart names the cache path unverified"; }
else
  echo "chromium is not installed: the page's charts were not rendered"
fi

# The edited copy removed and staged again (it kept size and mtime, so stage alone would skip
# it), the cache verifies: nothing says unverified.
rm -f "$WORK/cache/$f"
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --label trust-v1 >/dev/null 2>&1 || fail "restage"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --verify-cache --quiet --out "$WORK/v.json" \
  --markdown "$WORK/v.md"
expect_in "$WORK/out" "  cache: can storage feed the simulated trainers? warm: "
expect_exit 0 "$FEEDBENCH" report "$WORK/v.json" --out "$WORK/v.html"
for text in "$WORK/out" "$WORK/v.md" "$WORK/v.html"; do
  if grep -F "$q" "$text" >/dev/null; then cat "$text"; fail "a verified cache said unverified in $text"; fi
done
echo ok
