# The harness's subsystems link in one direction (CMakeLists.txt, feedbench_subsystem): a file
# of a lower subsystem that includes a higher one's header must fail to compile, and one that
# includes a lower one's must compile. Each probe compiles one line with the flags the build
# gives a real source file of that subsystem (compile_commands.json beside the binary).
source "$(dirname "$0")/lib.bash"

db=$(dirname "$FEEDBENCH")/compile_commands.json
[ -f "$db" ] || skip "no compile_commands.json beside $FEEDBENCH"
python3 - "$db" "$WORK" <<'PY' || fail "an include against the grain compiled, or one with it did not"
import json, re, subprocess, sys
db, work = sys.argv[1], sys.argv[2]
entries = json.load(open(db))
def flags_of(sub):
    for e in entries:
        if re.search(r"/harness/%s/[a-z_]+\.cc$" % sub, e["file"]):
            return e
    sys.exit("no source of harness/%s/ in %s" % (sub, db))
# (subsystem compiling, header it includes, should it compile?)
probes = [
    ("base", "feedbench/io/engine.h", False),
    ("dataset", "feedbench/io/runner.h", False),
    ("results", "feedbench/io/page_cache.h", False),
    ("io", "feedbench/cache/manifest.h", False),
    ("io", "feedbench/loader/loader.h", False),
    ("cache", "feedbench/plan/plan.h", False),
    ("loader", "feedbench/cache/stager.h", False),
    ("plan", "feedbench/loader/loader.h", False),
    ("io", "feedbench/dataset/dataset.h", True),
    ("cache", "feedbench/results/environment.h", True),
    ("plan", "feedbench/io/runner.h", True),
]
bad = 0
for i, (sub, header, ok) in enumerate(probes):
    e = flags_of(sub)
    src = "%s/probe%d.cc" % (work, i)
    open(src, "w").write('#include "%s"\n' % header)
    cmd = e["command"].replace(e["file"], src)
    cmd = re.sub(r" -o \S+", " -o %s/probe%d.o" % (work, i), cmd)
    r = subprocess.run(cmd, shell=True, cwd=e["directory"], capture_output=True, text=True)
    compiled = r.returncode == 0
    if compiled != ok:
        bad += 1
        print("harness/%s/ including %s: %s" % (sub, header, "compiled" if compiled else r.stderr.strip()[:300]))
    elif not ok and "No such file or directory" not in r.stderr:
        bad += 1
        print("harness/%s/ including %s failed for another reason: %s" % (sub, header, r.stderr.strip()[:300]))
sys.exit(1 if bad else 0)
PY
echo "ok: includes against the grain fail to compile"
