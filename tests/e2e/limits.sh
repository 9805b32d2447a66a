#!/usr/bin/env bash
# Bounded input through the real binary: numbers out of range, numbers no double holds, deep or
# long JSON, huge sweeps, bad Google Benchmark flags and gen sizes are each refused with exit 2
# and one message naming the file (or option) and the JSON pointer, before anything is written.
source "$(dirname "$0")/lib.bash"

FEEDBENCH=$(realpath "$FEEDBENCH")
mkdir -p "$WORK/source" "$WORK/cwd"
head -c 65536 /dev/urandom >"$WORK/source/a.bin"

# refused NAME EXPECTED-TEXT CMD...: runs CMD from an empty folder, expects exit 2, EXPECTED-TEXT
# on stderr in a message of at most two lines, no crash report, and nothing written.
refused() {
  local name=$1 expected=$2; shift 2
  (cd "$WORK/cwd" && expect_exit 2 "$@")
  expect_in "$WORK/err" "$expected"
  [ "$(wc -l <"$WORK/err")" -le 2 ] || { cat "$WORK/err"; fail "$name: expected a one-line message"; }
  [ -z "$(ls -A "$WORK/cwd")" ] || { ls -la "$WORK/cwd"; fail "$name: a refused command wrote files"; }
  echo "ok: $name"
}

config() {  # config NAME FAMILIES-JSON [EXTRA-TOP-LEVEL-JSON-MEMBERS]: writes $WORK/NAME.json
  printf '{"name": "t", "dataset": {"source": "%s"}, "families": %s%s}\n' "$WORK/source" "$2" "${3:+, $3}" >"$WORK/$1.json"
}

# ---- Numbers: never cut -----------------------------------------------------------------------
config batch '[{"family": "loader", "batch_size": 4294967297}]'
refused batch_size "$WORK/batch.json: /families/0/batch_size: expected an integer from 1 to 65536, or a non-empty list of them (a sweep), got 4294967297" \
  "$FEEDBENCH" run --config "$WORK/batch.json"
config reps '[{"family": "file_read"}]' '"defaults": {"repetitions": 2147483648}'
refused repetitions "$WORK/reps.json: /defaults/repetitions: expected an integer from 1 to 1000, got 2147483648" \
  "$FEEDBENCH" run --config "$WORK/reps.json"
config plain '[{"family": "file_read"}]'
refused set_repetitions "$WORK/plain.json: /families/0/repetitions: expected an integer from 1 to 1000, got 2147483648 (from --set repetitions)" \
  "$FEEDBENCH" run --config "$WORK/plain.json" --set repetitions=2147483648
refused set_sweep "$WORK/plain.json: /families/0/workers/1: expected an integer from 1 to 1024, got 4294967297 (from --set workers)" \
  "$FEEDBENCH" run --config "$WORK/plain.json" --set 'workers=[1,4294967297]'
config overflow '[{"family": "loader", "target_au": 1e999}]'
refused config_1e999 "$WORK/overflow.json: /families/0/target_au: expected a number between -1.7e308 and 1.7e308, got 1e999" \
  "$FEEDBENCH" run --config "$WORK/overflow.json"

# Google Benchmark's flags, checked before the library sees them.
refused gb_repetitions "--benchmark_repetitions: expected a whole number from 1 to 1000, got '-1'" \
  "$FEEDBENCH" run --config "$WORK/plain.json" --benchmark_repetitions=-1
refused gb_min_time "--benchmark_min_time: expected a number of seconds of at least 0" \
  "$FEEDBENCH" run --config "$WORK/plain.json" --benchmark_min_time=-2
refused gb_filter "--benchmark_filter: expected a regular expression (POSIX extended), got 'file_read[': " \
  "$FEEDBENCH" run --config "$WORK/plain.json" '--benchmark_filter=file_read['
refused gb_env "BENCHMARK_REPETITIONS (environment): expected a whole number from 1 to 1000, got '0'" \
  env BENCHMARK_REPETITIONS=0 "$FEEDBENCH" run --config "$WORK/plain.json"

# A result file diff reads: a number no double holds is bad input (exit 2), not a regression (1).
expect_exit 0 "$FEEDBENCH" run --config "$WORK/plain.json" --set repetitions=1 --out "$WORK/base.json" --quiet
sed 's/"real_time": *[0-9.e+-]*/"real_time": 1e999/' "$WORK/base.json" >"$WORK/inf.json"
grep -q '1e999' "$WORK/inf.json" || fail "could not write the 1e999 result"
refused diff_1e999 "$WORK/inf.json: /benchmarks/0/real_time: expected a number between -1.7e308 and 1.7e308, got 1e999" \
  "$FEEDBENCH" diff "$WORK/base.json" "$WORK/inf.json"

# ---- Deep or long input ---------------------------------------------------------------------------
deep() { python3 -c "import sys; n=int(sys.argv[1]); print('['*n + ']'*n)" "$1"; }
printf '{"name": "t", "dataset": {"source": "${HOME}"}, "x": %s}\n' "$(deep 30000)" >"$WORK/deep.json"
refused deep_config "$WORK/deep.json: /x/0/0/0" "$FEEDBENCH" run --config "$WORK/deep.json"
expect_in "$WORK/err" "expected arrays and objects nested at most 64 levels deep (the limit for a config), got deeper"

long=$(head -c 30720 /dev/zero | tr '\0' a)
printf '{"name": "%s", "dataset": {"source": "%s"}, "families": [{"family": "file_read"}]}\n' "$long" "$WORK/source" >"$WORK/long.json"
refused long_name "$WORK/long.json: /name: expected a string of at most 4096 bytes (the limit for a config), got 30720 bytes" \
  "$FEEDBENCH" run --config "$WORK/long.json"
refused set_long "$WORK/plain.json: /defaults/block_size: expected a string of at most 4096 bytes (the limit for a config), got 30720 bytes (from --set block_size)" \
  "$FEEDBENCH" run --config "$WORK/plain.json" --set "block_size=$long"

python3 - "$WORK/base.json" "$WORK/deep-result.json" <<'PY'
import sys
text = open(sys.argv[1]).read()
n = 100000
open(sys.argv[2], "w").write(text.replace('"context": {', '"context": {"x": ' + '[' * n + ']' * n + ', ', 1))
PY
refused diff_deep "$WORK/deep-result.json: /context/x/0/0" "$FEEDBENCH" diff "$WORK/base.json" "$WORK/deep-result.json"
expect_in "$WORK/err" "nested at most 128 levels deep (the limit for a result file), got deeper"
refused report_deep "$WORK/deep-result.json: /context/x/0/0" "$FEEDBENCH" report "$WORK/deep-result.json" --out "$WORK/cwd/r.html"

# ---- Unbounded work ---------------------------------------------------------------------------------
hundred=$(python3 -c "print(list(range(1, 101)))")
config sweep "[{\"family\": \"loader\", \"batch_size\": $hundred, \"prefetch\": $hundred, \"epochs\": $hundred, \"steps\": $hundred}]"
refused sweep "$WORK/sweep.json: /families: expected at most 10000 cases (raise the limit with --max-cases N), got 100000000 from the sweeps (/families/0 loader: 100000000); sweep fewer values" \
  "$FEEDBENCH" run --config "$WORK/sweep.json"
refused max_cases "--max-cases: expected a whole number from 1 to 18446744073709551615, got '-5'" \
  "$FEEDBENCH" run --config "$WORK/plain.json" --max-cases=-5

start=$(date +%s)
refused gen_files "--files: expected at most 10000000 files (raise the limit with --max-files N), got 99999999999999" \
  "$FEEDBENCH" gen --out "$WORK/cwd/g" --files 99999999999999 --file-size 1
[ $(( $(date +%s) - start )) -le 5 ] || fail "gen took more than 5 s to refuse"
refused gen_bytes "--files/--file-size: the data set needs 1099511627776000 bytes" \
  "$FEEDBENCH" gen --out "$WORK/cwd/g" --files 1000 --file-size 1TiB --layout flat
echo "all limits refused"
