// Fuzzes the card reader (feedbench/results/card.h): a card's text, parsed within kCardLimits;
// a card it accepts is written back and must read back the same (dump, parse, compare), its
// schema must be found by json_schema_of, and comparing it with itself must judge no cell
// fewer.
#include <cstdlib>
#include <string>

#include "feedbench/results/card.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  feedbench::fuzz::expect_only_input_errors([&] {
    // A schema sniffed from any text: a string or "", never a crash.
    (void)feedbench::json_schema_of(text, "card.json", feedbench::kCardLimits);
    const feedbench::Card card = feedbench::Card::parse(text, "card.json");
    const std::string again = card.dump();
    const feedbench::Card back = feedbench::Card::parse(again, "rewritten");
    if (!(back == card) || back.dump() != again) std::abort();
    if (feedbench::json_schema_of(again, "rewritten", feedbench::kCardLimits) != feedbench::kCardSchema)
      std::abort();
    const feedbench::CardComparison same = feedbench::compare_cards(card, card);
    if (same.count(feedbench::CellVerdict::kFewer) != 0 || same.count(feedbench::CellVerdict::kNoisy) != 0)
      std::abort();
  });
  return 0;
}
