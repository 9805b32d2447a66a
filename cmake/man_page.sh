#!/usr/bin/env bash
# Writes a man page from the --help text the binary prints (help2man), so the page and the
# options cannot drift apart. Run by the build (CMakeLists.txt, feedbench_man).
#   cmake/man_page.sh FEEDBENCH VERSION OUT          feedbench(1)
#   cmake/man_page.sh FEEDBENCH VERSION OUT VERB     feedbench-VERB(1), its NAME line the
#                                                    verb's summary from `feedbench --help`
set -euo pipefail
fb=$1 version=$2 out=$3 verb=${4:-}
mkdir -p "$(dirname "$out")"
if [ -z "$verb" ]; then
  exec help2man --no-info --version-string="$version" \
    --name="can this machine's storage feed the GPU, and does a local cache help?" --output="$out" "$fb"
fi
summary=$("$fb" --help | sed -n "s/^  $verb  *//p")
[ -n "$summary" ] || { echo "man_page.sh: feedbench --help lists no verb '$verb'" >&2; exit 1; }
# help2man names a page after the program it runs: a stand-in named feedbench-VERB that runs
# `feedbench VERB`.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
printf '#!/bin/sh\nexec %q %q "$@"\n' "$fb" "$verb" >"$bin/feedbench-$verb"
chmod +x "$bin/feedbench-$verb"
help2man --no-info --version-string="$version" --name="$summary" --output="$out" "$bin/feedbench-$verb"
