# Every file a cache's manifest names lies beneath the cache (issue 30): a MANIFEST.sha256
# line naming '../outside.txt', an absolute path, or a path through a symlinked folder that
# leads out of the cache is never opened. The first two are refused when the manifest is read
# (one error naming the manifest file and line: exit 2), by verify, run, stage over the cache
# and gen --like alike; the third is refused when the file is opened (no symlink on the way),
# with openat2(2) and with the component walk that stands in where the kernel lacks it. And
# the manifest files themselves are read from inside the cache: not through a symlink, and a
# FIFO in their place is refused, not waited on.
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

"$FEEDBENCH" gen --out "$WORK/src" --files 6 --file-size 16KiB --layout classes --classes 2 --seed 3 >/dev/null
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" >/dev/null 2>&1 || fail "stage"
C=$WORK/cache
cp -a "$C" "$WORK/cache.good"
restore_cache() { rm -rf "$C"; cp -a "$WORK/cache.good" "$C"; }
first=class_000/img_000000.bin

# What lies outside the cache: a file beside it, and a folder holding a copy of a cached file
# (same bytes, so a hash through a link would match the manifest's).
echo outside >"$WORK/outside.txt"
mkdir "$WORK/outdir"
cp "$C/$first" "$WORK/outdir/img.bin"
outside_before=$(cat "$WORK/outside.txt"; tree_digest "$WORK/outdir")
check_outside() {
  [ "$(cat "$WORK/outside.txt"; tree_digest "$WORK/outdir")" = "$outside_before" ] ||
    fail "a file outside the cache changed ($1)"
}

# add_entry PATH FILE: appends "<sha256 of FILE>  PATH" to the cache's MANIFEST.sha256 (line 7)
# and updates feedbench-manifest.json to match, as a hand edit that knows the format would.
add_entry() {
  python3 - "$C" "$1" "$2" <<'PY'
import hashlib, json, sys
cache, path, data = sys.argv[1:4]
sha = hashlib.sha256(open(data, "rb").read()).hexdigest()
sums = open(cache + "/MANIFEST.sha256", "rb").read() + (sha + "  " + path + "\n").encode()
open(cache + "/MANIFEST.sha256", "wb").write(sums)
j = json.load(open(cache + "/feedbench-manifest.json"))
j["files"] += 1
j["sums_sha256"] = hashlib.sha256(sums).hexdigest()
json.dump(j, open(cache + "/feedbench-manifest.json", "w"), indent=2)
PY
}

cat >"$WORK/c.json" <<JSON
{
  "name": "e2e-beneath",
  "dataset": {"source": "$WORK/src", "cache": "$C"},
  "defaults": {"repetitions": 1, "seed": 5, "engine": "psync"},
  "families": [
    {"family": "file_read", "pattern": "sequential", "block_size": "16KiB", "cache_state": "warm",
     "path": ["cache"]}
  ]
}
JSON

# 1. '..' and an absolute path: refused as the manifest is read, naming the file and the line.
for bad in "../outside.txt" "$WORK/outside.txt" "$first/../../../outside.txt"; do
  case $bad in
  /*) why="is absolute" ;;
  *) why="has a '..' component" ;;
  esac
  line="$C/MANIFEST.sha256: line 7: the path '$bad' $why"
  restore_cache
  add_entry "$bad" "$WORK/outside.txt"

  expect_exit 2 "$FEEDBENCH" verify --cache "$C"
  expect_in "$WORK/err" "$line"
  grep -q verified "$WORK/out" && fail "verify said verified with $bad in the manifest"
  [ "$(wc -l <"$WORK/err")" = 1 ] || fail "verify: more than one line: $(cat "$WORK/err")"

  expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json"
  expect_in "$WORK/err" "$line"
  [ ! -e "$WORK/r.json" ] || fail "run wrote a result for a cache naming $bad"

  expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --verify-cache \
    --allow-unverified-cache
  python3 - "$WORK/r.json" "$line" <<'PY' || fail "run --allow-unverified-cache: the verification record"
import json, sys
v = json.load(open(sys.argv[1]))["dataset"]["cache"]["verification"]
assert v["ok"] is False and v["files_checked"] == 0 and any(sys.argv[2] in p for p in v["problems"]), v
PY
  rm -f "$WORK/r.json"

  expect_exit 2 "$FEEDBENCH" stage --from "$WORK/src" --to "$C"
  expect_in "$WORK/err" "is not empty and is not a feedbench cache"
  expect_in "$WORK/err" "$line"

  restore_cache  # (a stage that took the cache as its own would have rewritten the manifest)
  add_entry "$bad" "$WORK/outside.txt"
  expect_exit 2 "$FEEDBENCH" gen --out "$WORK/g" --like "$C/MANIFEST.sha256"
  expect_in "$WORK/err" "$line"
  [ ! -e "$WORK/g" ] || fail "gen --like wrote a data set from a manifest naming $bad"
  check_outside "$bad"
done

# 2. A symlinked folder inside the cache that leads out of it: the manifest line is well formed,
#    the open refuses the link (openat2 where the kernel has it, and the walk forced).
for method in auto walk; do
  export FEEDBENCH_OPEN_BENEATH=$method
  restore_cache
  ln -s "$WORK/outdir" "$C/link"
  add_entry link/img.bin "$WORK/outdir/img.bin"
  expect_exit 1 "$FEEDBENCH" verify --cache "$C"
  expect_in "$WORK/out" "$C/link/img.bin: a symbolic link on the way"
  expect_in "$WORK/out" "MISMATCH"
  grep -q "^verified" "$WORK/out" && fail "verify ($method) read a file through a link out of the cache"

  # run re-hashing it: refused, the verification names the link; measured anyway when asked.
  expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --verify-cache
  expect_in "$WORK/err" "missing from the cache: link/img.bin"
  expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --verify-cache \
    --allow-unverified-cache
  python3 - "$WORK/r.json" "$C/link/img.bin: a symbolic link on the way" <<'PY' ||
import json, sys
v = json.load(open(sys.argv[1]))["dataset"]["cache"]["verification"]
assert v["ok"] is False and any(sys.argv[2] in p for p in v["problems"]), v
PY
    fail "run --verify-cache ($method): the verification record"
  rm -f "$WORK/r.json"

  # gen --like takes sizes from the cache's scan, which never follows a link: refused.
  expect_exit 2 "$FEEDBENCH" gen --out "$WORK/g" --like "$C/MANIFEST.sha256"
  expect_in "$WORK/err" "(first: link/img.bin)"

  # Staging over it: the link is not the selection's, so it is left alone, never followed.
  expect_exit 0 "$FEEDBENCH" stage --from "$WORK/src" --to "$C"
  [ -L "$C/link" ] || fail "stage removed a symlink it did not write"
  grep -q "link/" "$C/MANIFEST.sha256" && fail "stage kept the link's line in its new manifest"
  check_outside "link ($method)"
done
unset FEEDBENCH_OPEN_BENEATH

# 3. The manifest files themselves: read from inside the cache, never through a symlink out of
#    it (here: a copy of the cache's files whose manifest links to the good cache's).
rm -rf "$WORK/linked"
mkdir "$WORK/linked"
cp -a "$WORK/cache.good/class_000" "$WORK/cache.good/class_001" "$WORK/linked/"
for name in MANIFEST.sha256 feedbench-manifest.json; do ln -s "$WORK/cache.good/$name" "$WORK/linked/$name"; done
expect_exit 2 "$FEEDBENCH" verify --cache "$WORK/linked"
expect_in "$WORK/err" "$WORK/linked/feedbench-manifest.json is a symbolic link"
#    A FIFO where the manifest goes: refused at once, not waited on for ever.
restore_cache
rm "$C/MANIFEST.sha256"
mkfifo "$C/MANIFEST.sha256"
expect_exit 2 timeout -k 5 60 "$FEEDBENCH" verify --cache "$C"
expect_in "$WORK/err" "$C/MANIFEST.sha256 is a FIFO, not a regular file"

check_outside "the end"
echo "cache beneath: ok"
