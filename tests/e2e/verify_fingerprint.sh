# `verify --source` says which fingerprint it checked: the manifest's metadata one (names,
# sizes, mtimes) cannot see a source edit that kept size and mtime; --fingerprint content
# compares sampled blocks of each source file with its cached copy and sees an edit in a
# sample; --fingerprint full re-hashes every byte against the manifest's SHA-256 and sees any.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 8 --file-size 64KiB --layout flat --seed 2 >/dev/null
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" >/dev/null 2>&1 || fail "stage"
f=$(cd "$WORK/src" && find . -type f | sort | head -1 | cut -c3-)

expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src" --fingerprint content
expect_in "$WORK/out" "source matches the manifest's metadata fingerprint (names, sizes, mtimes) and the cache's sampled content"
expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src" --fingerprint full
expect_in "$WORK/out" "and every byte: 8 files (512 KiB) re-hashed against the manifest's SHA-256"

# An edit between the samples (byte 20,000 of a 64 KiB file: past the first 4 KiB, before the
# middle's at 32 KiB), size and mtime kept: only a full re-hash sees it.
printf 'X' | dd of="$WORK/src/$f" bs=1 seek=20000 conv=notrunc status=none
touch -r "$WORK/cache/$f" "$WORK/src/$f"
expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src" --fingerprint content
expect_in "$WORK/out" "first, middle, last 4 KiB of each file; --fingerprint full compares every byte"
expect_exit 1 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src" --fingerprint full
expect_in "$WORK/out" "source  content differs from the manifest in the source: $f"
expect_in "$WORK/out" "MISMATCH"
# The fix removes the stale copy first (stage would take it as in place: same size and mtime).
expect_in "$WORK/out" "to fix: \`rm -f -- $WORK/cache/$f && "
# sha256sum agrees: the source file no longer has the manifest's hash.
want=$(grep -F "  $f" "$WORK/cache/MANIFEST.sha256" | cut -d' ' -f1)
got=$(sha256sum "$WORK/src/$f" | cut -d' ' -f1)
[ "$want" != "$got" ] || fail "sha256sum sees no change in $f"
# Undone: the file as generated again (gen is deterministic for a seed).
"$FEEDBENCH" gen --out "$WORK/src2" --files 8 --file-size 64KiB --layout flat --seed 2 >/dev/null
cp "$WORK/src2/$f" "$WORK/src/$f"
touch -r "$WORK/cache/$f" "$WORK/src/$f"

# Edit a sampled block (the middle 4 KiB of a 64 KiB file starts at 32 KiB), keep size and mtime.
printf 'X' | dd of="$WORK/src/$f" bs=1 seek=33000 conv=notrunc status=none
touch -r "$WORK/cache/$f" "$WORK/src/$f"
expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src"
expect_in "$WORK/out" "source matches the manifest's metadata fingerprint (names, sizes, mtimes; --fingerprint content samples the contents, full re-hashes them)"
expect_exit 1 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src" --fingerprint content
expect_in "$WORK/out" "source  content differs from the cached copy: $f"
expect_in "$WORK/out" "MISMATCH"
expect_exit 1 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src" --fingerprint full
expect_in "$WORK/out" "source  content differs from the manifest in the source: $f"

expect_exit 2 "$FEEDBENCH" verify --cache "$WORK/cache" --fingerprint content
expect_in "$WORK/err" "give --source"
expect_exit 2 "$FEEDBENCH" verify --cache "$WORK/cache" --fingerprint full
expect_in "$WORK/err" "--fingerprint full: re-hashes the source against the manifest; give --source SRC"
expect_exit 2 "$FEEDBENCH" verify --cache "$WORK/cache" --source "$WORK/src" --fingerprint sha1
expect_in "$WORK/err" "--fingerprint: expected metadata, content or full"
echo ok
