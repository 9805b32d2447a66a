// The qualification card: its reader's errors (file and JSON pointer), the round trip, the
// comparison of two cards cell by cell, and the renderings' width.
#include "feedbench/results/card.h"

#include <sstream>
#include <string>
#include <variant>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reporters/card_report.h"
#include "reporters/console_table.h"
#include "test_util.h"

namespace feedbench {
namespace {

using ::testing::HasSubstr;
using testing::input_error_of;
using ::testing::Not;

CardCell cell(const char* path, const char* state, double fed, double low, double high, const char* limit) {
  CardCell c;
  c.path = path;
  c.state = state;
  c.accelerators_fed = fed;
  c.accelerators_fed_min = low;
  c.accelerators_fed_max = high;
  c.repetitions = 3;
  c.limit = limit;
  c.per_accelerator = {117440512, 4081, 0.8};
  return c;
}

Card sample_card() {
  Card card;
  card.created_utc = "2026-12-06T18:00:00Z";
  card.feedbench_version = "0.9.0";
  card.host = {{"instance_type", "m5.large"}, {"cores", 2}};
  card.storage = {{"store", {{"device", "nvme1n1"}, {"fs_type", "nfs4"}}}};
  CardWorkload images{"images", 98000000, "profile: MLPerf Storage resnet50", {}, {}, {}};
  images.paths.push_back(cell("store", "cold", 6, 5, 7, "the store's bandwidth"));
  images.paths.push_back(cell("store", "steady", 8, 8, 8, "the host's CPU: decode"));
  images.paths.push_back(cell("cache", "steady", 12, 11, 12, "the host's CPU: decode"));
  CardCell skipped;
  skipped.path = "cache";
  skipped.state = "cold";
  skipped.measured = false;
  skipped.reason = "the budget ran out";
  images.paths.push_back(skipped);
  CardWorkload volumes{"volumes", 1360000000, "trace: unet3d.trace.json", {}, {}, {}};
  volumes.paths.push_back(cell("store", "cold", 0.43, 0.43, 0.43, "the store's bandwidth"));
  card.workloads = {images, volumes};
  return card;
}

std::string message_of(const nlohmann::ordered_json& j) {
  return input_error_of([&] { Card::from_json(j, "card.json"); });
}

TEST(CardTest, RoundTripKeepsEveryField) {
  const Card card = sample_card();
  const Card back = Card::parse(card.dump(), "card.json");
  EXPECT_EQ(back, card);
  // Whole numbers are written as people write them.
  EXPECT_THAT(card.dump(), HasSubstr("\"accelerators_fed\": 6,"));
  EXPECT_THAT(card.dump(), HasSubstr("\"accelerators_fed\": 0.43,"));
}

TEST(CardTest, RoundTripThroughAFileWithAnEmbeddedResult) {
  testing::TempDir dir;
  Card card = sample_card();
  ResultDocument doc;
  doc.context["date"] = "2026-12-06";
  card.results.push_back(doc);
  card.save(dir / "card.json");
  EXPECT_EQ(Card::load(dir / "card.json"), card);
  EXPECT_TRUE(std::holds_alternative<Card>(load_card_or_result(dir / "card.json")));
}

TEST(CardTest, ReaderNamesFileAndPointer) {
  const nlohmann::ordered_json good = sample_card().to_json();
  auto with = [&](const std::string& pointer, const nlohmann::ordered_json& value) {
    nlohmann::ordered_json j = good;
    j[nlohmann::ordered_json::json_pointer(pointer)] = value;
    return message_of(j);
  };
  EXPECT_THAT(with("/schema", "feedbench-result/1"),
              HasSubstr("card.json: /schema: expected \"feedbench-card/1\""));
  EXPECT_THAT(with("/target_au", 90), HasSubstr("card.json: /target_au: expected an AU between 0.01 and 1"));
  EXPECT_THAT(with("/workloads/0/paths/1/path", "disk"),
              HasSubstr("card.json: /workloads/0/paths/1/path: expected \"store\" or \"cache\""));
  EXPECT_THAT(with("/workloads/1/paths/0/accelerators_fed", -1),
              HasSubstr("card.json: /workloads/1/paths/0/accelerators_fed: expected a number of at least 0"));
  EXPECT_THAT(
      with("/workloads/0/paths/0/accelerators_fed_min", 7),
      HasSubstr("/workloads/0/paths/0/accelerators_fed_min: expected a number of at least 0 and at most"));
  EXPECT_THAT(with("/workloads/0/paths/0/per_accelerator/cpu_cores", "many"),
              HasSubstr("card.json: /workloads/0/paths/0/per_accelerator/cpu_cores: expected a number"));
  EXPECT_THAT(with("/workloads/0/paths/3/reason", ""),
              HasSubstr("/workloads/0/paths/3/reason: expected why"));
  EXPECT_THAT(with("/workloads/1/name", "images"),
              HasSubstr("card.json: /workloads/1/name: expected a name no other workload has"));
  EXPECT_THAT(with("/workloads/0/paths/1/state", "cold"),
              HasSubstr("card.json: /workloads/0/paths/1: expected one cell per path and state"));
  EXPECT_THAT(with("/results",
                   nlohmann::ordered_json::array({{{"schema", "feedbench-result/1"}, {"benchmarks", 3}}})),
              HasSubstr("card.json: /results/0/context: missing (expected an object)"));
  nlohmann::ordered_json no_step = good;
  no_step["workloads"][0].erase("step_ns");
  EXPECT_THAT(message_of(no_step), HasSubstr("card.json: /workloads/0/step_ns: missing"));
}

TEST(CardTest, OutOfRangeCountsAreRefusedNotCast) {
  const nlohmann::ordered_json good = sample_card().to_json();
  for (const char* text : {"1e30", "-3", "2.5", "18446744073709551615", "0"}) {
    nlohmann::ordered_json j = good;
    j["workloads"][0]["paths"][0]["repetitions"] = nlohmann::ordered_json::parse(text);
    EXPECT_THAT(message_of(j),
                HasSubstr("/workloads/0/paths/0/repetitions: expected an integer of at least 1"))
        << text;
    j = good;
    j["workloads"][0]["step_ns"] = nlohmann::ordered_json::parse(text);
    EXPECT_THAT(message_of(j), HasSubstr("/workloads/0/step_ns: expected an integer of at least 1")) << text;
  }
}

TEST(CardTest, ParseRefusesMalformedTextAndTextPastTheLimits) {
  EXPECT_THAT(input_error_of([] { Card::parse("{\n \"schema\": ", "c.json"); }),
              HasSubstr("c.json: malformed JSON at line 2"));
  EXPECT_THAT(input_error_of([] { Card::parse(std::string(200, '[') + std::string(200, ']'), "c.json"); }),
              HasSubstr("nested at most 130 levels"));
  EXPECT_THAT(input_error_of([] { Card::load("/nonexistent/card.json"); }),
              HasSubstr("/nonexistent/card.json: cannot read card"));
}

TEST(CardTest, SchemaOfTextStopsAtTheKey) {
  EXPECT_EQ(json_schema_of("{\"schema\": \"feedbench-card/1\", \"rest\": [", "t", kCardLimits), kCardSchema);
  EXPECT_EQ(json_schema_of("{\"a\": {\"schema\": \"x\"}, \"schema\": \"y\"}", "t", kCardLimits), "y");
  EXPECT_EQ(json_schema_of("{\"schema\": 3}", "t", kCardLimits), "");
  EXPECT_EQ(json_schema_of("[1, 2]", "t", kCardLimits), "");
  EXPECT_EQ(json_schema_of("not json", "t", kCardLimits), "");
}

Card with_cell(double fed, double low, double high) {
  Card card;
  CardWorkload w{
      "images", 1000000, "profile", {cell("store", "cold", fed, low, high, "the store's bandwidth")}, {}, {}};
  card.workloads = {w};
  return card;
}

TEST(CardDiffTest, FewerBeyondNoiseIsARegression) {
  const Card base = with_cell(6, 6, 6), next = with_cell(4, 4, 4);
  const CardComparison c = compare_cards(base, next);
  ASSERT_EQ(c.cells.size(), 1u);
  EXPECT_EQ(c.cells[0].verdict, CellVerdict::kFewer);
  EXPECT_EQ(c.exit_code(), 1);
  EXPECT_THAT(format_card_diff(c, "a.json", "b.json"), HasSubstr("1 cell feeds fewer"));
}

TEST(CardDiffTest, FewerWithinEitherSpreadIsNoise) {
  // Within BASE's spread: NEW's median at BASE's lowest repetition.
  CardComparison c = compare_cards(with_cell(6, 5, 7), with_cell(5, 5, 5));
  EXPECT_EQ(c.cells[0].verdict, CellVerdict::kNoisy);
  EXPECT_THAT(c.cells[0].note, HasSubstr("within BASE's spread: its 3 repetitions fed 5 to 7"));
  EXPECT_EQ(c.exit_code(), 0);
  // Within NEW's spread: BASE's median at NEW's highest repetition.
  c = compare_cards(with_cell(6, 6, 6), with_cell(4, 3, 6));
  EXPECT_EQ(c.cells[0].verdict, CellVerdict::kNoisy);
  EXPECT_THAT(c.cells[0].note, HasSubstr("within NEW's spread"));
  EXPECT_EQ(c.exit_code(), 0);
}

TEST(CardDiffTest, IdenticalCardsPass) {
  const Card card = sample_card();
  const CardComparison c = compare_cards(card, card);
  EXPECT_EQ(c.count(CellVerdict::kUnchanged), 4u);
  EXPECT_EQ(c.count(CellVerdict::kNotJudged), 1u);  // the cell the budget left unmeasured
  EXPECT_EQ(c.exit_code(), 0);
}

TEST(CardDiffTest, ACellOfOneCardOnlyIsReportedNotARegression) {
  Card base = sample_card(), next = sample_card();
  next.workloads.pop_back();  // volumes only in BASE
  next.workloads.push_back({"tokens", 1, "profile", {cell("cache", "cold", 1, 1, 1, "x")}, {}, {}});
  const CardComparison c = compare_cards(base, next);
  EXPECT_EQ(c.count(CellVerdict::kOnlyBase), 1u);
  EXPECT_EQ(c.count(CellVerdict::kOnlyNew), 1u);
  EXPECT_EQ(c.exit_code(), 0);
  const std::string text = format_card_diff(c, "a.json", "b.json");
  EXPECT_THAT(text, HasSubstr("volumes store cold: only in BASE"));
  EXPECT_THAT(text, HasSubstr("tokens cache cold: only in NEW"));
  // Nothing in common: nothing compared fails, as a result diff that compared nothing does.
  Card other;
  other.workloads = {{"tokens", 1, "profile", {cell("store", "cold", 1, 1, 1, "x")}, {}, {}}};
  EXPECT_EQ(compare_cards(base, other).exit_code(), 1);
}

// Every line of `text` within the console's width.
void expect_within_width(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    EXPECT_LE(console_columns(line), kConsoleWidth) << "'" << line << "'";
}

TEST(CardRenderTest, ConsoleCardFitsAndSaysWhatToDo) {
  Card card = sample_card();
  card.workloads[0].paths[1].limit =
      "the host's CPU: decode and RandomResizedCrop(224) - the store could feed 12 accelerators, this host's "
      "2 cores "
      "decode for 8; a larger instance or a lighter pipeline feeds more";
  card.workloads[1].name = std::string(200, 'v');
  const std::string text = card_console(card);
  expect_within_width(text);
  EXPECT_THAT(text, HasSubstr("feedbench card: accelerators fed at AU >= 90%; host m5.large, 2 cores"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "  images            store  cold    6 (5-7, 3x)     112 MiB/s, 4.08k/s, 0.80 cores  the store's"));
  EXPECT_THAT(text, HasSubstr("not measured: the budget ran out"));
  EXPECT_THAT(text, HasSubstr("what to do:\n  Fewest fed: vvv"));
  EXPECT_THAT(text, HasSubstr("Stage to the cache: it feeds more for images (steady)."));
  EXPECT_THAT(text, HasSubstr("1 cell was not measured"));
  EXPECT_LE(card_advice(card).size(), kCardAdviceLines);
  expect_within_width(format_card_diff(compare_cards(card, card), std::string(300, 'a'), "b"));
}

TEST(CardRenderTest, StagingIsAdvisedOnlyForAGainBeyondTheSpreadAndATenth) {
  Card card = sample_card();
  CardCell& cache = card.workloads[0].paths[2];  // the cache's steady cell, 12 (11-12) against 8
  ASSERT_EQ(cache.path, "cache");
  cache.accelerators_fed = cache.accelerators_fed_max = 8.5;  // 6% more: one search's noise
  cache.accelerators_fed_min = 8.5;
  EXPECT_THAT(card_console(card), Not(HasSubstr("Stage to the cache")));
  cache.accelerators_fed = cache.accelerators_fed_max = 12;
  cache.accelerators_fed_min = 7;  // its spread reaches below the store's 8
  EXPECT_THAT(card_console(card), Not(HasSubstr("Stage to the cache")));
}

// The rest of a qualification on `card`: best reads, a stage that pays, a checkpoint, a node.
void add_storage_figures(Card& card) {
  card.accelerators_per_node = 8;
  CardWorkload& images = card.workloads[0];
  images.paths[3] = cell("cache", "cold", 12, 11, 12, "the cache disk's reads");
  images.reads = {{"store", 734003200, 16, 6.25, 2936012800, 4},
                  {"cache", 1468006400, 4, 12.5, 14680064, 0.01}};
  CardStaging st;
  st.bytes = 2000000000;
  st.seconds = 8;
  st.bytes_per_second = 250e6;
  st.epochs_of_reading = staging_epochs_of_reading(images, st.bytes_per_second, card.accelerators_per_node);
  st.pays_after_epochs = staging_pays_after_epochs(images, st.bytes_per_second, card.accelerators_per_node);
  images.staging = st;
  card.checkpoints = {{"store", "llama3-8b", 0.01, 1050000000, 105000000000, 8, 400e6, 250e6}};
}

TEST(CardTest, ReadsStagingAndCheckpointsRoundTripAndAreReadByPointer) {
  Card card = sample_card();
  add_storage_figures(card);
  const Card back = Card::parse(card.dump(), "card.json");
  EXPECT_EQ(back, card);
  ASSERT_TRUE(back.workloads[0].staging);
  EXPECT_TRUE(back.workloads[0].staging->pays_after_epochs);
  // A stage that never pays is written null and read back so.
  card.workloads[0].staging->pays_after_epochs.reset();
  EXPECT_EQ(Card::parse(card.dump(), "card.json"), card);
  // An older card without them still reads.
  EXPECT_TRUE(Card::parse(sample_card().dump(), "card.json").workloads[0].reads.empty());

  nlohmann::ordered_json j = card.to_json();
  j["workloads"][0]["reads"][1]["path"] = "store";
  EXPECT_THAT(
      message_of(j),
      HasSubstr("card.json: /workloads/0/reads/1: expected one entry per path, not a second store, got"));
  j = card.to_json();
  j["workloads"][0]["reads"][0]["workers"] = 0;
  EXPECT_THAT(message_of(j),
              HasSubstr("card.json: /workloads/0/reads/0/workers: expected an integer of at least 1"));
  j = card.to_json();
  j["workloads"][0]["staging"]["pays_after_epochs"] = -1;
  EXPECT_THAT(message_of(j),
              HasSubstr("/workloads/0/staging/pays_after_epochs: expected a number of at least 0, "
                        "or null (it never pays)"));
  j = card.to_json();
  j["checkpoints"][0]["scale"] = 2;
  EXPECT_THAT(message_of(j),
              HasSubstr("card.json: /checkpoints/0/scale: expected a fraction above 0 and at most 1"));
  j = card.to_json();
  j["accelerators_per_node"] = 0.5;
  EXPECT_THAT(message_of(j),
              HasSubstr("card.json: /accelerators_per_node: expected an integer of at least 1"));
}

TEST(CardStagingTest, ItPaysAfterTheEpochsThatWinItsTimeBack) {
  Card card = sample_card();
  CardWorkload& w = card.workloads[1];  // volumes: store cold 0.43
  CardCell store = cell("store", "cold", 1, 1, 1, "the store's bandwidth");
  store.per_accelerator.bytes_per_second = 100e6;
  CardCell cache = cell("cache", "cold", 4, 4, 4, "the cache disk's bandwidth");
  w.paths = {store, cache};
  // Through the store an epoch reads at 100 MB/s, through the cache at 400 MB/s; staging at
  // 200 MB/s costs 1/200 s a byte once and each epoch saves 1/100 - 1/400 s a byte.
  EXPECT_NEAR(*staging_pays_after_epochs(w, 200e6, 0), 0.005 / 0.0075, 1e-9);
  EXPECT_NEAR(staging_epochs_of_reading(w, 200e6, 0), 0.5, 1e-9);
  // A node of 2: the cache feeds it at 200 MB/s.
  EXPECT_NEAR(*staging_pays_after_epochs(w, 200e6, 2), 1.0, 1e-9);
  // A node of 1: the store already feeds it; staging never pays.
  EXPECT_FALSE(staging_pays_after_epochs(w, 200e6, 1));
  // A cache within the store's spread, or within a tenth of it, is no gain.
  w.paths[1].accelerators_fed = w.paths[1].accelerators_fed_min = w.paths[1].accelerators_fed_max = 1.05;
  EXPECT_FALSE(staging_pays_after_epochs(w, 200e6, 0));
  w.paths.pop_back();
  EXPECT_FALSE(staging_pays_after_epochs(w, 200e6, 0));
}

TEST(CardRenderTest, ReadsStagingAndCheckpointsAreSaidUnderTheTable) {
  Card card = sample_card();
  add_storage_figures(card);
  const std::string text = card_console(card);
  expect_within_width(text);
  EXPECT_THAT(text, HasSubstr("; a node of 8 accelerators"));
  EXPECT_THAT(text,
              HasSubstr("reads, staging and checkpoints:\n  images: read at best, cold, whole files: the "
                        "store 700 MiB/s (16 readers), 6.25 accelerators' worth;"));
  EXPECT_THAT(text, HasSubstr("Staged at 238 MiB/s"));
  EXPECT_THAT(card_markdown(card),
              HasSubstr("the cache 1.37 GiB/s (4 readers; only 14 MiB in 0.01 s), 12 accelerators'"));
  EXPECT_THAT(text, HasSubstr("it pays after"));
  EXPECT_THAT(
      text,
      HasSubstr("checkpoint llama3-8b x 0.01 (0.98 GiB by 8 ranks) on the store: written at 381 MiB/s"));
  const std::string md = card_markdown(card);  // its sentences unwrapped
  EXPECT_THAT(md, HasSubstr("the whole 97.8 GiB: 4.4 min to write, 7.0 min to restore."));
  EXPECT_THAT(md, HasSubstr("as long as 2.8 epochs through the store; it pays after 11 epochs."));
  EXPECT_THAT(text, HasSubstr("Stage to the cache: it feeds more for images (pays after 11 epochs)."));
  EXPECT_THAT(text, HasSubstr("of the node's 8"));
  EXPECT_THAT(md, HasSubstr("Reads, staging and checkpoints:\n\n- images: read at best"));
  EXPECT_THAT(cards_html({card}, {"m5"}),
              HasSubstr("<h3>Reads, staging and checkpoints</h3><ul><li>images:"));
}

TEST(CardRenderTest, MarkdownAndHtmlHoldTheTable) {
  Card card = sample_card();
  card.workloads[0].paths[0].limit = "a | b <c>";
  const std::string md = card_markdown(card);
  EXPECT_THAT(
      md,
      HasSubstr(
          "| images | store | cold | 6 (5-7, 3x) | 112 MiB/s, 4.08k samples/s, 0.80 cores | a \\| b <c> |"));
  EXPECT_THAT(md, HasSubstr("- Fewest fed: volumes through the store, cold, 0.43 (the store's bandwidth)."));
  const std::string one = cards_html({card}, {"m5"});
  EXPECT_THAT(one, HasSubstr("<td>a | b &lt;c&gt;</td>"));
  Card next = sample_card();
  next.workloads.pop_back();
  const std::string two = cards_html({card, next}, {"m5", "m6"});
  EXPECT_THAT(two, HasSubstr("<th>m5: fed</th><th>m5: limit</th><th>m6: fed</th>"));
  EXPECT_THAT(two, HasSubstr("(not in this card)"));
}

}  // namespace
}  // namespace feedbench
