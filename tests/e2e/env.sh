# feedbench env: the host and path block, as JSON and as text; bad options exit 2.
source "$(dirname "$0")/lib.bash"

mkdir -p "$WORK/data"
expect_exit 0 "$FEEDBENCH" env --path /var/tmp --path "cache=$WORK/data" --json
python3 -m json.tool "$WORK/out" >/dev/null || fail "env --json is not JSON"
python3 - "$WORK/out" "$WORK/data" <<'PY' || fail "env --json lacks fields"
import json, os, sys
env = json.load(open(sys.argv[1]))
host, paths = env["host"], env["paths"]
for key, kind in [("cpu_model", str), ("cores", int), ("sockets", int), ("numa_nodes", int),
                  ("memory_total_bytes", int), ("memory_available_bytes", int), ("kernel", str),
                  ("distribution", str), ("hostname", str), ("instance_type", str), ("gpus", list)]:
    assert isinstance(host[key], kind), (key, host[key])
assert set(paths) == {"path1", "cache"}, paths
p = paths["path1"]
assert p["requested"] == "/var/tmp" and p["resolved"] == os.path.realpath("/var/tmp"), p
for key in ["fs_type", "mount_point", "mount_source", "mount_options", "device"]:
    assert isinstance(p[key], str), key
assert p["fs_type"], p
assert isinstance(p["device_info"], dict) and isinstance(p["same_device_as"], list)
c = paths["cache"]
assert c["resolved"] == os.path.realpath(sys.argv[2]), c
# Both on one file system when the work folder is under /var/tmp.
if os.stat("/var/tmp").st_dev == os.stat(sys.argv[2]).st_dev:
    assert c["same_device_as"] == ["path1"], c
PY

# The text form: host lines, one line per path, the same-device warning where it applies.
expect_exit 0 "$FEEDBENCH" env --path "source=$WORK/data" --path "cache=$WORK/data"
expect_in "$WORK/out" "cpu "
expect_in "$WORK/out" "memory "
expect_in "$WORK/out" "source  "
expect_in "$WORK/out" "warning: source and cache are on the same device"

expect_exit 0 "$FEEDBENCH" env --help
expect_in "$WORK/out" "usage: feedbench env"

expect_exit 2 "$FEEDBENCH" env --no-such-option
expect_in "$WORK/err" "no-such-option"
expect_exit 2 "$FEEDBENCH" env --path "$WORK/missing"
expect_in "$WORK/err" "$WORK/missing"
expect_exit 2 "$FEEDBENCH" env --path "a=$WORK" --path "a=$WORK/data"
echo "PASS"
