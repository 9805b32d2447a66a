# End to end: every config that ships in configs/ runs (shortened with --set) on a small
# generated data set with a staged cache; the source stays byte-identical.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 40 --file-size 16KiB..96KiB --layout classes --classes 4 --seed 9 >/dev/null
before=$(tree_digest "$WORK/src")

cuda=$("$FEEDBENCH" env --json | python3 -c "import json,sys; print(json.load(sys.stdin)['gpu']['built_with_cuda'])")
for config in "$FEEDBENCH_SOURCE_DIR"/configs/*.json; do
  name=$(basename "$config" .json)
  echo "== $name"
  # A build without CUDA refuses GPU parameters (tests/e2e/gpu.sh checks that refusal).
  if [ "$name" = gpu ] && [ "$cuda" != True ]; then echo "built without CUDA: not run"; continue; fi
  # Stage exactly the config's selection (dataset.include), as a user would.
  includes=()
  while IFS= read -r glob; do [ -n "$glob" ] && includes+=(--include "$glob"); done < <(python3 -c "
import json,sys; print('\\n'.join(json.load(open(sys.argv[1]))['dataset'].get('include', [])))" "$config")
  "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache-$name" --label e2e "${includes[@]}" >/dev/null 2>&1
  # Short: one repetition, at most 2 workers, small blocks; a filter keeps the sweep small.
  # steps=5: 5 batches of 8 fit the 40 files (a loader case asking for more is refused).
  FEEDBENCH_SOURCE=$WORK/src FEEDBENCH_CACHE=$WORK/cache-$name expect_exit 0 \
    "$FEEDBENCH" run --config "$config" --out "$WORK/$name.json" --quiet \
    --set repetitions=1 --set workers=[1,2] --set batch_size=8 --set epochs=1 --set steps=5 \
    --benchmark_filter='(workers:1|workers:2)/'
  python3 -c "
import json
d=json.load(open('$WORK/$name.json'))
its=[b for b in d['benchmarks'] if b['run_type']=='iteration']
assert its, 'no cases ran'
ok=[b for b in its if not b.get('error_occurred')]
assert ok, [b.get('error_message') for b in its]
print(len(its), 'runs,', len(its)-len(ok), 'skipped')
"
done
[ "$before" = "$(tree_digest "$WORK/src")" ] || fail "the source data set changed"
echo ok
