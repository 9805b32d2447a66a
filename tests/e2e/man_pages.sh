# Man pages: the build writes feedbench(1) and feedbench-<verb>(1) from the binary's own --help
# (help2man), one for every verb `feedbench --help` lists; an install puts them where man finds
# them, and `man feedbench-run` shows run's options.
source "$(dirname "$0")/lib.bash"

build=$(dirname "$FEEDBENCH")
command -v help2man >/dev/null || skip "no help2man (tools/install-deps installs it): no man pages built"
[ -d "$build/man" ] || skip "no man pages in $build/man: the build ran without its default target"

# Every verb the binary lists has its page, and every page names its verb's own options.
expect_exit 0 "$FEEDBENCH" --help
verbs=$(sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' "$WORK/out")
[ -n "$verbs" ] || fail "feedbench --help lists no verbs"
[ -f "$build/man/feedbench.1" ] || fail "no feedbench.1"
for verb in $verbs; do
  page=$build/man/feedbench-$verb.1
  [ -f "$page" ] || fail "feedbench --help lists '$verb' but there is no $page"
  # The page's first option is the first one --help prints for the verb.
  "$FEEDBENCH" "$verb" --help >"$WORK/help" 2>&1 || true
  first=$(grep -o -m1 -- '--[a-z][a-z-]*' "$WORK/help" || true)
  [ -z "$first" ] || grep -qF -- "${first//-/\\-}" "$page" || grep -qF -- "$first" "$page" ||
    fail "$page does not hold $first, which 'feedbench $verb --help' prints"
done

# Installed, `man feedbench-run` finds and renders the page.
command -v man >/dev/null || skip "no man (install man-db) to read the installed page"
cmake --install "$build" --prefix "$WORK/prefix" >/dev/null || fail "cmake --install failed"
[ -x "$WORK/prefix/bin/feedbench" ] || fail "the install has no bin/feedbench"
MANPATH=$WORK/prefix/share/man MANWIDTH=100 man feedbench-run >"$WORK/man" 2>"$WORK/man.err" ||
  { cat "$WORK/man.err"; fail "man feedbench-run failed after the install"; }
expect_in "$WORK/man" "--config"
expect_in "$WORK/man" "feedbench-run"
echo "ok: man pages for: $verbs"
