# End to end: a result holds no secrets (issue 30). A FEEDBENCH_TOKEN exported for some other
# tool is not recorded at all; a credential-looking variable the config expands is recorded as
# set, never by value, and its value leaves the resolved config; --redact NAME does the same for
# any name; the Markdown and the report hold no value either. The list of feedbench's own
# variables matches every FEEDBENCH_* name the sources read.
source "$(dirname "$0")/lib.bash"

mkdir -p "$WORK/hunter2-s3cr3t"
"$FEEDBENCH" gen --out "$WORK/hunter2-s3cr3t/src" --files 20 --file-size 16KiB --seed 3 >/dev/null
cat >"$WORK/c.json" <<'JSON'
{"name": "secrets", "description": "data in bucket ${BUCKET_SECRET}",
 "dataset": {"source": "${DATA_ROOT}/${BUCKET_SECRET}/src"},
 "defaults": {"repetitions": 1, "cache_state": "warm"},
 "families": [{"family": "file_read", "block_size": "16KiB"}]}
JSON
export DATA_ROOT="$WORK" BUCKET_SECRET="hunter2-s3cr3t" SITE="eu-west-1a"
export FEEDBENCH_TOKEN="tok-8f1e2d" FEEDBENCH_IO_URING_CHAIN=1
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --markdown "$WORK/r.md"
expect_exit 0 "$FEEDBENCH" report "$WORK/r.json" --out "$WORK/r.html"
for f in r.json r.md r.html; do
  for secret in tok-8f1e2d hunter2-s3cr3t; do
    if grep -qF "$secret" "$WORK/$f"; then grep -nF "$secret" "$WORK/$f" | head -3; fail "$f holds $secret"; fi
  done
done
python3 - "$WORK/r.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
env = doc["environment_variables"]
assert "FEEDBENCH_TOKEN" not in env, env
assert env["FEEDBENCH_IO_URING_CHAIN"] == "1", env
assert env["BUCKET_SECRET"] == "(set; value not recorded)", env
assert env["DATA_ROOT"], env
assert doc["config"]["resolved"]["dataset"]["source"].endswith("/${BUCKET_SECRET}/src"), doc["config"]
assert doc["config"]["resolved"]["description"] == "data in bucket ${BUCKET_SECRET}", doc["config"]
assert "${BUCKET_SECRET}" in doc["dataset"]["source"]["root"], doc["dataset"]["source"]
PY
# --redact SITE: SITE is recorded only once the config expands it, then as set, never by value.
python3 - "$WORK/c.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["description"] = "at ${SITE}"
json.dump(c, open(sys.argv[1], "w"))
PY
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r2.json" --redact SITE
if grep -qF "eu-west-1a" "$WORK/r2.json"; then fail "--redact SITE: its value is in the result"; fi
expect_in "$WORK/r2.json" '"SITE": "(set; value not recorded)"'
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r3.json"
expect_in "$WORK/r3.json" '"SITE": "eu-west-1a"'

# Bad --redact names are bad input, before anything runs.
for bad in "" "A=B" "1X"; do
  expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r4.json" --redact "$bad"
  expect_in "$WORK/err" "--redact: expected an environment variable's name"
  [ ! -e "$WORK/r4.json" ] || fail "--redact '$bad' wrote a result"
done

# A watched job's command line (issue 43): tokens given to it reach neither the result, the trace
# (made to be copied) nor the report; --redact NAME withholds any name's value; --trace-paths
# relative names no folder of this machine, and replay and gen --like read such a trace.
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  "$FEEDBENCH" gen --out "$WORK/wdata" --files 12 --file-size 4KiB --layout flat --seed 2 >/dev/null
  export HF_TOKEN_PASSED="hf_passedbyvalue123"
  expect_exit 0 "$FEEDBENCH" watch --out "$WORK/w.json" --trace "$WORK/w.trace.json" --trace-paths relative \
    --redact bucket -- env HF_TOKEN=hf_s3cr3tv4lue bash -c '"$0" "$1" "$2" --workers 0 --batch 2 --step-ms 1' \
    /usr/bin/python3 "$FEEDBENCH_SOURCE_DIR/tests/e2e/watch_job.py" "$WORK/wdata" --token=tk-0a1b2c \
    --api-key ak-9z8y7x --bucket bkt-42q "$HF_TOKEN_PASSED"
  expect_exit 0 "$FEEDBENCH" report "$WORK/w.json" --out "$WORK/w.html"
  for f in w.json w.trace.json w.html; do
    for secret in hf_s3cr3tv4lue tk-0a1b2c ak-9z8y7x bkt-42q hf_passedbyvalue123; do
      if grep -qF "$secret" "$WORK/$f"; then grep -noF "$secret" "$WORK/$f" | head -3; fail "$f holds $secret"; fi
    done
  done
  expect_in "$WORK/w.json" '"HF_TOKEN=(set; value not recorded)"'
  expect_in "$WORK/w.trace.json" '"${HF_TOKEN_PASSED}"'
  if grep -qF "$WORK" "$WORK/w.trace.json"; then fail "the relative trace names $WORK"; fi
  expect_in "$WORK/w.trace.json" '"paths":"relative"'
  expect_exit 2 "$FEEDBENCH" replay "$WORK/w.trace.json" --dry-run
  expect_in "$WORK/err" "name a copy of that folder with --source DIR"
  expect_exit 0 "$FEEDBENCH" replay "$WORK/w.trace.json" --source "$WORK/wdata" --out "$WORK/wr.json" --quiet
  expect_exit 0 "$FEEDBENCH" gen --like "$WORK/w.trace.json" --out "$WORK/wstandin"
  expect_in "$WORK/out" "wrote 12 files"
  expect_exit 2 "$FEEDBENCH" watch --redact "a=b" -- true
  expect_in "$WORK/err" "--redact: expected a variable's or an option's name"
  expect_exit 2 "$FEEDBENCH" watch --trace-paths elsewhere --trace "$WORK/x.json" -- true
  expect_in "$WORK/err" "--trace-paths: expected absolute or relative"
fi

# Every FEEDBENCH_* name the sources read is in feedbench_variable_names().
cd "$FEEDBENCH_SOURCE_DIR"
list=harness/base/env_settings.cc
# (Code lines only: comments may name examples such as FEEDBENCH_TOKEN.)
for name in $(grep -rhE --include='*.cc' --include='*.h' '"FEEDBENCH_[A-Z_]+"' harness tools benchmarks reporters |
              grep -vE '^\s*//' | grep -oE '"FEEDBENCH_[A-Z_]+"' | tr -d '"' | sort -u); do
  grep -q "\"$name\"" <(sed -n '/feedbench_variable_names() {/,/^}/p' "$list") ||
    fail "$name is read by the sources but not in feedbench_variable_names() ($list)"
done
