# A result is never written over by accident, nor through what another user planted (issue 43):
# a default name (results/<config>/<host>-<UTC>.json) taken, even by a run of the same second,
# gets "-2", "-3"... and the run prints the name it wrote; the temporary a result is written
# through is created exclusively, so a FIFO planted at its name blocks nothing and a file
# another user planted there never becomes the result. gen's temporaries alike.
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

"$FEEDBENCH" gen --out "$WORK/src" --files 4 --file-size 4KiB --layout flat --seed 1 >/dev/null
cat >"$WORK/c.json" <<'JSON'
{"name": "e2e-names", "dataset": {"source": "${E2E_SOURCE}"}, "defaults": {"repetitions": 1},
 "families": [{"family": "file_read", "pattern": "sequential", "block_size": "4KiB", "cache_state": "warm",
               "engine": "psync"}]}
JSON
export E2E_SOURCE=$WORK/src
cd "$WORK"
host=$(hostname)
dir=results/e2e-names
mkdir -p "$dir"
# Every default name of the next 90 seconds is taken: a run must keep them and write beside.
now=$(date -u +%s)
for s in $(seq 0 90); do
  echo planted >"$dir/$host-$(date -u -d "@$((now + s))" +%Y%m%dT%H%M%SZ).json"
done
expect_exit 0 "$FEEDBENCH" run --config c.json --quiet
written=$(sed -n 's/^result: //p' "$WORK/out")
case "$written" in "$dir/$host-"*Z-2.json) ;; *) fail "expected a -2 name, the run printed '$written'" ;; esac
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["benchmarks"]' "$written"
[ -z "$(grep -L '^planted$' "$dir"/*Z.json)" ] || fail "a default-named run wrote over a taken name"
rm -f "$dir"/*

# Three runs of one second: three results, three names printed.
for i in 1 2 3; do "$FEEDBENCH" run --config c.json --quiet >"out.$i" 2>"err.$i" & done
wait
names=$(cat out.1 out.2 out.3 | sed -n 's/^result: //p' | sort -u | wc -l)
[ "$names" = 3 ] || { cat out.* err.*; fail "three runs printed $names distinct result names"; }
[ "$(ls "$dir" | wc -l)" = 3 ] || { ls -l "$dir"; fail "three runs left $(ls "$dir" | wc -l) result files"; }

# A FIFO at --out's temporary name (PATH.tmp.PID: the pid is the exec'd shell's): never opened,
# so nothing blocks; the result is written, the FIFO left as it was.
expect_exit 0 timeout 60 bash -c 'mkfifo r.json.tmp.$$ && exec "$0" run --config c.json --out r.json --quiet' "$FEEDBENCH"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["benchmarks"]' r.json
[ -p "$(ls r.json.tmp.* | head -1)" ] || fail "the FIFO planted at the temporary name was replaced"
rm -f r.json.tmp.*
# A file of another user at the temporary name, writable by all: the result is root's own.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  expect_exit 0 bash -c 'f=r.json.tmp.$$; touch $f && chown nobody $f && chmod 666 $f && exec "$0" run --config c.json --out r.json --quiet' "$FEEDBENCH"
  [ "$(stat -c %u r.json)" = 0 ] && [ "$(stat -c %a r.json)" != 666 ] ||
    fail "the result is $(stat -c %U:%a r.json), not root's own"
  [ "$(stat -c %U "$(ls r.json.tmp.* | head -1)")" = nobody ] || fail "the planted file was touched"
fi

# gen: a FIFO at a file's temporary name in --out (with --force) is refused at once, unopened.
mkdir g && mkfifo g/.fb-0000000000000000.fbtmp
expect_exit 1 timeout 60 "$FEEDBENCH" gen --out g --force --files 2 --file-size 4KiB --layout flat --seed 1
expect_in "$WORK/err" "cannot create: the name is taken by a file, link or FIFO"
[ -p g/.fb-0000000000000000.fbtmp ] || fail "gen replaced the FIFO planted at its temporary name"
echo ok
