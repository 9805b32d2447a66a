# feedbench stage removes only what it provably wrote: a folder is a cache only with our JSON
# manifest (or the journal of our interrupted stage); aliases of the source (symlink, bind
# mount) are the same folder; a selection of nothing, or one that would remove more than a
# tenth of a cache, is refused; long and escaped names stage and pass `sha256sum -c`; what is
# left out is named.
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

SRC=$WORK/src
mkdir -p "$SRC/val" "$SRC/train"
for i in $(seq 1 20); do head -c $((i * 500)) /dev/urandom >"$SRC/val/v_$i.bin"; done
for i in 1 2; do head -c 3000 /dev/urandom >"$SRC/train/t_$i.bin"; done
before=$(tree_digest "$SRC")
check_source() { [ "$(tree_digest "$SRC")" = "$before" ] || fail "the source tree changed ($1)"; }

# 1. A folder holding a MANIFEST.sha256 is not a cache: refused, nothing removed.
H=$WORK/home
mkdir -p "$H/photos"
echo "keep me" >"$H/notes.txt"
echo "meow" >"$H/photos/cat.jpg"
(cd "$H" && sha256sum notes.txt >MANIFEST.sha256)
home_before=$(tree_digest "$H")
expect_exit 2 "$FEEDBENCH" stage --from "$SRC" --to "$H"
expect_in "$WORK/err" "is not a feedbench cache"
expect_in "$WORK/err" "--force"
[ "$(tree_digest "$H")" = "$home_before" ] || fail "a folder that is not a cache was changed"
# --force does not take over the user's MANIFEST.sha256 either.
expect_exit 2 "$FEEDBENCH" stage --from "$SRC" --to "$H" --force
expect_in "$WORK/err" "MANIFEST.sha256"
[ "$(tree_digest "$H")" = "$home_before" ] || fail "--force changed a folder it refused"
# Without it, --force stages beside the user's files and later removes only its own.
rm "$H/MANIFEST.sha256"
home_before=$(tree_digest "$H")
expect_exit 0 "$FEEDBENCH" stage --from "$SRC" --to "$H" --force
expect_exit 0 "$FEEDBENCH" stage --from "$SRC" --to "$H" --include 'train/**' --prune
expect_in "$WORK/out" "removed 20"
expect_in "$WORK/err" "note: left alone 2 files feedbench did not write"
[ "$(cd "$H" && tree_digest . | grep -c -e notes.txt -e cat.jpg)" = 2 ] || fail "--force removed the user's files"
(cd "$H" && sha256sum --quiet -c MANIFEST.sha256) || fail "sha256sum -c in a forced cache"

# 2. Aliases of the source are the same folder.
ln -s "$SRC" "$WORK/alias"
expect_exit 2 "$FEEDBENCH" stage --from "$SRC/val" --to "$WORK/alias" --force --prune
expect_exit 2 "$FEEDBENCH" stage --from "$SRC" --to "$WORK/alias/val/cache"
expect_exit 2 "$FEEDBENCH" stage --from "$WORK/alias/val" --to "$SRC" --force --prune
check_source "symlink alias"
mkdir -p "$WORK/mnt"
if mount --bind "$SRC" "$WORK/mnt" 2>"$WORK/mount_err"; then
  trap 'umount "$WORK/mnt" 2>/dev/null || true; rm -rf "$WORK"' EXIT
  expect_exit 2 "$FEEDBENCH" stage --from "$SRC/val" --to "$WORK/mnt" --force --prune
  expect_in "$WORK/err" "is inside the cache"
  expect_exit 2 "$FEEDBENCH" stage --from "$SRC" --to "$WORK/mnt/val/cache"
  umount "$WORK/mnt"
  trap 'rm -rf "$WORK"' EXIT
  check_source "bind mount"
else
  echo "sub-case skipped: mount --bind failed ($(cat "$WORK/mount_err")): needs privileges"
fi

# 3. A selection of nothing never empties a cache; large removals need --prune.
C=$WORK/cache
expect_exit 0 "$FEEDBENCH" stage --from "$SRC" --to "$C"
cache_before=$(tree_digest "$C")
expect_exit 2 "$FEEDBENCH" stage --from "$SRC" --to "$C" --include 'vla/**'
expect_in "$WORK/err" "'vla/**'"
[ "$(tree_digest "$C")" = "$cache_before" ] || fail "a selection of nothing changed the cache"
expect_exit 2 "$FEEDBENCH" stage --from "$SRC" --to "$C" --include 'val/v_1*.bin'
expect_in "$WORK/err" "11 of 22"
expect_in "$WORK/err" "--prune"
[ "$(tree_digest "$C")" = "$cache_before" ] || fail "a refused removal changed the cache"
expect_exit 0 "$FEEDBENCH" stage --from "$SRC" --to "$C" --include 'val/**'  # 2 of 22: fine
expect_in "$WORK/out" "removed 2"

# 4. A 255-byte name and names sha256sum escapes.
N=$WORK/names
mkdir -p "$N/d"
long=$(printf 'n%.0s' $(seq 1 255))
echo long >"$N/d/$long"
echo back >"$N/d/back\\slash"
echo new >"$N/d/new"$'\n'"line"
echo cr >"$N/d/carriage"$'\r'"return"
echo end >"$N/d/ends with"$'\r'
expect_exit 0 "$FEEDBENCH" stage --from "$N" --to "$WORK/ncache"
expect_in "$WORK/out" "copied 5"
(cd "$WORK/ncache" && sha256sum --quiet -c MANIFEST.sha256) || fail "sha256sum -c rejected escaped names"
expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/ncache" --source "$N"

# 5. What is left out is named in one note.
mkfifo "$N/d/a.fifo"
echo x >"$N/d/old.fbtmp"
expect_exit 0 "$FEEDBENCH" stage --from "$N" --to "$WORK/ncache2"
expect_in "$WORK/err" "note: left out 2 entries"
expect_in "$WORK/err" "d/a.fifo (FIFO)"
expect_in "$WORK/err" "d/old.fbtmp"

check_source "the end"
echo "PASS"
