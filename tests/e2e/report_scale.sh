# feedbench report at the size of a real sweep: a 276-case result (the qualify-instance
# config's shape, tests/e2e/qualify_fixture.py) alone and three of them side by side, opened in
# headless Chromium in a 1280-px window. The page measures itself (#selfcheck, reporters/report.js)
# and the test asserts: no JavaScript error, every canvas drawn, at most 8 series per chart, no
# legend wider than its chart, axis titles and chart titles not clipped, the case label and key
# columns (AU and verdict included) of every table visible without scrolling, the label column
# fixed when a table scrolls, no generated text with a missing value; series named by the
# files' labels (one of them too long for a legend row), not their paths. REPORT_SHOTS=DIR keeps 1280-px screenshots there.
source "$(dirname "$0")/lib.bash"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip "chromium is not installed (apt-get install chromium): no page to measure"

fixture="$FEEDBENCH_SOURCE_DIR/tests/e2e/qualify_fixture.py"
python3 "$fixture" "$WORK/p4d-run.json" 1.0 p4d.24xlarge 2 || fail "fixture"
python3 "$fixture" "$WORK/p5-run.json" 1.6 p5.48xlarge 2 || fail "fixture"
python3 "$fixture" "$WORK/g6-run.json" 0.7 g6e.48xlarge 2 || fail "fixture"

expect_exit 0 "$FEEDBENCH" report "$WORK/p4d-run.json" --out "$WORK/one.html"
# One label far longer than a legend row: the legend must wrap it, not cut it or overflow.
long="p4d.24xlarge-before-the-nfs-upgrade-with-the-old-mount-options-and-read-ahead-run-1-of-3"
expect_exit 0 "$FEEDBENCH" report "$WORK/p4d-run.json" "$WORK/p5-run.json" "$WORK/g6-run.json" \
  --label "$long" --label p5.48xlarge --label g6e.48xlarge --out "$WORK/three.html"
chrome() {  # chrome PAGE ARGS...: one headless load of file://PAGE#selfcheck at 1280 px, no network
  local page=$1; shift
  timeout 60 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage \
    --hide-scrollbars --user-data-dir="$WORK/chrome" --enable-logging=stderr --v=0 --virtual-time-budget=5000 \
    "$@" "file://$page#selfcheck" 2>>"$WORK/chrome.log"
}
for page in one three; do
  chrome "$WORK/$page.html" --window-size=1280,900 --dump-dom >"$WORK/$page.dom" ||
    fail "chromium could not load $page.html$(tail -20 "$WORK/chrome.log")"
done
if grep -E 'Uncaught|CONSOLE.*(Error|error)' "$WORK/chrome.log"; then fail "JavaScript error in the console"; fi

python3 - "$WORK" <<'EOF' || fail "the pages' self-checks found problems (above)"
import html, json, re, sys
work = sys.argv[1]
problems = []
def check(page, want_names, unwanted):
    dom = open(f"{work}/{page}.dom").read()
    m = re.search(r'<pre id="selfcheck" hidden[^>]*>(.*?)</pre>', dom, re.S)
    if not m:
        problems.append(f"{page}: no self-check in the page (script did not run)")
        return
    r = json.loads(html.unescape(m.group(1)))
    where = lambda c: f"{page}: chart '{c['title']}'"
    if r["viewport"] < 1200 or r["viewport"] > 1280:
        problems.append(f"{page}: laid out {r['viewport']} px wide, not at 1280")
    if r["errors"] or not r["status"].startswith("ok "):
        problems.append(f"{page}: {r['status']} {r['errors']}")
    if len(r["charts"]) < 8:
        problems.append(f"{page}: only {len(r['charts'])} charts")
    for c in r["charts"]:
        if not c["drawn"]: problems.append(f"{where(c)} is blank")
        if c["series"] > 8: problems.append(f"{where(c)} has {c['series']} series")
        if c["legendEntries"] < 1: problems.append(f"{where(c)} has no legend")
        if c["legendLeft"] < -0.5 or c["legendRight"] > c["width"] + 0.5:
            problems.append(f"{where(c)}: legend {c['legendLeft']}..{c['legendRight']} px wider than the chart ({c['width']} px)")
        if c["plotHeight"] < 150: problems.append(f"{where(c)}: plot only {c['plotHeight']} px high (legend too tall)")
        if not c["titleFits"]: problems.append(f"{where(c)}: title clipped")
        for a in c["axes"]:
            if not a["fits"]: problems.append(f"{where(c)}: axis title '{a['title']}' clipped")
    tables = r["tables"]
    if not any("loader" in t["table"] for t in tables): problems.append(f"{page}: no loader table")
    for t in tables:
        if t["hidden"]: problems.append(f"{page}: table '{t['table']}' hides {t['hidden']} at 1280 px")
        if not t["sticky"]: problems.append(f"{page}: table '{t['table']}' scrolls its case label away")
        if t.get("brokenWords") is None: problems.append(f"{page}: no header check in the self-check")
        elif t["brokenWords"]: problems.append(f"{page}: table '{t['table']}' breaks headers mid-word: {t['brokenWords']}")
    if r["text_defects"]: problems.append(f"{page}: text with a missing value: {r['text_defects']}")
    series = " | ".join(html.unescape(s) for s in re.findall(r'<canvas[^>]*data-series="([^"]*)"', dom))
    for n in want_names:
        if n not in series: problems.append(f"{page}: no series named {n}")
    for n in unwanted:
        if n in series: problems.append(f"{page}: a series named by {n}")
    # The key columns were checked visible; the verdict column is one of them for the loader.
    if page == "one" and '<th scope="col" class="key verdict">verdict</th>' not in dom:
        problems.append("one: the loader table has no verdict column")
check("one", [], [])
check("three", ["p4d.24xlarge-before-the-nfs-upgrade", "p5.48xlarge", "g6e.48xlarge"], ["-run.json", "/"])
print("\n".join(problems))
sys.exit(1 if problems else 0)
EOF

# A screenshot at 1280 px: the page renders to an image (kept with REPORT_SHOTS=DIR, to look at).
shots=${REPORT_SHOTS:-$WORK}
mkdir -p "$shots"
chrome "$WORK/three.html" --window-size=1280,2400 --screenshot="$shots/three.png" >/dev/null 2>&1
[ -s "$shots/three.png" ] || fail "no screenshot written"
if [ -n "${REPORT_SHOTS:-}" ]; then
  chrome "$WORK/one.html" --window-size=1280,9000 --screenshot="$shots/one.png" >/dev/null 2>&1
fi
echo "ok: 276-case reports (one file, three files) laid out at 1280 px, every check passed"
