# Shared by the diff tests (tests/e2e/diff*.sh), sourced after lib.bash: small result files
# written in place of a run, with the figures a test plants.

# fixture NAME KEY=VALUE...: writes $WORK/NAME.json, a feedbench-result/1 document.
#   cases: "case|metric|center|reps|spread[|metric|...]" separated by ';': per repetition i,
#          center * (1 + spread * sin(1.7 i + 0.3)); or "case|metric|v1,v2,...|-|-": those values
#   sha: config sha256; kernel: environment.host.kernel; unachieved: a case none of whose
#   repetitions found its data cached as asked; load: "before,after,cores" (environment.host.load)
fixture() {
  local name=$1; shift
  env "$@" python3 - "$WORK/$name.json" <<'PY'
import json, math, os, sys
cases = []
for spec in os.environ.get("cases", "").split(";"):
    if not spec:
        continue
    parts = spec.split("|")
    name, metrics = parts[0], parts[1:]
    explicit = "," in metrics[1]
    reps = len(metrics[1].split(",")) if explicit else int(metrics[2])
    for i in range(reps):
        gb = f"{name}/iterations:1/repeats:{reps}/manual_time"
        e = {"name": gb, "run_name": gb, "run_type": "iteration", "repetitions": reps,
             "repetition_index": i, "threads": 1, "iterations": 1, "real_time": 12.5,
             "cpu_time": 1.0, "time_unit": "ms", "case": name,
             "params": {"family": name.split("/")[0]},
             "cache": {"requested": "warm", "residency_before": 1.0,
                       "achieved": os.environ.get("unachieved") != name}}
        for k in range(0, len(metrics), 4):
            metric = metrics[k]
            if "," in metrics[k + 1]:
                e[metric] = float(metrics[k + 1].split(",")[i])
            else:
                center, spread = float(metrics[k + 1]), float(metrics[k + 3])
                e[metric] = center * (1 + spread * math.sin(1.7 * i + 0.3))
        cases.append(e)
environment = {"host": {"cpu_model": "Test CPU", "kernel": os.environ.get("kernel", "6.1.0")},
               "paths": {"source": {"fs_type": "ext4", "device": "nvme0n1"}}}
if os.environ.get("load"):
    before, after, cores = (float(x) for x in os.environ["load"].split(","))
    environment["host"]["load"] = {"loadavg_1m_before": before, "loadavg_1m_after": after,
                                   "online_cores": cores}
doc = {"schema": "feedbench-result/1",
       "context": {"date": "2024-01-01T00:00:00+00:00", "host_name": "ci", "library_version": "1.7.1"},
       "tool": {"version": "0.1.0", "benchmark_version": "1.7.1"},
       "config": {"name": "fixture", "sha256": os.environ.get("sha", "a" * 64)},
       "dataset": {"source": {"fingerprint": "f" * 64}},
       "environment": environment,
       "benchmarks": cases}
json.dump(doc, open(sys.argv[1], "w"), indent=1)
PY
}
