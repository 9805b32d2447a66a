# A hot-set cache is said by the spec that made it, not its list of paths (issue 31): the run's
# cache header and verify's line read "hot set 10% (seed 42) of every file, 60 files", long
# lists of globs end "and N more", and the repair command repeats --hot-set 10% --seed 42
# rather than 60 --include flags. Colour and progress redraws stay out of a launcher's terminal.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 600 --file-size 4KiB --seed 7 >/dev/null
expect_exit 0 "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/hot" --hot-set 10% --seed 42
python3 - "$WORK/hot/feedbench-manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["hot_set"] == {"share": "10%", "seed": 42, "of": []}, m.get("hot_set")
assert len(m["include"]) == 60, len(m["include"])
PY
cat >"$WORK/c.json" <<JSON
{"name": "hot", "dataset": {"source": "$WORK/src", "cache": "$WORK/hot", "include": "from-cache"},
 "defaults": {"repetitions": 1, "cache_state": "warm"},
 "families": [{"family": "file_read", "block_size": "4KiB", "path": "cache"}]}
JSON
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json"
expect_in "$WORK/out" "cache: label fp-"
expect_in "$WORK/out" "hot set 10% (seed 42) of every file, 60 files, staged"
awk 'length > 400 { bad = 1 } END { exit bad }' "$WORK/out" || fail "a line of run's output is over 400 characters"

expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/hot"
expect_in "$WORK/out" "hot set 10% (seed 42) of every file, 60 files"

# Colour: under a launcher a terminal is the launcher's, so nothing asks for colour. (Simulated
# with OMPI_COMM_WORLD_SIZE and script(1)'s pseudo-terminal, where script is installed.)
if command -v script >/dev/null; then
  OMPI_COMM_WORLD_SIZE=1 script -qec "'$FEEDBENCH' run --config '$WORK/c.json' --out '$WORK/r3.json' " \
    /dev/null >"$WORK/tty.out" 2>&1 || true
  if grep -q $'\x1b\[' "$WORK/tty.out"; then fail "colour or progress redraws under a launcher"; fi
  # The same run on a person's terminal does redraw: the check above could see codes.
  script -qec "'$FEEDBENCH' run --config '$WORK/c.json' --out '$WORK/r4.json'" /dev/null >"$WORK/tty2.out" 2>&1 || true
  grep -q $'\x1b\[' "$WORK/tty2.out" || fail "no terminal codes on a terminal: the launcher check proves nothing"
fi

# A source changed since staging: the repair command is the spec, not 60 paths.
hot=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["include"][0])' "$WORK/hot/feedbench-manifest.json")
echo changed >>"$WORK/src/$hot"
expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r2.json"
expect_in "$WORK/err" "--hot-set 10% --seed 42"
if grep -c -- "--include" "$WORK/err" | grep -qv '^0$'; then
  grep -o -- "--include [^ ]*" "$WORK/err" | head -3
  fail "the repair command lists the hot set's paths"
fi
[ "$(wc -c <"$WORK/err")" -lt 2000 ] || fail "the refusal is $(wc -c <"$WORK/err") bytes"
