# feedbench run --emit-fio DIR with file names fio's job syntax reads specially: a new line in a
# name must not write an option of its own (exec_prerun= and exec_postrun= run commands), and
# fio must read back every name it can hold as that name (':' separates names, blanks at a
# value's ends are stripped, '\' before ':' escapes it). Names it cannot hold (a new line, ';'
# and '#', which cut the line as a comment, ${VAR}) are left out with a note in the job and a
# warning; a data set whose folder fio cannot hold gets no job at all. Each job is parsed by fio
# (--parse-only --debug=file names every file it adds) and then run, in a folder where a
# planted command would leave its marker. Skipped where fio is missing.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/data" --files 4 --file-size 64KiB --layout flat >/dev/null
one="$WORK/data/file_000000.bin"
mkdir "$WORK/data/sub"
for name in $'x\nexec_prerun=touch PWNED_PRE\n#' $'y\nexec_postrun=touch PWNED_POST\n;' \
            ':colon' ' lead' 'trail ' 'ends\' 'back\:slash' '[section' 'semi;colon' '${HOME}' \
            'sub/a:b' 'sub/ lead'; do
  cp "$one" "$WORK/data/$name"
done
# A second data set whose folder holds a new line: it is written into directory= and a comment.
bad=$'d\n[pwn]\nfilename=config.json\nexec_prerun=touch PWNED_ROOT\n#'
"$FEEDBENCH" gen --out "$WORK/$bad" --files 2 --file-size 64KiB --layout flat >/dev/null
python3 - "$WORK" "$bad" <<'PY'
import json, sys
work, bad = sys.argv[1], sys.argv[2]
fam = {"family": "file_read", "block_size": "64KiB", "cache_state": "warm"}
json.dump({"name": "emit-fio-names", "dataset": {"source": work + "/data", "cache": work + "/" + bad},
           "defaults": {"repetitions": 1, "seed": 7},
           "families": [dict(fam, pattern=["sequential", "shuffled_files"], workers=[1, 2], path="source"),
                        dict(fam, pattern="random", workers=2, path="source"),
                        dict(fam, pattern="sequential", path="cache")]},
          open(work + "/config.json", "w"))
PY

expect_exit 0 "$FEEDBENCH" run --config "$WORK/config.json" --emit-fio "$WORK/fio" \
  --allow-unverified-cache --out "$WORK/result.json" --quiet
# Five jobs of the source; none of the cache, whose folder fio cannot hold. Left out: the four
# source files named above and both of the cache; the first in the source's (byte) order.
expect_in "$WORK/out" "wrote 5 fio job files"
expect_in "$WORK/err" 'warning: --emit-fio: 6 files left out of the fio jobs'
expect_in "$WORK/err" 'the first: "${HOME}"'
[ "$(ls "$WORK/fio"/*.fio | wc -l)" = 5 ] || fail "expected 5 job files: $(ls "$WORK/fio")"
grep -q 'path_cache' <<<"$(ls "$WORK/fio")" && fail "a job for the cache, whose folder fio cannot hold"

command -v fio >/dev/null || skip "fio is not installed: job files written, not read by fio"
cd "$WORK"  # a relative command's marker would land here
for job in "$WORK"/fio/*.fio; do
  fio --parse-only --debug=file "$job" >"$WORK/parse.out" 2>&1 || { cat "$WORK/parse.out"; fail "fio rejects $job"; }
  python3 - "$job" "$WORK/parse.out" "$WORK/data" <<'PY' || fail "fio does not read $job's files"
import os, re, sys
job, parsed, data = sys.argv[1], sys.argv[2], os.path.realpath(sys.argv[3])
held = sorted(os.path.relpath(os.path.join(d, f), data) for d, _, fs in os.walk(data) for f in fs
              if not f.startswith(".") and not re.search(r"[\n;#]|\$\{", f))
assert len(held) == 16 - 4, held
read = set()
for line in open(parsed, errors="replace"):
    m = re.search(r'file 0x[0-9a-f]+ "(.*)" added at [0-9]+$', line)
    if m:
        path = m.group(1)
        assert path.startswith(data + "/"), path
        path = path[len(data) + 1:].replace("/./", "/")  # "./ lead": the same file
        read.add(path[2:] if path.startswith("./") else path)
read = sorted(read)
assert read == held, (os.path.basename(job), read, held)
text = open(job).read()
assert "# left out: 4 of 16 files" in text, text
assert '"x\\nexec_prerun=touch PWNED_PRE\\n#"' in text, text
for line in text.splitlines():
    assert not line.startswith(("exec_", "include", "[pwn")), line
PY
  # Run it: fio reads the files (page-cached, 64 KiB each); a planted exec_prerun/postrun would
  # run now.
  fio --output-format=json "$job" >"$WORK/run.out" 2>&1 || { cat "$WORK/run.out"; fail "fio failed on $job"; }
done
markers=$(find "$WORK" -name 'PWNED*')
[ -z "$markers" ] || fail "a command planted in a file name ran: $markers"
echo "emit-fio names: ok"
