# End to end: tools/check-docs finds a broken link, a broken anchor (its link over a line break),
# a comment naming a file that is not there and one naming a section a page does not have, in a
# repository of the test's own, and nothing else there (a link and an anchor that resolve, a
# placeholder path that matches, a path in a string rather than a comment); then the repository
# itself has none of these problems.
source "$(dirname "$0")/lib.bash"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v git >/dev/null || skip "git is not installed"
git -C "$FEEDBENCH_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1 \
  || skip "$FEEDBENCH_SOURCE_DIR is not a git checkout: check-docs lists files with git ls-files"
check_docs=$FEEDBENCH_SOURCE_DIR/tools/check-docs

repo=$WORK/repo
mkdir -p "$repo/docs" "$repo/harness/io"
cat >"$repo/README.md" <<'EOF'
# The fixture

See [the page](docs/page.md), [its section](docs/page.md#a-section-12) and [this one](#the-fixture).
A [link to nowhere](docs/gone.md), and [an anchor, its text over a line
break](docs/page.md#no-such-section). The code is in `harness/<subsystem>/`.
EOF
cat >"$repo/docs/page.md" <<'EOF'
# A page

## A section (1.2)

Back to the [README](../README.md).
EOF
cat >"$repo/harness/io/engine.cc" <<'EOF'
// The engines: harness/io/engine.cc and harness/io/engines/psync.cc.
const char* kExample = "harness/not/a/comment.h";
// As README.md "The fixture" and docs/page.md "No such section" say.
EOF
git -C "$repo" init -q
git -C "$repo" add -A

expect_exit 1 python3 "$check_docs" --root "$repo"
expect_in "$WORK/out" "README.md:4: link to docs/gone.md: docs/gone.md is not in the repository"
expect_in "$WORK/out" "README.md:5: link to docs/page.md#no-such-section: no heading #no-such-section in docs/page.md"
expect_in "$WORK/out" "harness/io/engine.cc:1: names harness/io/engines/psync.cc, which is not in the repository"
expect_in "$WORK/out" "harness/io/engine.cc:3: names the section \"No such section\" of docs/page.md, which has no such heading"
[ "$(wc -l <"$WORK/out")" = 4 ] || { cat "$WORK/out"; fail "expected exactly the 4 planted problems"; }

# The planted problems mended, nothing is left.
sed -i 's|docs/gone.md|docs/page.md|; s|#no-such-section|#a-page|' "$repo/README.md"
sed -i 's|"No such section"|"A section"|' "$repo/harness/io/engine.cc"
mkdir -p "$repo/harness/io/engines"
echo "// psync" >"$repo/harness/io/engines/psync.cc"    # untracked, not ignored: it counts
expect_exit 0 python3 "$check_docs" --root "$repo"

# The repository's own docs and comments.
cd "$FEEDBENCH_SOURCE_DIR"
expect_exit 0 python3 tools/check-docs
echo "ok: check-docs finds planted broken links and names, and none in the repository"
