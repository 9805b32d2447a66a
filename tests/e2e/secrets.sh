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

# Every FEEDBENCH_* name the sources read is in feedbench_variable_names().
cd "$FEEDBENCH_SOURCE_DIR"
list=harness/base/env_settings.cc
# (Code lines only: comments may name examples such as FEEDBENCH_TOKEN.)
for name in $(grep -rhE --include='*.cc' --include='*.h' '"FEEDBENCH_[A-Z_]+"' harness tools benchmarks reporters |
              grep -vE '^\s*//' | grep -oE '"FEEDBENCH_[A-Z_]+"' | tr -d '"' | sort -u); do
  grep -q "\"$name\"" <(sed -n '/feedbench_variable_names() {/,/^}/p' "$list") ||
    fail "$name is read by the sources but not in feedbench_variable_names() ($list)"
done
