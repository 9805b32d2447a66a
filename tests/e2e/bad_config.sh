#!/usr/bin/env bash
# Bad configs: `feedbench run` exits 2 with one line naming the file and the JSON pointer,
# having run nothing and written nothing.
source "$(dirname "$0")/lib.bash"

# The runs below start in an empty folder: make a relative $FEEDBENCH absolute first.
FEEDBENCH=$(realpath "$FEEDBENCH")
mkdir -p "$WORK/source" "$WORK/cwd"
unset FEEDBENCH_E2E_UNSET_VAR

# bad_case NAME EXPECTED-TEXT [run options...] < config text (@SRC@ = a real source folder):
# writes $WORK/NAME.json, runs it from an empty folder, expects exit 2 and
# "$WORK/NAME.json: EXPECTED-TEXT" on stderr, and nothing written.
bad_case() {
  local name=$1 expected=$2; shift 2
  local cfg="$WORK/$name.json"
  sed "s|@SRC@|$WORK/source|g" >"$cfg"
  (cd "$WORK/cwd" && expect_exit 2 "$FEEDBENCH" run --config "$cfg" "$@")
  expect_in "$WORK/err" "$cfg: $expected"
  [ "$(wc -l <"$WORK/err")" -le 2 ] || { cat "$WORK/err"; fail "$name: expected a one-line message"; }
  [ -z "$(ls -A "$WORK/cwd")" ] || { ls -la "$WORK/cwd"; fail "$name: a bad config wrote files"; }
  echo "ok: $name"
}

bad_case unknown_key '/families/0/blok_size: expected one of the keys allowed in a file_read family' <<'JSON'
{"name": "t", "dataset": {"source": "@SRC@"}, "families": [{"family": "file_read", "blok_size": "4KiB"}]}
JSON

bad_case unknown_family '/families/0/family: expected one of "file_read", "loader", "replay", "stage", "checkpoint", got "file_reed"' <<'JSON'
{"name": "t", "dataset": {"source": "@SRC@"}, "families": [{"family": "file_reed"}]}
JSON

bad_case wrong_type '/families/0/workers: expected an integer from 1 to 1024, or a non-empty list of them (a sweep), got "four"' <<'JSON'
{"name": "t", "dataset": {"source": "@SRC@"}, "families": [{"family": "file_read", "workers": "four"}]}
JSON

bad_case bad_unit '/families/0/block_size/1: expected a size such as 4KiB, 1MiB or 4096 (bytes), got "4XB"' <<'JSON'
{"name": "t", "dataset": {"source": "@SRC@"}, "families": [{"family": "file_read", "block_size": ["4KiB", "4XB"]}]}
JSON

bad_case empty_sweep '/families/0/workers: expected an integer from 1 to 1024, or a non-empty list of them (a sweep); an empty sweep runs nothing, got []' <<'JSON'
{"name": "t", "dataset": {"source": "@SRC@"}, "families": [{"family": "file_read", "workers": []}]}
JSON

bad_case missing_source "/dataset/source: $WORK/no-such-folder does not exist" <<JSON
{"name": "t", "dataset": {"source": "$WORK/no-such-folder"}, "families": [{"family": "file_read"}]}
JSON

bad_case missing_required '/dataset/source: expected a non-empty string (required), got nothing' <<'JSON'
{"name": "t", "dataset": {}, "families": [{"family": "file_read"}]}
JSON

bad_case unset_variable '/dataset/source: expected environment variable FEEDBENCH_E2E_UNSET_VAR to be set' <<'JSON'
{"name": "t", "dataset": {"source": "${FEEDBENCH_E2E_UNSET_VAR}/data"}, "families": [{"family": "file_read"}]}
JSON

bad_case malformed_json 'line 3, column 14: expected valid JSON' <<'JSON'
{
  "name": "t",
  "dataset": }
JSON

bad_case cache_without_root '/families/0/path: expected dataset.cache (or --cache) for path "cache"' <<'JSON'
{"name": "t", "dataset": {"source": "@SRC@"}, "families": [{"family": "file_read", "path": "cache"}]}
JSON

bad_case nothing_can_run '/families: expected at least one case that can run, got none (file_read/pattern:sequential/bs:1048576/engine:libaio/qd:1/workers:1/state:cold/path:source: libaio reads only with O_DIRECT' <<'JSON'
{"name": "t", "dataset": {"source": "@SRC@"}, "families": [{"family": "file_read", "engine": "libaio"}]}
JSON

bad_case source_override "/dataset/source (from --source): $WORK/elsewhere does not exist" --source "$WORK/elsewhere" <<'JSON'
{"name": "t", "dataset": {"source": "@SRC@"}, "families": [{"family": "file_read"}]}
JSON

# A config file that is not there.
(cd "$WORK/cwd" && expect_exit 2 "$FEEDBENCH" run --config "$WORK/absent.json")
expect_in "$WORK/err" "$WORK/absent.json: cannot read the config"
echo "ok: absent config"
