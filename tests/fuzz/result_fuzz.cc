// Fuzzes the result-file reader and what diff and report do with what it returns:
// ResultDocument::parse, the reporters' fold (fold_cases), the comparison (compare_results,
// comparability_warnings) and diff's output formats; then checks that a document that was
// read can be written and read back (what a round trip through save/load does).
// Input: the result file's text.
#include <string>

#include "feedbench/base/error.h"
#include "feedbench/results/comparison.h"
#include "feedbench/results/result.h"
#include "fuzz_util.h"
#include "reporters/case_view.h"
#include "reporters/diff_formats.h"

namespace {

void exercise(const std::string& text) {
  using namespace feedbench;
  ResultDocument doc = ResultDocument::parse(text, "fuzz.json");

  for (const CaseView& c : fold_cases(doc)) {
    (void)c.exclusion_note();
    (void)c.worst_au();
    (void)c.target_au();
    (void)c.param("family");
    (void)c.counter("bytes_per_second");
  }

  (void)comparability_warnings(doc, doc);
  Comparison cmp = compare_results(doc, doc, CompareOptions{}, "BASE", "NEW");
  (void)cmp.exit_code(true);
  for (DiffFormat f : {DiffFormat::kTable, DiffFormat::kMarkdown, DiffFormat::kJson, DiffFormat::kJunit})
    (void)format_diff(cmp, f, DiffFormatOptions{});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  feedbench::fuzz::expect_only_input_errors([&] { exercise(text); });

  // A document that was read must survive save and load: a refusal here is a bug.
  std::string saved;
  try {
    saved = feedbench::ResultDocument::parse(text, "fuzz.json").to_ordered_json().dump(2);
  } catch (const feedbench::InputError&) {
    return 0;
  }
  feedbench::ResultDocument::parse(saved, "saved.json");
  return 0;
}
