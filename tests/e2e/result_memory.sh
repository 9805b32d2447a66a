#!/usr/bin/env bash
# diff and report hold a result in memory bounded by its size: the maximum resident memory each
# adds per MB of result, measured as the slope between a 1 MB and a 5 MB result (the binary's
# own memory cancels out). Each entry once held a decoded 58 KiB latency histogram and the file
# was read as a whole DOM: diff took 44 MB per MB of the results it read, report 76 MB per MB
# (release build). The bounds leave room for ASan; docs/limits.md gives release's figures.
source "$(dirname "$0")/lib.bash"

[ -x /usr/bin/time ] || skip "needs /usr/bin/time (Debian package 'time')"
python3 "$FEEDBENCH_SOURCE_DIR/tests/e2e/qualify_fixture.py" "$WORK/qualify.json" 1.0 p4d.24xlarge 3 || fail "fixture"
for mb in 1 5; do
  python3 "$FEEDBENCH_SOURCE_DIR/tests/e2e/grow_result.py" "$WORK/qualify.json" "$WORK/r$mb.json" $mb ||
    fail "grow_result.py $mb"
done
# ASan keeps freed memory from reuse for a while (its quarantine): without it, memory grows as
# it does in a release build.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"

# peak_kib CMD...: CMD's maximum resident memory in KiB; CMD must exit 0.
peak_kib() {
  /usr/bin/time -f %M -o "$WORK/rss" "$@" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "$*"; }
  tail -n 1 "$WORK/rss"
}
# least_peak_kib CMD...: the least of three runs' peaks: a peak is noisy upward only (when the
# allocator's arenas grow, what else the host does), and the bound below is a fraction of a MB.
least_peak_kib() {
  local least="" k
  for _ in 1 2 3; do
    k=$(peak_kib "$@")
    if [ -z "$least" ] || [ "$k" -lt "$least" ]; then least=$k; fi
  done
  echo "$least"
}
# slope VERB SMALL_KIB BIG_KIB READS MAX: MB of memory per MB of result (READS results of each
# size read per command), printed; fails above MAX.
slope() {
  local small_bytes big_bytes
  small_bytes=$(stat -c %s "$WORK/r1.json")
  big_bytes=$(stat -c %s "$WORK/r5.json")
  awk -v verb="$1" -v a="$2" -v b="$3" -v n="$4" -v max="$5" -v s="$small_bytes" -v l="$big_bytes" 'BEGIN {
    per = (b - a) * 1024 / (n * (l - s))
    printf "%s: %.1f MB per MB of result (max RSS %.0f MB for %.1f MB, %.0f MB for %.1f MB; at most %s)\n",
           verb, per, a / 1024, n * s / 1e6, b / 1024, n * l / 1e6, max
    exit per > max }' || fail "$1 takes more memory per MB of result than $5 MB"
}

small=$(peak_kib "$FEEDBENCH" diff "$WORK/r1.json" "$WORK/r1.json")
big=$(peak_kib "$FEEDBENCH" diff "$WORK/r5.json" "$WORK/r5.json")
slope diff "$small" "$big" 2 8
# A confirmation re-run's cases replace NEW's in place: NEW is not copied (it was: 1.7 MB more
# per MB of NEW). Not copied, it reads 0.2-0.3 MB alone and 0.6-0.7 beside other tests (ASan
# hands freed memory back to the system later on a busy host): the bound sits between.
python3 - "$WORK/qualify.json" "$WORK/rerun.json" <<'EOF' || fail "rerun fixture"
import json, sys
doc = json.load(open(sys.argv[1]))
doc["benchmarks"] = doc["benchmarks"][:3]  # one case measured again
json.dump(doc, open(sys.argv[2], "w"))
EOF
plain=$(least_peak_kib "$FEEDBENCH" diff "$WORK/r5.json" "$WORK/r5.json")
rerun=$(least_peak_kib "$FEEDBENCH" diff "$WORK/r5.json" "$WORK/r5.json" --rerun-result "$WORK/rerun.json")
awk -v a="$plain" -v b="$rerun" -v l="$(stat -c %s "$WORK/r5.json")" 'BEGIN {
  per = (b - a) * 1024 / l
  printf "diff --rerun-result: %.1f MB more per MB of NEW (at most 1.1)\n", per
  exit per > 1.1 }' || fail "--rerun-result copies NEW"
small=$(peak_kib "$FEEDBENCH" report "$WORK/r1.json" --out "$WORK/r1.html")
big=$(peak_kib "$FEEDBENCH" report "$WORK/r5.json" --out "$WORK/r5.html")
# Most of report's share is the page's: it folds each case's latency histogram (58 KiB decoded)
# twice (reporters/), the result's own entries are a small part. Release: 37 MB per MB, here
# about 60; entries holding decoded histograms again would add about 28 (release) to it.
slope report "$small" "$big" 1 80
echo "ok"
