# `verify --source` says which fingerprint it checked: the manifest's metadata one (names,
# sizes, mtimes) cannot see a source edit that kept size and mtime; --fingerprint content
# compares sampled blocks of each source file with its cached copy and can.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 8 --file-size 64KiB --layout flat --seed 2 >/dev/null
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" >/dev/null 2>&1 || fail "stage"
f=$(cd "$WORK/src" && find . -type f | sort | head -1 | cut -c3-)

expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src" --fingerprint content
expect_in "$WORK/out" "source matches the manifest's metadata fingerprint (names, sizes, mtimes) and the cache's sampled content"

# Edit a sampled block (the middle 4 KiB of a 64 KiB file starts at 32 KiB), keep size and mtime.
printf 'X' | dd of="$WORK/src/$f" bs=1 seek=33000 conv=notrunc status=none
touch -r "$WORK/cache/$f" "$WORK/src/$f"
expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src"
expect_in "$WORK/out" "source matches the manifest's metadata fingerprint (names, sizes, mtimes; --fingerprint content also compares contents)"
expect_exit 1 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src" --fingerprint content
expect_in "$WORK/out" "source  content differs from the cached copy: $f"
expect_in "$WORK/out" "MISMATCH"

expect_exit 2 "$FEEDBENCH" verify --cache "$WORK/cache" --fingerprint content
expect_in "$WORK/err" "give --source"
expect_exit 2 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src" --fingerprint sha1
expect_in "$WORK/err" "--fingerprint: expected metadata or content"
echo ok
