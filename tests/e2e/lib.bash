# Shared by the end-to-end tests (tests/e2e/*.sh): each sources this file.
# $FEEDBENCH is the built binary, $FEEDBENCH_SOURCE_DIR the repository (set by CTest).
set -euo pipefail
: "${FEEDBENCH:?set by ctest: path of the built feedbench}"
: "${FEEDBENCH_SOURCE_DIR:?set by ctest: the repository root}"

# A work folder on a disk-backed file system (O_DIRECT and eviction need a real one).
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/feedbench-e2e-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

# expect_exit CODE CMD...: runs CMD, fails unless it exits with CODE. Output in $WORK/out, $WORK/err.
expect_exit() {
  local want=$1; shift
  local got=0
  "$@" >"$WORK/out" 2>"$WORK/err" || got=$?
  if [ "$got" != "$want" ]; then
    echo "--- stdout"; cat "$WORK/out"; echo "--- stderr"; cat "$WORK/err"
    fail "expected exit $want, got $got: $*"
  fi
}

# expect_in FILE TEXT: fails unless FILE contains TEXT (fixed string), also where the console
# wrapped it at 120 columns (a line broken at a space, continued on an indented line).
expect_in() {
  grep -qF -- "$2" "$1" && return 0
  unwrapped "$1" | grep -qF -- "$2" && return 0
  echo "--- $1"; cat "$1"; fail "expected '$2' in $1"
}

# unwrapped FILE: FILE with each line the console wrapped at 120 columns joined again (a line
# broken at a space goes on, indented, on the next), for a grep of one sentence.
unwrapped() {
  python3 -c 'import re, sys; sys.stdout.write(re.sub(r"\n +", " ", open(sys.argv[1], errors="replace").read()))' "$1"
}

# tree_digest DIR: one line per file (path, size, sha256), to prove a tree did not change.
tree_digest() {
  (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

# require_mpirun: skips unless mpirun is here; sets MPIRUN to start ranks on this machine
# (more ranks than cores; as root where tests run as root). Ranks of an ASan build keep the
# MPI library's allocations, which LeakSanitizer would report at exit.
require_mpirun() {
  command -v mpirun >/dev/null || skip "no mpirun (install openmpi-bin: tools/install-deps)"
  MPIRUN=(mpirun --oversubscribe)
  [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
  export OMPI_MCA_btl_vader_single_copy_mechanism=none  # containers may refuse CMA
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
}

# expect_regression REFRESH CMD...: CMD (feedbench diff, or a tool that ends in one) must exit 1,
# a regression. On this shared 2-core machine a side's repetitions sometimes spread so widely
# (a disk stall, another test's run beside it: CVs of 35% and 52% were seen) that the gate
# rightly calls even a 2-3x change noisy ("noisy (spread ..."). That is a fair verdict, not a
# gate fault, so it gets one more try: REFRESH (a function) measures the sides again, and CMD
# must then exit 1. A gate that misses the change misses it twice. Output in $WORK/out, err.
expect_regression() {
  local refresh=$1
  shift
  local rc=0
  "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  if [ "$rc" = 0 ] && grep -qE " noisy \(" "$WORK/out"; then
    echo "judged noisy (a spread on this machine explains the change); measuring again:"
    cat "$WORK/out"
    "$refresh"
    rc=0
    "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  fi
  if [ "$rc" != 1 ]; then
    echo "--- stdout"; cat "$WORK/out"; echo "--- stderr"; cat "$WORK/err"
    fail "expected exit 1 (a regression), got $rc: $*"
  fi
}
