# What a file name, a folder's name or a config chose reaches the terminal escaped (issue 43):
# an ESC sequence in a data folder's name, in a missing file's name or in a config's name is
# shown as \x1b..., never obeyed (a cleared screen, a set title, a forged line).
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

esc=$'\e' cr=$'\r' bel=$'\a'
# RETURNS (exit status): fails when $1 holds a control byte other than newline.
no_controls() {
  if LC_ALL=C grep -q "[$esc$cr$bel]" "$1"; then echo "--- $1"; cat -v "$1"; fail "a control byte reached the console in $1"; fi
}

data="$WORK/data${esc}[2J${esc}]0;owned$bel"
expect_exit 0 "$FEEDBENCH" gen --out "$data" --files 3 --file-size 4KiB --layout flat --seed 1
no_controls "$WORK/out"
expect_in "$WORK/out" 'data\x1b[2J\x1b]0;owned\x07'

# An error that quotes its input: a missing config named with a forged line.
expect_exit 2 "$FEEDBENCH" run --config "$WORK/c${esc}[1A${cr}ALL GOOD.json"
no_controls "$WORK/err"
expect_in "$WORK/err" 'c\x1b[1A\x0dALL GOOD.json'

# A run's console lines: the source folder's name, and the config's name in the result's path.
cat >"$WORK/c.json" <<'JSON'
{"name": "e2e-escapes", "dataset": {"source": "${E2E_SOURCE}"}, "defaults": {"repetitions": 1},
 "families": [{"family": "file_read", "pattern": "sequential", "block_size": "4KiB", "cache_state": "warm",
               "engine": "psync"}]}
JSON
E2E_SOURCE=$data expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r${esc}[31m.json"
no_controls "$WORK/out"
no_controls "$WORK/err"
expect_in "$WORK/out" 'data\x1b[2J'
expect_in "$WORK/out" 'result: '"$WORK"'/r\x1b[31m.json'
[ -f "$WORK/r${esc}[31m.json" ] || fail "the result was not written under its own name"

# verify names the cache's files it finds extra or missing.
expect_exit 0 "$FEEDBENCH" stage --from "$data" --to "$WORK/cache"
echo x >"$WORK/cache/extra${esc}[2J"
expect_exit 1 "$FEEDBENCH" verify --cache "$WORK/cache"
no_controls "$WORK/out"
expect_in "$WORK/out" 'extra\x1b[2J'
echo ok
