// `feedbench qualify`'s parts: the search of K (accelerator_search.h), a trial's config and its
// reading (trial.h), the best reads' and the checkpoint's configs and readings (storage_figures.h), the data
// folders it makes, reuses and removes (qualify_data.h), the built-in profiles, and its refusals of bad
// input.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/units.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/io/page_cache.h"
#include "test_util.h"
#include "tools/feedbench/qualify/accelerator_search.h"
#include "tools/feedbench/qualify/qualify_data.h"
#include "tools/feedbench/qualify/storage_figures.h"
#include "tools/feedbench/qualify/trial.h"
#include "tools/feedbench/qualify/workload_profiles.h"
#include "tools/feedbench/verbs.h"

namespace feedbench {
namespace {

using testing::input_error_of;
using testing::TempDir;
using testing::write_file;

// A node whose supply keeps `cold` and `steady` accelerators fed: K of them get AU
// min(1, supply ÷ K) × 0.99 each, as trainers sharing a fixed rate do.
TrialOutcome simulated(int k, double cold, double steady, double headroom = 0) {
  TrialOutcome o;
  o.accelerators = k;
  o.states[0] = {true, std::min(1.0, cold / k) * 0.99, headroom};
  o.states[1] = {true, std::min(1.0, steady / k) * 0.99, headroom};
  return o;
}

// RETURNS: the K the search asked for, in order, running it to its end against `trial`.
std::vector<int> search_all(AcceleratorSearch& s, const std::function<TrialOutcome(int)>& trial) {
  std::vector<int> asked;
  while (const std::optional<int> k = s.next()) {
    asked.push_back(*k);
    if (asked.size() > 40) break;  // a search that never ends fails below
    s.record(trial(*k));
  }
  return asked;
}

TEST(AcceleratorSearchTest, FindsTheMostKeptAtTargetInBothStatesFromTheSameTrials) {
  AcceleratorSearch s(0.9, 64);
  const std::vector<int> asked = search_all(s, [](int k) { return simulated(k, 3.4, 6.2); });
  const FedAnswer cold = s.answer(FedState::kCold), steady = s.answer(FedState::kSteady);
  EXPECT_TRUE(cold.found);
  EXPECT_EQ(cold.fed, 3);  // 3 keep 0.99, 4 get 0.84
  EXPECT_EQ(cold.first_short, 4);
  EXPECT_EQ(steady.fed, 6);
  EXPECT_EQ(steady.first_short, 7);
  EXPECT_FALSE(cold.capped);
  // Each K once, and far fewer trials than counting up to 7.
  EXPECT_EQ(std::set<int>(asked.begin(), asked.end()).size(), asked.size());
  EXPECT_LE(asked.size(), 7u);
  EXPECT_EQ(asked.front(), 1);
}

TEST(AcceleratorSearchTest, OneAcceleratorShortIsAFractionOfOne) {
  AcceleratorSearch s(0.9, 8);
  const std::vector<int> asked = search_all(s, [](int k) { return simulated(k, 0.43 * 0.9 / 0.99, 0.5); });
  EXPECT_EQ(asked, std::vector<int>{1});
  EXPECT_NEAR(s.answer(FedState::kCold).fed, 0.43, 1e-9);
  EXPECT_EQ(s.answer(FedState::kCold).last_fed, 0);
  EXPECT_EQ(s.answer(FedState::kCold).first_short, 1);
}

TEST(AcceleratorSearchTest, ACapThatKeepsTheTargetIsALowerBound) {
  AcceleratorSearch s(0.9, 10);
  search_all(s, [](int k) { return simulated(k, 1000, 1000); });
  const FedAnswer a = s.answer(FedState::kSteady);
  EXPECT_TRUE(a.capped);
  EXPECT_EQ(a.fed, 10);
  EXPECT_FALSE(s.next().has_value());
}

TEST(AcceleratorSearchTest, TheCoresHeadroomChoosesHowFarToGrowWithinTwoToEightTimes) {
  AcceleratorSearch far(0.9, 64);
  far.record(simulated(1, 1000, 1000, /*headroom=*/20));
  EXPECT_EQ(far.next(), 8);  // at most eight times
  AcceleratorSearch near(0.9, 64);
  near.record(simulated(1, 1000, 1000, /*headroom=*/1.2));
  EXPECT_EQ(near.next(), 2);  // at least double
  AcceleratorSearch between(0.9, 64);
  between.record(simulated(1, 1000, 1000, /*headroom=*/5.5));
  EXPECT_EQ(between.next(), 5);
}

TEST(AcceleratorSearchTest, AStateOneAcceleratorCannotJudgeEndsItsSearch) {
  AcceleratorSearch s(0.9, 8);
  TrialOutcome o = simulated(1, 5, 5);
  o.states[0].judged = o.states[1].judged = false;
  s.record(o);
  EXPECT_FALSE(s.next().has_value());
  EXPECT_FALSE(s.answer(FedState::kCold).found);
}

TEST(AcceleratorSearchTest, AKThatCouldNotBeJudgedIsNotAskedForAgain) {
  AcceleratorSearch s(0.9, 64);
  s.record(simulated(1, 10, 10));
  TrialOutcome two = simulated(2, 10, 10);
  two.states[0].judged = two.states[1].judged = false;
  s.record(two);
  EXPECT_FALSE(s.next().has_value());  // not 2 again, nor anything above it
  EXPECT_EQ(s.answer(FedState::kCold).last_fed, 1);
  EXPECT_EQ(s.answer(FedState::kCold).unjudged, 2);
}

TEST(AcceleratorSearchTest, APassAboveAShortfallReopensTheBracket) {
  AcceleratorSearch s(0.9, 64);
  s.record(simulated(1, 10, 10));
  s.record(simulated(2, 1, 10));   // noise: cold short at 2
  s.record(simulated(4, 10, 10));  // ... yet 4 keep the target
  EXPECT_EQ(s.answer(FedState::kCold).last_fed, 4);
  EXPECT_EQ(s.answer(FedState::kCold).first_short, 0);
  EXPECT_TRUE(s.next().has_value());
}

TEST(AcceleratorSearchTest, APassBelowALargerShortfallKeepsItNoKIsRunTwice) {
  AcceleratorSearch s(0.9, 64);
  s.record(simulated(1, 10, 10));
  s.record(simulated(8, 10, 7));    // steady short at 8
  s.record(simulated(4, 10, 3.5));  // steady short at 4 too
  s.record(simulated(6, 10, 10));   // ... yet 6 keep it: 4 was noise, 8 still stands
  EXPECT_EQ(s.answer(FedState::kSteady).last_fed, 6);
  EXPECT_EQ(s.answer(FedState::kSteady).first_short, 8);
  EXPECT_EQ(s.next(), 7);
}

TEST(WorkloadProfileTest, EveryProfileHoldsAnEpochTheLoaderCanJudge) {
  ASSERT_EQ(workload_profiles().size(), 4u);
  for (const WorkloadProfile& p : workload_profiles()) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(&find_workload_profile(p.name), &p);
    // Warm-up prefetch × workers, then at least 10 measured (2 × workers where more).
    EXPECT_GE(epoch_steps(p), std::int64_t(p.prefetch) * p.workers + 10);
    EXPECT_EQ(samples_for(p, 3), 3 * samples_for(p, 1));
    const GenOptions g = gen_options_for(p, "/x", samples_for(p, 1), 7);
    EXPECT_NO_THROW(validate_gen_options(g));
    EXPECT_GT(p.step.count(), 0);
  }
  EXPECT_NE(input_error_of([] { find_workload_profile("vision"); }).find("unknown workload 'vision'"),
            std::string::npos);
}

TEST(TrialTest, TheConfigReadsTheFirstKUnitsOfItsPathForTwoEpochs) {
  TrialPlan plan;
  plan.profile = &find_workload_profile("records");
  plan.path = "cache";
  plan.accelerators = 3;
  plan.store_data = "/s/feedbench-qualify-records";
  plan.cache_data = "/c/feedbench-qualify-records";
  plan.step = std::chrono::microseconds(1750);
  plan.target_au = 0.7;
  const nlohmann::json c = trial_config(plan);
  EXPECT_EQ(c["dataset"]["source"], "/c/feedbench-qualify-records");
  EXPECT_EQ(c["dataset"]["include"],
            (nlohmann::json{"unit_000/*.tfrecord", "unit_001/*.tfrecord", "unit_002/*.tfrecord"}));
  const nlohmann::json& l = c["families"][0];
  EXPECT_EQ(l["accelerators"], 3);
  EXPECT_EQ(l["epochs"], 2);
  EXPECT_EQ(l["cache_state"], "cold");
  EXPECT_EQ(l["samples"], "tfrecord");
  EXPECT_EQ(parse_duration_ns(l["step_time"].get<std::string>()), 1750000);
  EXPECT_EQ(l["target_au"], 0.7);
}

// A result document of one loader case with two epochs, as the loader family writes it.
ResultDocument loader_result(double cold_au, double steady_au, const std::string& by, double busy) {
  ResultDocument d;
  BenchmarkEntry e;
  e.name = e.run_name = e.case_name = "loader/batch:1/acc:2";
  e.run_type = "iteration";
  auto epoch = [&](int n, double au) {
    return nlohmann::json{{"epoch", n},
                          {"au", au},
                          {"host_cpu_busy", busy},
                          {"cpu_util", busy},
                          {"bytes_per_second", 100e6},
                          {"served_from_memory", n == 2},
                          {"limit", {{"by", by}, {"line", "limit: " + by}, {"transform_share", 0.1}}}};
  };
  e.extra = {{"judged", true},  {"cores", 2},
             {"samples", 100},  {"bytes", 100e6},
             {"verdict", "AU"}, {"epochs", nlohmann::json{epoch(1, cold_au), epoch(2, steady_au)}}};
  d.benchmarks.push_back(e);
  return d;
}

TEST(TrialTest, EachEpochOfTheResultIsAState) {
  const TrialResult t = read_trial(loader_result(0.45, 0.8, "storage", 0.5), 2);
  EXPECT_EQ(t.accelerators, 2);
  EXPECT_DOUBLE_EQ(t.states[0].au, 0.45);
  EXPECT_DOUBLE_EQ(t.states[1].au, 0.8);
  EXPECT_FALSE(t.states[0].served_from_memory);
  EXPECT_TRUE(t.states[1].served_from_memory);
  EXPECT_EQ(t.states[0].limit_by, "storage");
  EXPECT_DOUBLE_EQ(t.mean_sample_bytes, 1e6);
  // One accelerator's cores at its full rate: 1 core used by 2 accelerators at AU 0.45.
  EXPECT_NEAR(t.need.cpu_cores, 1.0 / (2 * 0.45), 1e-9);
  const TrialOutcome o = t.outcome();
  EXPECT_TRUE(o.states[1].judged);
  // Its own cores: 0.5 of 2 used, so 0.85 × 2 ÷ 1.0 times as many before they saturate.
  EXPECT_NEAR(o.states[0].headroom, 0.85 * 2 / 1.0, 1e-9);

  ResultDocument other;
  other.benchmarks.emplace_back();
  EXPECT_NE(input_error_of([&] { read_trial(other, 1); }).find("no loader case"), std::string::npos);
}

TEST(TrialTest, ALimitIsNamedCpuStorageOrTheCap) {
  const WorkloadProfile& images = find_workload_profile("images");
  const WorkloadProfile& volumes = find_workload_profile("volumes");
  FedAnswer short_of_two;
  short_of_two.found = true;
  short_of_two.fed = 1;
  short_of_two.first_short = 2;

  TrialResult cpu = read_trial(loader_result(0.3, 0.3, "cpu", 0.97), 2);
  cpu.states[0].transform_share = 0.8;
  EXPECT_EQ(cell_limit(images, "store", short_of_two, cpu, FedState::kCold, 2),
            "the host's CPU: decode and transforms, 2 cores 97% busy");

  TrialResult busy = read_trial(loader_result(0.3, 0.3, "cpu", 0.97), 2);
  busy.states[0].cores_used = 0.2;  // feedbench's 10% of the 97%: other programs' load
  EXPECT_EQ(
      cell_limit(images, "store", short_of_two, busy, FedState::kCold, 2),
      "the host's CPU, busy with other programs: 2 cores 97% busy, feedbench's 10% (qualify again on a quiet "
      "host)");

  TrialResult disk = read_trial(loader_result(0.3, 0.3, "storage", 0.4), 2);
  disk.mean_sample_bytes = 140 << 20;
  disk.states[0].device_bytes_per_second = 300 << 20;
  EXPECT_EQ(cell_limit(volumes, "store", short_of_two, disk, FedState::kCold, 1),
            "the store's bandwidth: 300 MiB/s read");
  disk.mean_sample_bytes = 110 << 10;
  EXPECT_EQ(cell_limit(images, "cache", short_of_two, disk, FedState::kCold, 2),
            "the cache disk's reads: 300 MiB/s in samples of 110 KiB");

  FedAnswer capped = short_of_two;
  capped.capped = true;
  EXPECT_EQ(cell_limit(images, "store", capped, disk, FedState::kSteady, 64),
            "none found up to 64 accelerators (the search's cap; --max-accelerators raises it)");
}

// A result entry of `family` with `params`, `counters` and `extra`, one measured repetition.
BenchmarkEntry measured_entry(const std::string& name, nlohmann::ordered_json params,
                              std::map<std::string, double> counters,
                              nlohmann::json extra = nlohmann::json::object()) {
  BenchmarkEntry e;
  e.name = e.run_name = e.case_name = name;
  e.run_type = "iteration";
  e.params = std::move(params);
  e.counters = std::move(counters);
  e.extra = std::move(extra);
  return e;
}

TEST(StorageFiguresTest, TheBestReadsAreTheFastestColdPassOfTheFirstUnitsFiles) {
  const WorkloadProfile& images = find_workload_profile("images");
  const nlohmann::json c = reads_config(images, "/s/feedbench-qualify-images", 2, 4);
  EXPECT_EQ(c["dataset"]["source"], "/s/feedbench-qualify-images");
  EXPECT_EQ(c["dataset"]["include"], (nlohmann::json{"unit_000/**/*.jpg", "unit_001/**/*.jpg"}));
  const nlohmann::json& f = c["families"][0];
  EXPECT_EQ(f["family"], "file_read");
  EXPECT_EQ(f["pattern"], "shuffled_files");
  EXPECT_EQ(f["cache_state"], "cold");
  EXPECT_EQ(f["workers"], (nlohmann::json{1, 4, 16}));
  EXPECT_EQ(f["runtime"], "4s");

  ResultDocument d;
  for (const auto& [workers, rate] : {std::pair{1, 100e6}, {4, 300e6}, {16, 250e6}})
    d.benchmarks.push_back(measured_entry("file_read/w:" + std::to_string(workers),
                                          {{"family", "file_read"}, {"workers", workers}},
                                          {{"bytes_per_second", rate}}));
  for (BenchmarkEntry& e : d.benchmarks) e.real_time = 2;
  const CardReads r = read_best_reads(d, "cache", 150e6);
  EXPECT_EQ(r.path, "cache");
  EXPECT_DOUBLE_EQ(r.bytes_per_second, 300e6);
  EXPECT_EQ(r.workers, 4);
  EXPECT_DOUBLE_EQ(r.accelerators, 2);
  EXPECT_DOUBLE_EQ(r.seconds, 0.002);  // real_time 2 ms, Google Benchmark's default unit
  EXPECT_EQ(r.bytes, 600000u);
  EXPECT_NE(
      input_error_of([] { read_best_reads(ResultDocument{}, "store", 1); }).find("no measured file_read"),
      std::string::npos);
}

TEST(StorageFiguresTest, ACpuBoundCellSaysWhatTheStorageAloneWouldFeedOrThatItIsTheLimit) {
  CardCell c;
  c.path = "store";
  c.state = "steady";
  c.accelerators_fed = 0.3;
  c.limit = "the host's CPU: decode and transforms, 2 cores 95% busy";
  const CardReads reads{"store", 300 << 20, 16, 1.54, 0, 0};
  EXPECT_EQ(
      limit_with_reads(c, reads),
      "the host's CPU: decode and transforms, 2 cores 95% busy; the store's reads alone would feed 1.54");
  // Cold, and the store's best reads feed hardly more than the cell did: the store is the limit.
  c.state = "cold";
  c.accelerators_fed = 1.3;
  EXPECT_EQ(
      limit_with_reads(c, reads),
      "the store's bandwidth: its best cold reads, 300 MiB/s, feed 1.54 (and the host's CPU: decode and "
      "transforms, 2 cores 95% busy)");
  c.limit = "the store's bandwidth: 301 MiB/s read";
  EXPECT_EQ(limit_with_reads(c, reads), c.limit);
  c.limit = "the host's CPU: x";
  EXPECT_EQ(limit_with_reads(c, CardReads{"cache", 300 << 20, 4, 0, 0, 0}), "the host's CPU: x");
}

TEST(StorageFiguresTest, TheCheckpointIsWrittenInTheScratchAndReadBackWithTheWholeModelsSize) {
  CheckpointPlan plan;
  plan.scale = 0.02;
  plan.source = "/tmp/q";
  plan.scratch = "/mnt/store";
  const nlohmann::json c = checkpoint_config(plan);
  EXPECT_EQ(c["dataset"]["scratch"], "/mnt/store");
  EXPECT_EQ(c["dataset"]["source"], "/tmp/q");
  EXPECT_EQ(c["families"][0],
            (nlohmann::json{{"family", "checkpoint"}, {"model", "llama3-8b"}, {"scale", 0.02}}));

  ResultDocument d;
  d.benchmarks.push_back(measured_entry("checkpoint/model:llama3-8b", {{"family", "checkpoint"}},
                                        {{"bytes_per_second", 400e6}, {"restore_bytes_per_second", 250e6}},
                                        {{"bytes", 2100000000}, {"writer_ranks", 8}}));
  const CardCheckpoint k = read_checkpoint(d, "store", plan);
  EXPECT_EQ(k.path, "store");
  EXPECT_EQ(k.bytes, 2100000000u);
  EXPECT_EQ(k.full_bytes, 105000000000u);
  EXPECT_EQ(k.ranks, 8);
  EXPECT_DOUBLE_EQ(k.write_bytes_per_second, 400e6);
  EXPECT_DOUBLE_EQ(k.restore_bytes_per_second, 250e6);
  EXPECT_NE(input_error_of([&] {
              read_checkpoint(ResultDocument{}, "store", plan);
            }).find("no measured checkpoint"),
            std::string::npos);
}

TEST(QualifyDataTest, AFolderIsReusedOnlyWhenItsMarkerSaysTheSameDataSet) {
  TempDir store;
  const WorkloadProfile& tokens = find_workload_profile("tokens");
  const QualifyDataSet d = qualify_data_set(tokens, 2, 7, store.path(), "");
  EXPECT_EQ(d.store_dir, store.path() + "/feedbench-qualify-tokens");
  EXPECT_EQ(folder_state(d.store_dir, d, nullptr), FolderState::kMissing);
  make_qualify_folder(d.store_dir, d);
  EXPECT_EQ(folder_state(d.store_dir, d, nullptr), FolderState::kOurs);  // not complete yet
  for (int i = 0; i < d.units; ++i) generate_dataset(d.unit_options(i));
  mark_complete(d.store_dir, d);
  EXPECT_EQ(folder_state(d.store_dir, d, nullptr), FolderState::kComplete);
  EXPECT_EQ(folder_state(d.store_dir, qualify_data_set(tokens, 2, 8, store.path(), ""), nullptr),
            FolderState::kOurs);  // another seed: written again
  EXPECT_EQ(folder_state(d.store_dir, qualify_data_set(tokens, 3, 7, store.path(), ""), nullptr),
            FolderState::kOurs);  // more units
  // Every file the units hold is one qualify lists as its own.
  std::size_t written = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(d.store_dir))
    written += f.is_regular_file() && f.path().filename() != kQualifyMarker;
  std::size_t listed = 0;
  for (const std::string& f : d.store_files()) listed += std::filesystem::exists(d.store_dir + "/" + f);
  EXPECT_EQ(written, listed);
  EXPECT_EQ(remove_qualify_folder(d.store_dir, d.store_files()), "");
  EXPECT_FALSE(std::filesystem::exists(d.store_dir));
}

// The stage into the cache reads the store's copy cold: just written, every file of it is in the
// page cache until evicted.
TEST(QualifyDataTest, TheStoresCopyIsEvictedBeforeTheStageReadsIt) {
  TempDir store;
  if (testing::on_tmpfs(store.path())) GTEST_SKIP() << "TMPDIR is tmpfs: files cannot be evicted there";
  const QualifyDataSet d = qualify_data_set(find_workload_profile("tokens"), 2, 7, store.path(), "");
  make_qualify_folder(d.store_dir, d);
  for (int i = 0; i < d.units; ++i) generate_dataset(d.unit_options(i));
  FileSet all(d.store_dir);
  for (const std::string& f : d.store_files()) {  // those gen wrote (its record is listed too)
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(d.store_dir + "/" + f, ec);
    if (!ec) all.add(f, size, 0);
  }
  all.sort();
  ASSERT_GT(measure_residency(all).fraction(), 0.5) << "just written, the copy is in memory";
  const Residency left = evict_store_copy(d);
  EXPECT_EQ(left.total_bytes, measure_residency(all).total_bytes);
  EXPECT_GT(left.total_bytes, 0u);
  EXPECT_LE(left.fraction(), 0.01);
  EXPECT_LE(measure_residency(all).fraction(), 0.01);
}

TEST(QualifyDataTest, AFolderNotMadeByQualifyIsRefusedAndAForeignFileKept) {
  TempDir store;
  const WorkloadProfile& tokens = find_workload_profile("tokens");
  const QualifyDataSet d = qualify_data_set(tokens, 1, 7, store.path(), "");
  write_file(d.store_dir + "/mine.txt", "someone's");
  std::string why;
  EXPECT_EQ(folder_state(d.store_dir, d, &why), FolderState::kNotOurs);
  EXPECT_NE(why.find("without a .feedbench-qualify marker"), std::string::npos);
  write_file(d.store_dir + "/.feedbench-qualify", "{\"written_by\": \"someone else\"}\n");
  EXPECT_EQ(folder_state(d.store_dir, d, &why), FolderState::kNotOurs);

  std::filesystem::remove_all(d.store_dir);
  make_qualify_folder(d.store_dir, d);
  generate_dataset(d.unit_options(0));
  write_file(d.store_dir + "/unit_000/notes.txt", "a file qualify did not write");
  const std::string left = remove_qualify_folder(d.store_dir, d.store_files());
  EXPECT_NE(left.find("notes.txt, which qualify did not write"), std::string::npos) << left;
  EXPECT_TRUE(std::filesystem::exists(d.store_dir + "/unit_000/notes.txt"));
}

// RETURNS: the InputError of `feedbench qualify ARGS`.
std::string qualify_refusal(std::vector<std::string> args) {
  args.insert(args.begin(), "feedbench qualify");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return input_error_of([&] { qualify_main(int(argv.size()), argv.data()); });
}

TEST(QualifyVerbTest, BadInputIsRefusedByOptionBeforeAnythingIsWritten) {
  TempDir dir;
  const std::string out = dir.path() + "/card.json";
  EXPECT_NE(qualify_refusal({"--out", out}).find("--store: expected a folder"), std::string::npos);
  EXPECT_NE(qualify_refusal({"--store", dir.path() + "/none", "--out", out}).find("is not a folder"),
            std::string::npos);
  EXPECT_NE(
      qualify_refusal({"--store", dir.path(), "--cache", dir.path(), "--out", out}).find("is the --store"),
      std::string::npos);
  EXPECT_NE(
      qualify_refusal({"--store", dir.path(), "--workload", "vision", "--out", out}).find("unknown workload"),
      std::string::npos);
  EXPECT_NE(qualify_refusal({"--store", dir.path(), "--budget", "10s", "--out", out}).find("--budget"),
            std::string::npos);
  EXPECT_NE(qualify_refusal({"--store", dir.path(), "--target-au", "1.5", "--out", out}).find("--target-au"),
            std::string::npos);
  EXPECT_NE(qualify_refusal({"--store", dir.path(), "--accelerators-per-node", "0", "--out", out})
                .find("--accelerators-per-node: expected a whole number from 1 to 1024, got '0'"),
            std::string::npos);
  EXPECT_NE(qualify_refusal({"--store", dir.path(), "--checkpoint-scale", "1.5", "--out", out})
                .find("--checkpoint-scale: expected a number from 0 to 1, got '1.5'"),
            std::string::npos);
  // A whole checkpoint (105 GB) where it does not fit: the refusal names the checkpoint.
  if (free_bytes_at(dir.path()) >= 0 && free_bytes_at(dir.path()) < 100'000'000'000) {
    EXPECT_NE(qualify_refusal(
                  {"--store", dir.path(), "--workload", "tokens", "--checkpoint-scale", "1", "--out", out})
                  .find("the data sets and the checkpoint (97.8 GiB) need"),
              std::string::npos);
  }
  EXPECT_NE(
      qualify_refusal({"--store", dir.path(), "--checkpoint-scale", "1e-7", "--out", out})
          .find("--checkpoint-scale: 1e-7 of llama3-8b's 97.8 GiB is under 4 KiB for each of its 8 ranks: "
                "expected at least 3.1e-07, or 0 for no checkpoint"),
      std::string::npos);
  EXPECT_NE(qualify_refusal({"--store", dir.path(), "--out", dir.path() + "/card.json", "--workload",
                             "tokens", "--workload", "tokens"})
                .find("given twice"),
            std::string::npos);
  // A card never lands in the data it measures.
  EXPECT_NE(
      qualify_refusal({"--store", dir.path(), "--workload", "tokens", "--out",
                       dir.path() + "/feedbench-qualify-tokens/card.json"})
          .find("--out " + dir.path() + "/feedbench-qualify-tokens/card.json: inside the data set folder"),
      std::string::npos);
  // ... nor on a trace it reads.
  const std::string trace = dir.path() + "/job.trace.json";
  std::filesystem::copy_file(
      std::string(FEEDBENCH_SOURCE_DIR) + "/tests/fuzz/corpus/trace/jpeg_dimensions.json", trace);
  EXPECT_NE(qualify_refusal({"--store", dir.path(), "--like", trace, "--out", trace})
                .find("the same file as --like"),
            std::string::npos);
  write_file(dir.path() + "/store/feedbench-qualify-tokens/x", "not ours");
  EXPECT_NE(
      qualify_refusal({"--store", dir.path() + "/store", "--workload", "tokens", "--out", out, "--dry-run"})
          .find("without a .feedbench-qualify marker"),
      std::string::npos);
  EXPECT_EQ(
      std::filesystem::directory_iterator(dir.path() + "/store/feedbench-qualify-tokens")->path().filename(),
      "x");
}

}  // namespace
}  // namespace feedbench
