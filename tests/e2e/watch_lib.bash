# What the watch tests share (sourced after lib.bash; not a test itself): the job under watch and
# the check of what watch said against what the job timed itself. Needs PY and JOB set.

# watch_job NAME DATA [PREFIX...] -- JOB-ARGS...: runs the job on DATA under watch (PREFIX before
# feedbench, e.g. a throttle's cgroup); result in $WORK/NAME.json, the job's own figures (its last
# stdout line) in $WORK/NAME.own, watch's words in $WORK/NAME.err.
watch_job() {
  local name=$1 data=$2 prefix=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do prefix+=("$1"); shift; done
  shift
  expect_exit 0 "${prefix[@]}" "$FEEDBENCH" watch --out "$WORK/$name.json" --name "$name" -- $PY "$JOB" "$data" "$@"
  tail -n 1 "$WORK/out" >"$WORK/$name.own"
  cp "$WORK/err" "$WORK/$name.err"
}

# check NAME VERDICT: the watched AU within 3 points of the job's own, the verdict, every batch.
check() {
  $PY - "$WORK/$1.json" "$WORK/$1.own" "$2" <<'PY' || { cat "$WORK/$1.err"; fail "$1"; }
import json, sys
doc = json.load(open(sys.argv[1]))
own = json.loads(open(sys.argv[2]).read())
(e,) = doc["benchmarks"]
x = e["extra"]
print("%s: watched AU %.3f, own AU %.3f, limited_by %s, %.1f s: %s"
      % (e["name"], e["au"], own["au"], x["limited_by"], x["wall_s"], x["verdict"]))
assert e["name"].startswith("job/") and not e.get("error_occurred"), e
assert abs(e["au"] - own["au"]) <= 0.03, (e["au"], own["au"])
assert x["limited_by"] == sys.argv[3], x["verdict"]
assert e["steps"] + len(x["passes"]) == own["batches"], (e["steps"], own["batches"])
PY
}
