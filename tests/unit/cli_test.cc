// The command's library (feedbench_cli) and the set-ups its verbs hand down: the dispatch
// (tools/feedbench/verbs.h), replay's run (benchmarks/replay_setup.h, parsed as run parses a
// config), and watch's note on staged caches (feedbench/cache/staged_cache_notes.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/replay_setup.h"
#include "feedbench/base/error.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/cache/staged_cache_notes.h"
#include "feedbench/cache/stager.h"
#include "feedbench/plan/config.h"
#include "feedbench/results/card.h"
#include "output_lines.h"
#include "stage_fixture.h"
#include "test_util.h"
#include "tools/feedbench/verbs.h"

namespace feedbench {
namespace {

using testing::expect_lines;
using ::testing::HasSubstr;
using testing::input_error_of;
using testing::StageFixture;
using ::testing::StartsWith;
using testing::TempDir;

// RETURNS: the exit code of `feedbench ARGS...` run through the library, with what it wrote to
// stdout and stderr.
struct Outcome {
  int code = -1;
  std::string out, err;
};
Outcome run_command(std::vector<std::string> args) {
  args.insert(args.begin(), "feedbench");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  Outcome o;
  o.code = command_main(int(argv.size() - 1), argv.data());
  o.out = ::testing::internal::GetCapturedStdout();
  o.err = ::testing::internal::GetCapturedStderr();
  return o;
}

// The usage's lines after `first`: the question, then one line per verb.
std::vector<std::string> usage_after(const std::string& first) {
  std::vector<std::string> lines{first,
                                 "usage: feedbench <verb> \\[options\\]   \\(feedbench <verb> --help for its "
                                 "options\\)",
                                 "",
                                 "Can this machine's storage feed the GPU, and does a local cache help\\?",
                                 "",
                                 "verbs:"};
  for (const Verb& v : command_verbs()) lines.push_back("  " + std::string(v.name) + " +[^ ].*");
  return lines;
}

TEST(CliTest, VerbsAreTheCommandsNineInUsageOrder) {
  std::vector<std::string> names;
  for (const Verb& v : command_verbs()) {
    names.push_back(v.name);
    EXPECT_NE(v.main, nullptr) << v.name;
    EXPECT_LE(std::string(v.summary).size(), 100u) << v.name;  // a usage line within 120 columns
  }
  EXPECT_EQ(names, (std::vector<std::string>{"run", "gen", "stage", "verify", "diff", "report", "env",
                                             "watch", "replay", "qualify"}));
}

TEST(CliTest, UnknownVerbIsOneMessageThenTheUsageAndExitTwo) {
  const Outcome o = run_command({"frobnicate"});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.out, "");
  expect_lines(o.err, usage_after("feedbench: unknown verb 'frobnicate'"));
}

TEST(CliTest, UnknownVerbIsQuotedPrintable) {
  const Outcome o = run_command({"a\x1b[2Jb"});
  EXPECT_EQ(o.code, 2);
  EXPECT_THAT(o.err, StartsWith("feedbench: unknown verb 'a\\x1b[2Jb'\n"));
}

TEST(CliTest, NoVerbIsTheUsageOnStderrAndExitTwo) {
  const Outcome o = run_command({});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.out, "");
  std::vector<std::string> lines = usage_after("");
  lines.erase(lines.begin());
  expect_lines(o.err, lines);
}

TEST(CliTest, HelpIsTheUsageOnStdoutAndVersionItsLine) {
  for (const char* help : {"--help", "-h", "help"}) {
    const Outcome o = run_command({help});
    EXPECT_EQ(o.code, 0) << help;
    EXPECT_EQ(o.err, "") << help;
    std::vector<std::string> lines = usage_after("");
    lines.erase(lines.begin());
    expect_lines(o.out, lines);
  }
  const Outcome v = run_command({"--version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out, "feedbench 0.1.0\n");
}

TEST(CliTest, AVerbsBadInputIsOneLineNamingTheVerbAndExitTwo) {
  const Outcome o = run_command({"replay"});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(
      o.err,
      "feedbench replay: expected a trace: feedbench replay TRACE (written by feedbench watch --trace)\n");
  const Outcome bad_option = run_command({"diff", "--no-such-option"});
  EXPECT_EQ(bad_option.code, 2);
  EXPECT_THAT(bad_option.err, StartsWith("feedbench diff: "));
  EXPECT_THAT(bad_option.err, HasSubstr("(see feedbench diff --help)"));
  EXPECT_EQ(testing::lines_of(bad_option.err).size(), 1u) << bad_option.err;
}

// Two cards in `dir`: base.json (images store cold: 6 of 5-7) and next.json (4), and a result file.
void write_cards(const TempDir& dir) {
  Card card;
  CardCell cell;
  cell.path = "store";
  cell.state = "cold";
  cell.accelerators_fed = 6;
  cell.accelerators_fed_min = 5;
  cell.accelerators_fed_max = 7;
  cell.repetitions = 3;
  cell.limit = "the store's bandwidth";
  card.workloads = {{"images", 98000000, "profile", {cell}, {}, {}}};
  card.save(dir / "base.json");
  card.workloads[0].paths[0].accelerators_fed = card.workloads[0].paths[0].accelerators_fed_min =
      card.workloads[0].paths[0].accelerators_fed_max = 4;
  card.save(dir / "next.json");
  ResultDocument().save(dir / "result.json");
}

TEST(CardVerbsTest, DiffOfCardsWritesOutAndRefusesResultOptions) {
  TempDir dir;
  write_cards(dir);
  Outcome o = run_command({"diff", dir / "base.json", dir / "next.json", "--out", dir / "diff.txt"});
  EXPECT_EQ(o.code, 1);
  EXPECT_THAT(testing::read_file(dir / "diff.txt"), HasSubstr("FEWER"));
  EXPECT_THAT(o.err, HasSubstr("feedbench diff: 1 cell(s) feed fewer, 0 noisy, 1 compared; wrote "));
  o = run_command({"diff", dir / "base.json", dir / "base.json"});
  EXPECT_EQ(o.code, 0);
  EXPECT_THAT(o.out, HasSubstr("0 cells feed fewer, 0 more, 0 noisy in 1 compared cell\n"));
  o = run_command({"diff", dir / "base.json", dir / "next.json", "--threshold", "10"});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err, "feedbench diff: --threshold: applies to result files, not to cards\n");
  o = run_command({"diff", dir / "base.json", dir / "next.json", "--format", "json"});
  EXPECT_EQ(o.code, 2);
  EXPECT_THAT(o.err, HasSubstr("--format json: cards are compared as a table only"));
  o = run_command({"diff", dir / "base.json", dir / "base.json", dir / "next.json"});
  EXPECT_EQ(o.code, 2);
  EXPECT_THAT(o.err, HasSubstr("expected two cards: feedbench diff CARD_A.json CARD_B.json"));
}

TEST(CardVerbsTest, AMalformedCardIsNamedByPointerAndExitTwo) {
  TempDir dir;
  write_cards(dir);
  std::string text = testing::read_file(dir / "next.json");
  text.replace(text.find("\"repetitions\": 3"), 16, "\"repetitions\": -3");
  testing::write_file(dir / "bad.json", text);
  const Outcome o = run_command({"diff", dir / "base.json", dir / "bad.json"});
  EXPECT_EQ(o.code, 2);
  EXPECT_THAT(o.err,
              HasSubstr(dir / "bad.json" + ": /workloads/0/paths/0/repetitions: expected an integer of at "
                                           "least 1, got number -3"));
}

TEST(CardVerbsTest, ReportOfACardAndAResultFileIsRefusedBeforeWriting) {
  TempDir dir;
  write_cards(dir);
  Outcome o = run_command({"report", dir / "result.json", dir / "base.json", "--out", dir / "page.html"});
  EXPECT_EQ(o.code, 2);
  EXPECT_THAT(o.err, HasSubstr("expected cards or result files, not both: " + dir / "base.json" +
                               " is a card (feedbench-card/1), " + dir / "result.json" + " a result file"));
  EXPECT_FALSE(std::filesystem::exists(dir / "page.html"));
  o = run_command({"report", dir / "base.json", "--out", dir / "page.html"});
  EXPECT_EQ(o.code, 0);
  EXPECT_THAT(o.out, HasSubstr("  images    store  cold   6 (5-7, 3x)"));
  EXPECT_THAT(testing::read_file(dir / "page.html"), HasSubstr("<h2>Qualification card</h2>"));
}

TEST(CardVerbsTest, ReportOfCardsHoldingResultsDrawsTheResultsUnderTheCards) {
  TempDir dir;
  write_cards(dir);
  Card card = Card::load(dir / "base.json");
  card.results.push_back(ResultDocument::load(dir / "result.json"));
  card.save(dir / "with_result.json");
  const Outcome o =
      run_command({"report", dir / "with_result.json", dir / "next.json", "--out", dir / "page.html"});
  EXPECT_EQ(o.code, 0) << o.err;
  const std::string page = testing::read_file(dir / "page.html");
  // The cards side by side first, then the report of the result the first card holds, by its label.
  const std::size_t cards = page.find("<h2>Qualification cards</h2>");
  const std::size_t result = page.find("id=\"feedbench-data\"");
  ASSERT_NE(cards, std::string::npos);
  ASSERT_NE(result, std::string::npos);
  EXPECT_LT(cards, result);
  // Labelled by file name: only one card records an instance type.
  EXPECT_NE(page.find("<th>with_result: fed</th><th>with_result: limit</th><th>next: fed</th>"),
            std::string::npos);
  EXPECT_NE(page.find("{\"files\":[{\"cases\":[],\"config\":\"\",\"name\":\"with_result\"}]}", result),
            std::string::npos);
}

// A job as a trace leaves it, with what the set-up reads: its name and data folder.
std::shared_ptr<const RecordedJob> job_named(const std::string& name, const std::string& data_root) {
  auto job = std::make_shared<RecordedJob>();
  job->name = name;
  job->data_root = data_root;
  return job;
}

TEST(ReplaySetupTest, ResultNameIsTheJobsMadeSafeForAFolder) {
  EXPECT_EQ(replay_result_name("resnet50"), "replay-resnet50");
  EXPECT_EQ(replay_result_name("my job/v1.2_x-y"), "replay-my_job_v1.2_x-y");
  EXPECT_EQ(replay_result_name("../etc"), "replay-.._etc");
  EXPECT_EQ(replay_result_name("h\xc3\xa9"), "replay-h__");  // each byte of a UTF-8 letter
  EXPECT_EQ(replay_result_name(""), "replay-");
}

TEST(ReplaySetupTest, SourceIsTheJobsDataFolderUnlessGiven) {
  TempDir dir;
  const ReplayedTrace own = check_replayed_trace("t.json", job_named("j", dir.path()), "");
  EXPECT_EQ(own.source, dir.path());
  EXPECT_EQ(own.trace, "t.json");
  EXPECT_EQ(own.job->name, "j");
  const ReplayedTrace copy = check_replayed_trace("t.json", job_named("j", dir.path()), "/elsewhere");
  EXPECT_EQ(copy.source, "/elsewhere");
}

TEST(ReplaySetupTest, RelativeTraceNeedsASource) {
  EXPECT_EQ(input_error_of([] { check_replayed_trace("rel.json", job_named("j", ""), ""); }),
            "rel.json: its paths are relative to the job's data folder, which it does not name (watch "
            "--trace-paths relative): name a copy of that folder with --source DIR");
  EXPECT_EQ(check_replayed_trace("rel.json", job_named("j", ""), "/data/copy").source, "/data/copy");
}

TEST(ReplaySetupTest, SystemFolderIsRefusedWithoutASourceWhereItsPathLeads) {
  EXPECT_EQ(input_error_of([] { check_replayed_trace("t.json", job_named("j", "/etc"), ""); }),
            "t.json: the job's data folder /etc is in the system's /etc, not a data set's: a replay without "
            "--source reads only a job's data folder (give --source DIR to replay a copy)");
  // A link to a system folder is judged where it leads, and named so.
  TempDir dir;
  std::filesystem::create_directory_symlink("/usr/share", dir / "data");
  EXPECT_THAT(input_error_of([&] { check_replayed_trace("t.json", job_named("j", dir / "data"), ""); }),
              HasSubstr(dir / "data" + " (/usr/share) is in the system's /usr"));
  // With --source the user names a copy: the recorded folder is not read.
  EXPECT_EQ(check_replayed_trace("t.json", job_named("j", "/etc"), dir.path()).source, dir.path());
}

TEST(ReplaySetupTest, ConfigIsOneReplayFamilyThatParsesAsRunsConfigs) {
  TempDir dir;
  const ReplayedTrace replayed =
      check_replayed_trace("runs/job.trace.json", job_named("my job", dir.path()), "");
  ReplayChoices choices;
  choices.repetitions = 3;
  const ReplaySetup plain = replay_setup(replayed, choices);
  EXPECT_EQ(plain.result_name, "replay-my_job");
  EXPECT_EQ(plain.config_name, "feedbench replay runs/job.trace.json");
  EXPECT_EQ(plain.config, nlohmann::json::parse(R"({
    "name": "replay-my_job", "description": "feedbench replay runs/job.trace.json",
    "dataset": {"source": ")" + dir.path() + R"("},
    "defaults": {"repetitions": 3},
    "families": [{"family": "replay", "trace": "runs/job.trace.json"}]})"));
  ASSERT_EQ(plain.recorded_jobs.size(), 1u);
  EXPECT_EQ(plain.recorded_jobs.at("runs/job.trace.json"), replayed.job);

  choices.cache = dir / "cache";
  choices.allow_resized = true;
  const ReplaySetup what_if = replay_setup(replayed, choices);
  EXPECT_EQ(what_if.config["dataset"]["cache"], dir / "cache");
  EXPECT_EQ(what_if.config["families"][0]["allow_resized"], true);

  // run reads it as it reads a file's config, named by the set-up's name.
  const Config config = parse_config_document(plain.config, plain.config_name);
  EXPECT_EQ(config.file, "feedbench replay runs/job.trace.json");
  EXPECT_EQ(config.name, "replay-my_job");
  EXPECT_EQ(config.source_root, dir.path());
  EXPECT_EQ(config.resolved, plain.config);
  EXPECT_EQ(config.sha256, parse_config(plain.config.dump(2), plain.config_name).sha256);
}

TEST(ReplaySetupTest, ConfigDocumentIsRefusedAsItsTextWouldBe) {
  TempDir dir;
  nlohmann::json doc = {{"name", "x"},
                        {"dataset", {{"source", dir.path()}}},
                        {"families", {{{"family", "replay"}, {"trace", std::string(5000, 't')}}}}};
  EXPECT_THAT(input_error_of([&] { parse_config_document(doc, "feedbench replay T"); }),
              StartsWith("feedbench replay T"));
  doc["families"][0]["trace"] = "t.json";
  doc["dataset"]["source"] = dir / "missing";
  EXPECT_EQ(input_error_of([&] { parse_config_document(doc, "feedbench replay T"); }),
            "feedbench replay T: /dataset/source: " + dir / "missing" + " does not exist");
}

TEST(StagedCacheNotesTest, ManifestListsAFolderOnlyForAFileDirectlyInIt) {
  Manifest m;
  m.files = {{"a.bin", ""}, {"val/b.bin", ""}, {"val/sub/c.bin", ""}};
  EXPECT_TRUE(manifest_lists_folder(m, ""));
  EXPECT_TRUE(manifest_lists_folder(m, "val"));
  EXPECT_TRUE(manifest_lists_folder(m, "val/sub"));
  EXPECT_FALSE(manifest_lists_folder(m, "train"));
  EXPECT_FALSE(manifest_lists_folder(m, "va"));
  m.files = {{"val/sub/c.bin", ""}};
  EXPECT_FALSE(manifest_lists_folder(m, "val"));
  EXPECT_FALSE(manifest_lists_folder(m, ""));
}

TEST(StagedCacheNotesTest, AReadFolderInAStagedCacheIsCheckedNow) {
  StageFixture f;
  ASSERT_EQ(stage(f.options()).exit_code(), 0);
  const std::string cache = std::filesystem::canonical(f.cache).string();
  const std::optional<StagedCache> found = staged_cache_of(cache + "/val/sub");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->root, cache);
  ASSERT_TRUE(found->manifest);
  EXPECT_EQ(found->manifest->files.size(), 3u);
  EXPECT_FALSE(staged_cache_of(f.src + "/val"));

  // Two folders of one cache: one note.
  const std::vector<std::string> notes = staged_cache_notes({cache + "/val", cache + "/train"}, {});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], StartsWith("cache: read from " + cache + ", a cache staged by feedbench stage from " +
                                   f.src + " (label "));
  EXPECT_THAT(notes[0],
              HasSubstr("; verified now: it holds the 3 files its manifest lists, sizes and mtimes as "
                        "staged (feedbench verify re-hashes them)"));

  // A copy that changed is not verified, and says what changed.
  testing::write_file(f.cache + "/val/sub/b.bin", "a longer bee");
  const std::vector<std::string> changed = staged_cache_notes({cache + "/val/sub"}, {});
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_THAT(changed[0], HasSubstr("; not verified: "));
}

TEST(StagedCacheNotesTest, ASourceReadWhileTheCommandNamesItsCache) {
  StageFixture f;
  ASSERT_EQ(stage(f.options()).exit_code(), 0);
  const std::string src = std::filesystem::canonical(f.src).string();
  const std::string cache = std::filesystem::canonical(f.cache).string();
  const std::vector<std::string> notes = staged_cache_notes({src + "/val"}, {f.cache + "/"});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], StartsWith("cache: read from the source " + src +
                                   " though a cache of it is staged at " + cache + " (label "));
  EXPECT_THAT(notes[0], HasSubstr("): point the job at the cache to read the staged copy"));
  // Nothing read from its source, or nothing named: nothing to say.
  EXPECT_TRUE(staged_cache_notes({"/nowhere/else"}, {f.cache}).empty());
  EXPECT_TRUE(staged_cache_notes({}, {}).empty());
}

TEST(StagedCacheNotesTest, AManifestThatCannotBeReadAtTheReadFolderIsSaid) {
  TempDir dir;
  testing::write_file(dir / std::string(kManifestJsonName), "{not json");
  const std::vector<std::string> notes = staged_cache_notes({dir.path()}, {});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], StartsWith("cache: read from " + dir.path() +
                                   ", a cache staged by feedbench stage whose manifest cannot be read ("));
  EXPECT_THAT(notes[0], HasSubstr("): not verified"));
}

}  // namespace
}  // namespace feedbench
