# feedbench gen: deterministic, incompressible, refuses a non-empty folder, strict options.
source "$(dirname "$0")/lib.bash"

# Same seed twice: identical trees (names, sizes, bytes).
expect_exit 0 "$FEEDBENCH" gen --out "$WORK/a" --files 60 --file-size 1KiB..64KiB --classes 6 --seed 11
expect_in "$WORK/out" "wrote 60 files"
expect_in "$WORK/out" "in 6 folders to $WORK/a (seed 11)"
expect_exit 0 "$FEEDBENCH" gen --out "$WORK/b" --files 60 --file-size 1KiB..64KiB --classes 6 --seed 11
[ "$(tree_digest "$WORK/a")" = "$(tree_digest "$WORK/b")" ] || fail "same seed gave different trees"
[ "$(find "$WORK/a" -type f | wc -l)" = 60 ] || fail "expected 60 files"
[ -f "$WORK/a/class_005/img_000059.bin" ] || fail "expected class_005/img_000059.bin"
find "$WORK/a" -name '*.fbtmp' | grep -q . && fail "temporaries left behind"

# Another seed: other bytes.
expect_exit 0 "$FEEDBENCH" gen --out "$WORK/c" --files 60 --file-size 1KiB..64KiB --classes 6 --seed 12
[ "$(tree_digest "$WORK/a")" != "$(tree_digest "$WORK/c")" ] || fail "different seeds gave the same tree"

# Incompressible: gzip cannot shrink a file below 99% of its size.
expect_exit 0 "$FEEDBENCH" gen --out "$WORK/flat" --files 2 --file-size 1MiB --layout flat
for f in "$WORK"/flat/file_00000{0,1}.bin; do
  size=$(stat -c %s "$f")
  [ "$size" = 1048576 ] || fail "$f: size $size"
  packed=$(gzip -c "$f" | wc -c)
  [ $((packed * 100)) -ge $((size * 99)) ] || fail "$f compresses to $packed of $size bytes"
done

# Shards: few files of fixed-size records.
expect_exit 0 "$FEEDBENCH" gen --out "$WORK/shards" --files 10 --file-size 4KiB --layout shards --shards 3
expect_in "$WORK/out" "wrote 3 files"
total=$(cat "$WORK"/shards/shard_*.bin | wc -c)
[ "$total" = 40960 ] || fail "shards hold $total bytes, expected 10 records of 4 KiB"

# A non-empty folder is refused unless --force, and nothing is written into it.
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/a" --files 60 --file-size 1KiB --classes 6
expect_in "$WORK/err" "not empty"
expect_in "$WORK/err" "--force"
[ "$(tree_digest "$WORK/a")" = "$(tree_digest "$WORK/b")" ] || fail "refused gen modified the folder"
expect_exit 0 "$FEEDBENCH" gen --out "$WORK/a" --files 60 --file-size 1KiB..64KiB --classes 6 --seed 11 --force
[ "$(tree_digest "$WORK/a")" = "$(tree_digest "$WORK/b")" ] || fail "--force with the same seed changed the tree"

# Bad arguments: exit 2 with a message naming the option.
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/x" --files 10
expect_in "$WORK/err" "--file-size"
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/x" --files ten --file-size 4KiB
expect_in "$WORK/err" "--files"
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/x" --files 10 --file-size 4XB
expect_in "$WORK/err" "--file-size"
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/x" --files 10 --file-size 8KiB..4KiB
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/x" --files 10 --file-size 4KiB --layout tree
expect_in "$WORK/err" "--layout"
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/x" --files 10 --file-size 4KiB --bogus
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/x" --files 10 --file-size 4KiB --fo
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/x" --files 10 --file-size 1KiB..2KiB --layout shards
[ -e "$WORK/x" ] && fail "a refused gen created its folder"

# --help: usage with an example, exit 0.
expect_exit 0 "$FEEDBENCH" gen --help
expect_in "$WORK/out" "feedbench gen --out"
expect_in "$WORK/out" "--layout"

echo "gen: ok"
