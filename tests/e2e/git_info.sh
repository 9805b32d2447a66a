# End to end: the git commit a binary records is read at every build, not once at configure
# time. cmake/git_info.cmake on a repository of the test's own: a new commit changes the
# header, a rerun without one leaves it untouched (nothing recompiles), a change to a tracked
# file marks it dirty.
source "$(dirname "$0")/lib.bash"
command -v git >/dev/null || skip "git is not installed"

repo=$WORK/repo
header=$WORK/out/git_info.h
mkdir -p "$repo" "$WORK/out"
git -C "$repo" init -q
git -C "$repo" -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
info() { cmake -DSOURCE_DIR="$repo" -DOUTPUT="$header" -P "$FEEDBENCH_SOURCE_DIR/cmake/git_info.cmake"; }

info
first=$(git -C "$repo" rev-parse HEAD)
expect_in "$header" "kGitCommit = \"$first\";"
expect_in "$header" "kGitDirty = false;"

# The same commit: the header keeps its time stamp, so nothing that includes it rebuilds.
touch -d '2000-01-01' "$header"
info
[ "$(stat -c %Y "$header")" = "$(date -d '2000-01-01' +%s)" ] || fail "an unchanged commit rewrote the header"

# A new commit (what an incremental build after 'git commit' sees).
echo a >"$repo/f"
git -C "$repo" add f
git -C "$repo" -c user.name=t -c user.email=t@t commit -q -m two
info
second=$(git -C "$repo" rev-parse HEAD)
[ "$first" != "$second" ] || fail "no second commit"
expect_in "$header" "kGitCommit = \"$second\";"

# A tracked file changed and not committed.
echo b >"$repo/f"
info
expect_in "$header" "kGitDirty = true;"
echo "ok: the header follows the commit and is rewritten only when it changes"
