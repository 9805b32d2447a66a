# When to clean a cache: verify (and run's refusal) name what is stale (cache copies changed or
# missing, source files changed or removed, a manifest older than the source, another label)
# and print a command that, run as printed, makes the check pass; stage --evict and verify say
# how much of the cache is resident in the page cache now.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 8 --file-size 32KiB --layout flat --seed 3 >/dev/null
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --label v1 >/dev/null 2>&1 || fail "stage"

# printed_command FILE: the first `...` in FILE, feedbench replaced by the binary under test.
printed_command() {
  grep -o '`[^`]*`' "$1" | head -1 | tr -d '`' | sed "s|feedbench stage |\"\$FEEDBENCH\" stage |"
}
fix_with_printed_command() {  # FILE: runs its printed command, which must succeed
  local cmd; cmd=$(printed_command "$1")
  [ -n "$cmd" ] || { cat "$1"; fail "no command printed in $1"; }
  expect_exit 0 eval "$cmd"
}

expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src"
expect_in "$WORK/out" "cache: label v1, every file, staged "
expect_in "$WORK/out" "resident in the page cache now: "

# stage --evict on a staged cache: nothing of it stays resident.
cat "$WORK"/cache/*.bin >/dev/null 2>&1 || cat "$WORK"/cache/* >/dev/null
expect_exit 0 "$FEEDBENCH" stage --evict --to "$WORK/cache"
expect_in "$WORK/out" "evicted: "
expect_in "$WORK/out" "now (0.0%"
expect_exit 0 "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --label v1 --evict
expect_in "$WORK/out" "now (0.0%"

# Another label than expected.
expect_exit 1 "$FEEDBENCH" verify --cache "$WORK/cache" --label v2
expect_in "$WORK/out" "stale: label mismatch: the cache holds \"v1\", expected \"v2\""
fix_with_printed_command "$WORK/out"
expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/cache" --label v2

# A source file modified after staging (same size): stale, and the command restages it.
f=$(ls "$WORK/src" | head -1)
sleep 1.1
printf 'Z' | dd of="$WORK/src/$f" bs=1 seek=10 conv=notrunc status=none
expect_exit 1 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src"
expect_in "$WORK/out" "stale: manifest older than the source: 1 source file was modified after the manifest was written"
expect_in "$WORK/out" "stale: source files changed since staging: 1 changed, 0 added, 0 removed"
fix_with_printed_command "$WORK/out"
expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src" --label v2

# A cache copy edited in place, size and mtime kept: stage alone would skip it.
g=$(ls "$WORK/cache" | grep -v -e MANIFEST -e feedbench | head -1)
printf 'Q' | dd of="$WORK/cache/$g" bs=1 seek=20 conv=notrunc status=none
touch -r "$WORK/src/$g" "$WORK/cache/$g"
expect_exit 1 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src"
expect_in "$WORK/out" "stale: cache copies: 0 missing, 1 whose content no longer matches the manifest"
fix_with_printed_command "$WORK/out"
expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src"

# A source file removed: the command prunes its copy.
rm "$WORK/src/$f"
expect_exit 1 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src"
expect_in "$WORK/out" "0 added, 1 removed"
fix_with_printed_command "$WORK/out"
expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src"

# run's refusal of a cache missing a listed file names it and fixes it as printed.
cat > "$WORK/c.json" <<JSON
{"name": "c", "dataset": {"source": "$WORK/src", "cache": "$WORK/cache"},
 "defaults": {"repetitions": 1},
 "families": [{"family": "file_read", "pattern": "sequential", "block_size": "32KiB",
               "workers": 1, "cache_state": "warm", "path": "cache"}]}
JSON
h=$(ls "$WORK/cache" | grep -v -e MANIFEST -e feedbench | tail -1)
rm "$WORK/cache/$h"
expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --dry-run
expect_in "$WORK/err" "missing from the cache: $h"
fix_with_printed_command "$WORK/err"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --dry-run
echo ok
