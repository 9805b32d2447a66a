// Fuzzes the manifest readers: parse_sums (MANIFEST.sha256) and parse_manifest (the JSON
// manifest beside it, as read_manifest reads a cache).
// Input: feedbench-manifest.json's text, then a line "----", then MANIFEST.sha256's text
// (no such line: all of it is the JSON, the sums are empty).
#include <cstdlib>
#include <string>
#include <string_view>

#include "feedbench/cache/manifest.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  std::string json_text(all), sums_text;
  if (std::size_t cut = all.find("\n----\n"); cut != std::string_view::npos) {
    json_text = std::string(all.substr(0, cut + 1));
    sums_text = std::string(all.substr(cut + 6));
  }
  feedbench::fuzz::expect_only_input_errors([&] {
    // What was read is written back (sums_text, escaped like sha256sum) and reads back the same.
    feedbench::Manifest m;
    m.files = feedbench::parse_sums(sums_text, "MANIFEST.sha256");
    const auto back = feedbench::parse_sums(m.sums_text(), "rewritten");
    if (back.size() != m.files.size()) std::abort();
    for (std::size_t i = 0; i < back.size(); ++i)
      if (back[i].path != m.files[i].path || back[i].sha256 != m.files[i].sha256) std::abort();
  });
  // read_manifest's contract: any bad pair is "no complete manifest" with a reason, never an
  // exception.
  std::string why;
  (void)feedbench::parse_manifest(json_text, sums_text, "feedbench-manifest.json", "MANIFEST.sha256", &why);
  return 0;
}
