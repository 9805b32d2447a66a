# gen --like on a tree the test builds: a skewed size mix in folders of unequal sizes and depths
# (and a FIFO, which a scan that opened files would hang on). At scale 1 and 0.5 the written data
# set has the scaled file count, the folder shape and a size distribution within the stated
# Kolmogorov-Smirnov bound; the real tree is left as it was, its access times included (nothing
# is read); the result of a run on the copy records where its shape came from; bad input is
# refused naming the option, with nothing written.
source "$(dirname "$0")/lib.bash"

real=$WORK/real
python3 - "$real" <<'PY'
import os, random, sys
r = random.Random(11)
root = sys.argv[1]
mix = [("train/cats", 200, 100, 4000), ("train/dogs", 70, 20000, 60000), ("val/deep/er", 25, 100000, 200000),
       ("", 5, 4096, 4096)]
for folder, n, lo, hi in mix:
    os.makedirs(os.path.join(root, folder), exist_ok=True)
    for i in range(n):
        with open(os.path.join(root, folder, "f%03d.dat" % i), "wb") as f:
            f.write(os.urandom(r.randint(lo, hi)))
PY
mkfifo "$real/val/pipe"
before=$(tree_digest "$real")

# Reads of a file with an old access time set a new one here (relatime), unless the mount says
# noatime: then the access-time check proves nothing and is left out.
touch -a -d 2000-01-01 "$real"/train/cats/* "$real"/train/dogs/* "$real"/val/deep/er/* "$real"/*.dat
probe=$WORK/probe; echo x >"$probe"; touch -a -d 2000-01-01 "$probe"; cat "$probe" >/dev/null
atime_checked=$([ "$(stat -c %X "$probe")" != 946684800 ] && echo yes || echo no)

expect_exit 0 "$FEEDBENCH" gen --out "$WORK/g1" --like "$real" --seed 5
expect_in "$WORK/out" "like $real: 300 files"
expect_in "$WORK/out" "wrote 300 files"
expect_in "$WORK/err" "val/pipe (FIFO)"
expect_exit 0 "$FEEDBENCH" gen --out "$WORK/g05" --like "$real" --scale 0.5 --seed 5
expect_in "$WORK/out" "wrote 150 files"
expect_exit 0 "$FEEDBENCH" gen --out "$WORK/g05b" --like "$real" --scale 0.5 --seed 5
if [ "$atime_checked" = yes ]; then
  old=$(find "$real" -type f -exec stat -c %X {} + | sort -u)
  [ "$old" = 946684800 ] || fail "gen --like changed access times of the real tree: $old"
fi

python3 - "$real" "$WORK/g1" "$WORK/g05" <<'PY'
import json, os, sys
def tree(root):
    sizes, folders = [], {}
    for d, _, names in os.walk(root):
        names = [n for n in names if n != "feedbench-gen.json" and os.path.isfile(os.path.join(d, n))]
        if names:
            rel = os.path.relpath(d, root)
            folders[rel] = (0 if rel == "." else rel.count("/") + 1, len(names))
        sizes += [os.path.getsize(os.path.join(d, n)) for n in names]
    return sizes, folders
def ks(a, b):
    a, b = sorted(a), sorted(b)
    i = j = 0; d = 0.0
    while i < len(a) and j < len(b):
        x = min(a[i], b[j])
        while i < len(a) and a[i] == x: i += 1
        while j < len(b) and b[j] == x: j += 1
        d = max(d, abs(i / len(a) - j / len(b)))
    return d
real_sizes, real_folders = tree(sys.argv[1])
assert len(real_sizes) == 300, len(real_sizes)
for out, scale, files, nfolders in ((sys.argv[2], 1.0, 300, 4), (sys.argv[3], 0.5, 150, 2)):
    sizes, folders = tree(out)
    assert len(sizes) == files, (out, len(sizes))
    assert len(folders) == nfolders, (out, folders)
    if scale == 1.0:  # every folder, at its depth, with its files
        assert sorted(folders.values()) == sorted(real_folders.values()), (folders, real_folders)
    else:  # folders sampled from the real ones' depths, at most as deep
        assert max(d for d, _ in folders.values()) <= 3, folders
    # The sampler puts one file in each of n equal strata of the real distribution (within 1/n
    # of it), and that distribution is within about 2/N of the real sizes' (N real files,
    # interpolated between them): D <= 1/n + 3/N, 0.0133 at n = N = 300 and 0.0167 at n = 150.
    # Independent draws from the real sizes would often miss it (their typical D is about
    # 0.87 * sqrt(1/n + 1/N): 0.07 and 0.09 here).
    bound = 1 / files + 3 / len(real_sizes)
    d = ks(real_sizes, sizes)
    assert d <= bound, (scale, d, bound)
    like = json.load(open(os.path.join(out, "feedbench-gen.json")))["like"]
    assert like["files"] == 300 and like["folders"] == 4 and like["max_depth"] == 3, like
    assert like["scale"] == scale and like["bytes"] == sum(real_sizes), like
    assert abs(like["size_ks_statistic"] - d) < 1e-9, (like["size_ks_statistic"], d)
    print("scale %g: %d files in %d folders, KS %.4f (bound %.4f)" % (scale, len(sizes), len(folders), d, bound))
PY
digest_no_record() { (cd "$1" && find . -type f ! -name feedbench-gen.json -print0 | sort -z | xargs -0 sha256sum); }
[ "$(digest_no_record "$WORK/g05")" = "$(digest_no_record "$WORK/g05b")" ] || fail "the same seed wrote another data set"

# A run on the copy records the distribution it came from.
cat >"$WORK/c.json" <<JSON
{"name": "like", "dataset": {"source": "$WORK/g05"}, "defaults": {"repetitions": 1},
 "families": [{"family": "file_read", "pattern": "sequential", "block_size": "64KiB", "workers": 1,
               "cache_state": "warm", "path": "source"}]}
JSON
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --quiet
python3 - "$WORK/r.json" "$real" <<'PY'
import json, sys
like = json.load(open(sys.argv[1]))["dataset"]["source"]["generated_like"]
assert like["path"] == sys.argv[2] and like["scale"] == 0.5 and like["files"] == 300, like
assert set(like["size_quantiles"]) >= {"min", "p50", "p99", "max"}, like
PY

# Bad input: one error naming the option, exit 2, nothing written.
mkdir -p "$WORK/empty/sub"
for args in "--like $WORK/missing|--like '$WORK/missing': No such file or directory" \
            "--like $WORK/empty|holds no files" \
            "--like $real --scale 0|--scale: expected a number above 0 and at most 1" \
            "--like $real --scale abc|--scale: expected a number above 0 and at most 1" \
            "--like $real --scale 2|--scale: expected a number above 0 and at most 1" \
            "--like $real --scale 0.5 --files 10|--files: not with --like" \
            "--like $real --file-size 4KiB|--file-size: not with --like" \
            "--scale 0.5 --files 10 --file-size 4KiB|--scale: only with --like" \
            "--like $real/f000.dat|expected a folder, a stage manifest"; do
  expect_exit 2 "$FEEDBENCH" gen --out "$WORK/bad" ${args%%|*}
  expect_in "$WORK/err" "${args#*|}"
  [ ! -e "$WORK/bad" ] || fail "gen ${args%%|*} wrote $WORK/bad"
done
expect_exit 2 "$FEEDBENCH" gen --out "$real/copy" --like "$real"
expect_in "$WORK/err" "inside the --like data set"

# A stage manifest: the files it lists, with their sizes in its cache folder.
expect_exit 0 "$FEEDBENCH" stage --from "$real" --to "$WORK/cache" --include 'train/**'
expect_exit 0 "$FEEDBENCH" gen --out "$WORK/gm" --like "$WORK/cache/feedbench-manifest.json" --scale 0.5
expect_in "$WORK/out" "270 files"
expect_in "$WORK/out" "wrote 135 files"
rm "$WORK/cache/train/cats/f000.dat"
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/bad" --like "$WORK/cache/MANIFEST.sha256"
expect_in "$WORK/err" "1 of the 270 files it lists are not in $WORK/cache (first: train/cats/f000.dat)"
[ ! -e "$WORK/bad" ] || fail "wrote $WORK/bad"

[ "$before" = "$(tree_digest "$real")" ] || fail "the real data set changed"
echo ok
