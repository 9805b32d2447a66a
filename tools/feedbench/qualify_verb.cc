// `feedbench qualify --store DIR [--cache DIR] [--workload NAME]... [--budget DUR] [--out CARD]`:
// how many accelerators of each built-in workload this instance's storage feeds, through the
// store and through a local cache, cold and steady, found by running K of them at once and
// searching K (qualify/accelerator_search.h); the answer a card (feedbench/results/card.h).
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "benchmarks/case_run.h"
#include "command_line.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/dataset/generator.h"
#include "feedbench/plan/preflight.h"
#include "feedbench/replay/recorded_job.h"
#include "feedbench/replay/stand_in.h"
#include "feedbench/results/card.h"
#include "feedbench/results/environment.h"
#include "qualify/accelerator_search.h"
#include "qualify/qualify_data.h"
#include "qualify/storage_figures.h"
#include "qualify/trial.h"
#include "qualify/workload_profiles.h"
#include "reporters/card_report.h"
#include "reporters/console_table.h"
#include "reporters/html_report.h"
#include "verbs.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace feedbench {
namespace {

constexpr const char* kUsage =
    "usage: feedbench qualify --store DIR [--cache DIR] [--workload NAME]... [--like TRACE]... [--target-au "
    "AU]\n"
    "                         [--speedup X] [--accelerators-per-node N] [--max-accelerators N]\n"
    "                         [--checkpoint-scale F] [--budget DUR] [--out CARD.json]\n"
    "                         [--markdown F] [--html F] [--keep] [--seed S] [--dry-run]\n"
    "\n"
    "How many accelerators of each workload this instance's storage feeds, and what limits it:\n"
    "one card. For each workload (images: resnet50-like JPEGs decoded and cropped; volumes:\n"
    "unet3d-like 140 MiB arrays; records: cosmoflow-like TFRecords; tokens: LLM sequences from\n"
    "shards; steps, batches and sizes from MLPerf Storage's configs, docs/qualify.md) and each\n"
    "path (--store: the storage training reads from; --cache: the local disk a cache would use,\n"
    "staged from the store with `feedbench stage`), qualify runs K simulated accelerators at once,\n"
    "each its own trainer and workers reading its own share, and searches K: the most kept at\n"
    "the target AU, in the first epoch (cold) and the second (steady), with what stopped K + 1.\n"
    "--like TRACE makes a team's own job the workload: a job watched once (`feedbench watch --trace`),\n"
    "its files written as `gen --like TRACE` writes them, one copy per accelerator, and K replays of\n"
    "it at once a trial (`feedbench replay`: its reads, batches, workers, steps and CPU as recorded);\n"
    "K is kept when every replay keeps the target, as K real jobs each timing its own AU.\n"
    "Beside the searches: each path's best read rate of each workload's files (cold, shuffled\n"
    "whole files: what the storage alone would feed), the stage's rate and the epochs after which\n"
    "staging pays, and a llama3-8b checkpoint written to each path and restored cold.\n"
    "\n"
    "It writes its data sets in folders it creates, <DIR>/feedbench-qualify-<workload>, refuses\n"
    "such a folder it did not create, checks free space first, and removes them afterwards unless\n"
    "--keep (a later qualify reuses kept data). An estimate is printed first; each trial's line\n"
    "says the time left; cells the --budget leaves unmeasured say so on the card.\n"
    "\n"
    "exit codes: 0 a card written, 1 nothing measured, 2 bad input, 130/143 interrupted\n"
    "\n"
    "examples:\n"
    "  feedbench qualify --store /mnt/nfs/scratch --cache /local/nvme --out p5.card.json\n"
    "  feedbench qualify --store /mnt/lustre/me --workload images --workload volumes --budget 40min\n"
    "  feedbench diff last-month.card.json p5.card.json\n"
    "\n";

// Rough rates for the estimate only (this 2-core class of host): what gen writes a second, and
// what a trial costs beyond its steps (start, scan, eviction).
constexpr double kGenBytesPerSecond = 400e6;
constexpr double kJpegGenBytesPerSecond = 100e6;
constexpr double kStageBytesPerSecond = 300e6;
constexpr double kTrialOverheadS = 2.0;
constexpr double kTrialsPerSearch = 3.0;
// Each best-read pass is this long at the most (a run of one file_read case per reader count).
constexpr double kReadsPassS = 4.0;
constexpr double kRunOverheadS = 3.0;  // a child run's start, scan and eviction

struct Options {
  std::string store, cache;
  std::vector<const WorkloadProfile*> workloads;
  std::vector<std::shared_ptr<const WorkloadProfile>> traced;  // --like's, which `workloads` points into
  std::optional<double> target_au;
  double speedup = 1;
  std::optional<int> max_accelerators;
  int repetitions = 1;             // searches of each cell
  int accelerators_per_node = 0;   // 0: not given
  double checkpoint_scale = 0.01;  // of llama3-8b's checkpoint; 0: no checkpoint
  std::int64_t budget_ns = 20LL * 60 * 1000000000;
  std::string budget_text = "20min";
  std::string out, markdown, html;
  bool default_out = false;  // no --out: a default name, never replacing a file
  bool keep = false, dry_run = false;
  std::uint64_t seed = 42;
};

// One search of K and the trials it ran.
struct SearchRun {
  AcceleratorSearch search;
  std::map<int, TrialResult> trials;  // by K
};

// One workload through one path: its searches (one per repetition) and their trials.
struct PathSearch {
  std::string path;  // "store" or "cache"
  std::vector<SearchRun> searches;
  std::string not_measured;  // why the search did not start, or stopped
  bool budget_ran_out = false;
};

struct WorkloadRun {
  const WorkloadProfile* profile = nullptr;
  QualifyDataSet data;
  double target = 0.9;
  int cap = 1;
  std::chrono::nanoseconds step{0};
  double speedup = 1;
  std::vector<PathSearch> paths;
  double stage_s = 0;             // the stage into the cache, its wall time; 0: not staged (or reused)
  bool stage_from_store = false;  // the stage read the store, not the page cache: its rate counts
  std::vector<CardReads> reads;   // each path's best read rate (accelerators filled in by the card)
};

// RETURNS: the last line of the log `path` that is not empty, printable: what a child said last.
std::string last_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return printable(last);
}

// RETURNS: "40 s", "8 min 5 s": a duration as the estimate and the closing line say it.
std::string duration_text(double s) {
  const int whole = int(std::lround(std::max(0.0, s)));
  return whole < 60 ? std::to_string(whole) + " s"
                    : std::to_string(whole / 60) + " min" +
                          (whole % 60 ? " " + std::to_string(whole % 60) + " s" : "");
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string minutes_text(double s) {
  s = std::max(0.0, s);
  char text[32];
  std::snprintf(text, sizeof text, "%d:%02d", int(s) / 60, int(s) % 60);
  return text;
}

// RETURNS: the workload of the job `trace` recorded: its files (each unit a copy of them at their
// recorded paths), its batches, steps, workers and prefetch as recorded; named after the job,
// apart from the names in `taken`. Throws InputError "--like: ..." for a trace replay refuses.
WorkloadProfile profile_of_trace(const std::string& trace, const std::vector<const WorkloadProfile*>& taken) {
  RecordedJob job;
  try {
    job = load_recorded_job(trace);
  } catch (const InputError& e) {
    throw InputError(std::string("--like: ") + e.what());
  }
  WorkloadProfile p;
  p.name = job.name.empty() ? "job" : job.name;
  for (int n = 2;; ++n) {  // a name of its own on the card
    const bool used =
        std::any_of(taken.begin(), taken.end(), [&](const WorkloadProfile* t) { return t->name == p.name; });
    if (!used) break;
    p.name = (job.name.empty() ? "job" : job.name) + "-" + std::to_string(n);
  }
  std::int64_t steps = 0, step_ns = 0, samples = 0, batches = 0;
  for (const RecordedBatch& b : job.passes.front().batches) {
    samples += b.count;
    ++batches;
    if (b.step_ns >= 0) {
      step_ns += b.step_ns;
      ++steps;
    }
  }
  p.like = "a watched job: its files, steps, workers and CPU as recorded";
  p.source = "trace " + std::filesystem::absolute(trace).lexically_normal().string() + " (job " + job.name +
             ", AU " + format_printf("%.1f%%", 100 * job.au) + " when watched)";
  p.batch_size = int(batches > 0 ? std::max<std::int64_t>(1, samples / batches) : 1);
  p.step = std::chrono::nanoseconds(steps > 0 ? step_ns / steps : 0);
  p.workers = job.passes.front().workers;
  p.prefetch = job.passes.front().prefetch;
  p.samples = "files";
  p.transform = "recorded";
  p.default_max_accelerators = 8;
  p.trace = trace;
  p.listing = std::make_shared<const GenListing>(gen_listing_of(job, trace));
  std::uint64_t bytes = 0;
  for (const ListedFile& f : p.listing->files) bytes += f.size;
  p.min_size = p.max_size = p.listing->files.empty() ? 0 : bytes / p.listing->files.size();
  // The recorded loop once per epoch: its steps and its waits (the estimate's figure).
  std::int64_t wall = 0;
  for (const RecordedBatch& b : job.passes.front().batches)
    wall += std::max<std::int64_t>(b.step_ns, 0) + b.wait_ns;
  p.recorded_epoch = std::chrono::nanoseconds(wall);
  return p;
}

Options parse_options(int argc, char** argv, bool* help) {
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "store", po::value<std::string>()->value_name("DIR"),
      "a folder on the storage under test (required): its data sets go in a subfolder qualify makes")(
      "cache", po::value<std::string>()->value_name("DIR"),
      "a folder on the local disk a cache would use: the data sets staged there too")(
      "workload", po::value<std::vector<std::string>>()->composing()->value_name("NAME"),
      "images, volumes, records or tokens; once per workload (default: all four, none with --like)")(
      "like", po::value<std::vector<std::string>>()->composing()->value_name("TRACE"),
      "a job watched with `feedbench watch --trace`: its files, steps, workers and CPU the workload, "
      "K replays of it at once a trial")(
      "target-au", po::value<std::string>()->value_name("AU"),
      "the AU a fed accelerator keeps, 0.01 to 1 (default: each workload's, MLPerf's 0.9 or 0.7)")(
      "speedup", po::value<std::string>()->value_name("X"),
      "accelerators X times faster than the profiles' H100: every step ÷ X  [1]")(
      "accelerators-per-node", po::value<std::string>()->value_name("N"),
      "the node's accelerators, 1 to 1024: the card says how many of them each cell feeds and when "
      "staging pays for the node")(
      "max-accelerators", po::value<std::string>()->value_name("N"),
      "the most K searched, 1 to 1024; the data set holds N accelerators' epochs (default: each "
      "workload's: images 2, volumes 1, records 8, tokens 64)")(
      "checkpoint-scale", po::value<std::string>()->value_name("F"),
      "the part of a llama3-8b checkpoint (105 GB) written to each path and restored cold, 0 to 1; "
      "0: none  [0.01]")(
      "repetitions", po::value<std::string>()->value_name("N"),
      "searches of each cell, 1 to 9: the card's figure is their median, with their range (the "
      "spread `diff` calls noise)  [1]")("budget", po::value<std::string>()->value_name("DUR"),
                                         "the time qualify may take  [20min]")(
      "out,o", po::value<std::string>()->value_name("CARD.json"),
      "the card to write (default: feedbench-card-<UTC time>.json, never replacing a file)")(
      "markdown", po::value<std::string>()->value_name("FILE"), "the card as Markdown")(
      "html", po::value<std::string>()->value_name("FILE"), "the card and its results as an HTML page")(
      "keep", "keep the data sets for a later qualify (default: removed)")(
      "seed", po::value<std::string>()->value_name("S"), "the data sets' and the trials' seed  [42]")(
      "dry-run", "print the plan and the estimate, write nothing");
  po::variables_map vm;
  if (parse_command_line(argc, argv, visible, vm)) {
    std::cout << kUsage << "options:\n" << options_help(visible);
    *help = true;
    return {};
  }
  Options o;
  if (!vm.count("store"))
    throw InputError("--store: expected a folder on the storage under test, e.g. --store /mnt/nfs/me");
  o.store = vm["store"].as<std::string>();
  if (vm.count("cache")) o.cache = vm["cache"].as<std::string>();
  if (vm.count("workload")) {
    for (const std::string& w : vm["workload"].as<std::vector<std::string>>()) {
      const WorkloadProfile* p = &find_workload_profile(w);
      if (std::find(o.workloads.begin(), o.workloads.end(), p) != o.workloads.end())
        throw InputError("--workload: '" + w + "' given twice");
      o.workloads.push_back(p);
    }
  }
  if (vm.count("like"))
    for (const std::string& trace : vm["like"].as<std::vector<std::string>>()) {
      o.traced.push_back(std::make_shared<const WorkloadProfile>(profile_of_trace(trace, o.workloads)));
      o.workloads.push_back(o.traced.back().get());
    }
  if (o.workloads.empty())
    for (const WorkloadProfile& p : workload_profiles()) o.workloads.push_back(&p);
  auto number = [&](const char* option, double lo, double hi) {
    return parse_number(vm[option].as<std::string>(), std::string("--") + option, lo, hi);
  };
  if (vm.count("target-au")) o.target_au = number("target-au", 0.01, 1);
  if (vm.count("speedup")) o.speedup = number("speedup", 0.01, 1000);
  if (vm.count("max-accelerators"))
    o.max_accelerators =
        int(parse_whole_number(vm["max-accelerators"].as<std::string>(), "--max-accelerators", 1, 1024));
  if (vm.count("accelerators-per-node"))
    o.accelerators_per_node = int(parse_whole_number(vm["accelerators-per-node"].as<std::string>(),
                                                     "--accelerators-per-node", 1, 1024));
  if (vm.count("repetitions"))
    o.repetitions = int(parse_whole_number(vm["repetitions"].as<std::string>(), "--repetitions", 1, 9));
  if (vm.count("checkpoint-scale")) {
    o.checkpoint_scale = number("checkpoint-scale", 0, 1);
    // Each rank's file at least one 4 KiB block (the checkpoint family's alignment).
    std::int64_t ranks = 1;
    const double full = double(checkpoint_full_bytes(kQualifyCheckpointModel, &ranks));
    const double least = double(ranks) * 4096 / full;
    if (o.checkpoint_scale > 0 && o.checkpoint_scale < least)
      throw InputError("--checkpoint-scale: " + vm["checkpoint-scale"].as<std::string>() + " of " +
                       kQualifyCheckpointModel + "'s " + format_size(full) +
                       " is under 4 KiB for each of its " + std::to_string(ranks) +
                       " ranks: expected at least " + format_printf("%.2g", least) +
                       ", or 0 for no checkpoint");
  }
  if (vm.count("budget")) {
    o.budget_text = vm["budget"].as<std::string>();
    o.budget_ns = parse_duration_ns(o.budget_text, "--budget");
    if (o.budget_ns < 60LL * 1000000000)
      throw InputError("--budget: expected at least 1min, got '" + o.budget_text + "'");
  }
  if (vm.count("seed")) o.seed = parse_whole_number(vm["seed"].as<std::string>(), "--seed", 0, 1ULL << 53);
  o.keep = vm.count("keep") > 0;
  o.dry_run = vm.count("dry-run") > 0;
  o.default_out = !vm.count("out");
  o.out = o.default_out ? "feedbench-card-" + utc_timestamp(true) + ".json" : vm["out"].as<std::string>();
  if (vm.count("markdown")) o.markdown = vm["markdown"].as<std::string>();
  if (vm.count("html")) o.html = vm["html"].as<std::string>();
  return o;
}

void check_folders(const Options& o) {
  auto folder = [](const std::string& option, const std::string& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw InputError(option + ": " + dir + " is not a folder");
    require_writable_folder(option, dir);
  };
  folder("--store", o.store);
  if (!o.cache.empty()) {
    folder("--cache", o.cache);
    if (fs::equivalent(o.store, o.cache))
      throw InputError("--cache: " + o.cache + " is the --store folder: a cache goes on another disk");
  }
  std::vector<NamedPath> outputs = {{"--out", o.out}};
  if (!o.markdown.empty()) outputs.push_back({"--markdown", o.markdown});
  if (!o.html.empty()) outputs.push_back({"--html", o.html});
  for (const NamedPath& out : outputs) require_writable_file(out.option, out.path);
  // A card never lands in the data it measures: the data sets' folders, made or still to make.
  std::vector<NamedPath> roots;
  for (const WorkloadProfile* p : o.workloads)
    for (const std::string& root : {o.store, o.cache})
      if (!root.empty())
        roots.push_back({"the data set folder", root + "/feedbench-qualify-" + p->name, true});
  for (const NamedPath& out : outputs) {
    const fs::path path = fs::weakly_canonical(fs::absolute(out.path));
    for (const NamedPath& root : roots) {
      const fs::path dir = fs::weakly_canonical(fs::absolute(root.path));
      const auto [d, _] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
      if (d == dir.end())
        throw InputError(out.option + " " + out.path + ": inside " + root.option + " " + root.path +
                         ", which qualify writes and removes: write it elsewhere");
    }
  }
  std::vector<NamedPath> inputs;  // no output lands on a trace it reads
  for (const std::shared_ptr<const WorkloadProfile>& p : o.traced) inputs.push_back({"--like", p->trace});
  check_outputs_apart(outputs, inputs, roots);
}

// RETURNS: the estimated seconds of `run`: writing and staging its data (unless reused), its
// best reads, and `repetitions` searches a path at the AU it is for. A trace's trial epoch is its
// recorded pass (steps and waits), a built-in workload's its steps.
double estimate_seconds(const WorkloadRun& run, bool store_reused, bool cache_reused, int repetitions) {
  const double bytes = double(run.data.bytes());
  double s = 0;
  if (!store_reused)
    s += bytes / (run.profile->format == GenFormat::kJpeg ? kJpegGenBytesPerSecond : kGenBytesPerSecond);
  if (!run.data.cache_dir.empty() && !cache_reused) s += 2 * bytes / kStageBytesPerSecond;
  const double epoch_s =
      run.profile->trace.empty()
          ? double(epoch_steps(*run.profile)) * std::chrono::duration<double>(run.step).count()
          : std::chrono::duration<double>(run.profile->recorded_epoch).count();
  const double trial_s = 2 * epoch_s + kTrialOverheadS;
  s += double(run.paths.size()) * repetitions * kTrialsPerSearch * trial_s;
  s += double(run.paths.size()) * double(std::size(kReadsWorkers)) * (kReadsPassS + kRunOverheadS);
  return s;
}

// Writes the store's data set, or reuses a kept one. Throws InputError for a folder not ours.
void prepare_store(WorkloadRun& run, const std::atomic<int>* stop) {
  const QualifyDataSet& d = run.data;
  std::string why;
  switch (folder_state(d.store_dir, d, &why)) {
    case FolderState::kComplete:
      std::printf("  %s: reusing the store's data set, kept by an earlier qualify:\n      %s\n",
                  d.profile->name.c_str(), printable(d.store_dir).c_str());
      std::fflush(stdout);
      return;
    case FolderState::kNotOurs:
      throw InputError("--store: " + d.store_dir + " " + why + ": remove it or choose another --store");
    case FolderState::kOurs:
      if (std::string left = remove_qualify_folder(d.store_dir, d.store_files()); !left.empty())
        throw RunError("cannot rewrite an earlier qualify's data set: " + left);
      break;
    case FolderState::kMissing: break;
  }
  const Clock::time_point t0 = Clock::now();
  make_qualify_folder(d.store_dir, d);
  for (int i = 0; i < d.units; ++i) {
    if (stop->load() != 0) throw RunError("interrupted");
    generate_dataset(d.unit_options(i));
  }
  mark_complete(d.store_dir, d);
  std::printf("  %s: wrote %s in %d unit(s) in %.1f s:\n      %s\n", d.profile->name.c_str(),
              format_size(double(d.bytes())).c_str(), d.units, seconds_since(t0),
              printable(d.store_dir).c_str());
  std::fflush(stdout);
}

// Stages the store's data set into the cache with `feedbench stage`, verified. RETURNS: "" or
// why the cache path cannot be measured.
std::string prepare_cache(WorkloadRun& run, const std::string& work, const std::atomic<int>* stop,
                          Clock::time_point deadline) {
  const QualifyDataSet& d = run.data;
  std::string why;
  const FolderState state = folder_state(d.cache_dir, d, &why);
  if (state == FolderState::kNotOurs)
    throw InputError("--cache: " + d.cache_dir + " " + why + ": remove it or choose another --cache");
  if (state == FolderState::kComplete) {
    std::printf("  %s: reusing the staged copy, kept by an earlier qualify:\n      %s\n",
                d.profile->name.c_str(), printable(d.cache_dir).c_str());
    std::fflush(stdout);
    return "";
  }
  if (state == FolderState::kOurs) {
    if (std::string left = remove_qualify_folder(d.cache_dir, d.cache_files()); !left.empty())
      throw RunError("cannot rewrite an earlier qualify's cache: " + left);
  }
  make_qualify_folder(d.cache_dir, d);
  // The store's copy was just written and sits in the page cache: evicted, the stage reads the
  // store, as building a cache from it would. Where it stays (a file system that keeps its own
  // cache), the stage's rate is memory's, and the card leaves it out.
  const Residency left = evict_store_copy(d);
  run.stage_from_store = left.fraction() <= kColdMaxResident;
  if (!run.stage_from_store)
    std::printf(
        "  %s: %s of the store's copy stayed in memory after eviction: the stage's rate is not the "
        "store's, and the card leaves it out\n",
        d.profile->name.c_str(), format_percent(left.fraction()).c_str());
  const std::string log = work + "/stage-" + d.profile->name + ".log";
  const Clock::time_point t0 = Clock::now();
  const ChildRun r = run_this_program(
      {{"stage", "--from", d.store_dir, "--to", d.cache_dir, "--include", "unit_*/**", "--force"}}, {log},
      deadline, stop)[0];
  run.stage_s = seconds_since(t0);
  if (r.exit_code != 0) {
    return r.timed_out ? "the budget ran out while staging" : "the stage failed: " + last_line_of(log);
  }
  mark_complete(d.cache_dir, d);
  std::printf("  %s: staged %s in %.1f s (%s, %s and verified):\n      %s\n", d.profile->name.c_str(),
              format_size(double(d.bytes())).c_str(), run.stage_s,
              format_rate(double(d.bytes()) / std::max(run.stage_s, 1e-3)).c_str(),
              run.stage_from_store ? "read cold" : "read from memory", printable(d.cache_dir).c_str());
  std::fflush(stdout);
  return "";
}

// RETURNS: the folder of `path`'s copy of `run`'s data set.
const std::string& data_folder(const WorkloadRun& run, const std::string& path) {
  return path == "cache" ? run.data.cache_dir : run.data.store_dir;
}

// Writes `config` to <stem>.config.json. RETURNS: the command line (after the program's name) of
// the child `feedbench run` of it, its result to <stem>.result.json.
std::vector<std::string> run_args(const nlohmann::json& config, const std::string& stem) {
  std::ofstream(stem + ".config.json") << config.dump(2) << "\n";
  return {"run",     "--config",    stem + ".config.json", "--out", stem + ".result.json",
          "--quiet", "--no-latency"};
}

// Runs a child `feedbench run` of `config` (written beside `stem`) to its result. RETURNS: the
// result, or nullopt with `why` set (the child failed, the budget ran out, or it was stopped).
std::optional<ResultDocument> run_config(const nlohmann::json& config, const std::string& stem,
                                         Clock::time_point deadline, const std::atomic<int>* stop,
                                         std::string* why) {
  const std::string result = stem + ".result.json", log = stem + ".log";
  const ChildRun r = run_this_program({run_args(config, stem)}, {log}, deadline, stop)[0];
  std::error_code ec;
  if (r.timed_out || r.stopped) *why = r.timed_out ? "the budget ran out" : "interrupted";
  else if (r.exit_code != 0 || !fs::exists(result, ec)) *why = "the run failed: " + last_line_of(log);
  else return ResultDocument::load(result);
  return std::nullopt;
}

// Measures each path's best read rate of `run`'s files (reads_config), kept in run.reads; a
// path that could not be measured is said on the console and left off the card.
void measure_reads(WorkloadRun& run, const std::string& work, Clock::time_point deadline,
                   const std::atomic<int>* stop) {
  for (const PathSearch& ps : run.paths) {
    if (!ps.not_measured.empty() || Clock::now() >= deadline || stop->load() != 0) continue;
    const Clock::time_point t0 = Clock::now();
    std::string why;
    const std::optional<ResultDocument> doc =
        run_config(reads_config(*run.profile, data_folder(run, ps.path), run.data.units, kReadsPassS),
                   work + "/" + run.profile->name + "-" + ps.path + "-reads", deadline, stop, &why);
    if (!doc) {  // a child's last line can be long: wrapped to the console's width
      std::printf("%s\n", wrap_text("  " + run.profile->name + ": the " + ps.path +
                                    "'s best read rate not measured: " + why)
                              .c_str());
      continue;
    }
    run.reads.push_back(read_best_reads(*doc, ps.path, 0));
    std::printf("  %s: the %s reads its files at %s at best (%s, cold; %.0f s)\n", run.profile->name.c_str(),
                ps.path.c_str(), format_rate(run.reads.back().bytes_per_second).c_str(),
                plural(std::size_t(run.reads.back().workers), "reader", "readers").c_str(),
                seconds_since(t0));
    std::fflush(stdout);
  }
}

// Writes a checkpoint into each path's folder and restores it cold (checkpoint_config).
// RETURNS: the card's checkpoints; a path not measured is said on the console.
std::vector<CardCheckpoint> measure_checkpoints(const Options& o, const std::string& work,
                                                Clock::time_point deadline, const std::atomic<int>* stop) {
  std::vector<CardCheckpoint> out;
  if (o.checkpoint_scale <= 0) return out;
  // A run needs a source to scan; the checkpoint never reads it. A folder in the trials' own is
  // outside both paths, as the checkpoint family's scratch must be apart from its source.
  CheckpointPlan plan;
  plan.scale = o.checkpoint_scale;
  plan.source = work + "/checkpoint-source";  // apart from the run's own outputs in `work`
  {
    fs::create_directories(plan.source);
    std::ofstream(plan.source + "/README") << "a source for qualify's checkpoint run to scan; never read\n";
  }
  for (const auto& [path, root] :
       {std::pair<std::string, std::string>{"store", o.store}, {"cache", o.cache}}) {
    if (root.empty() || Clock::now() >= deadline || stop->load() != 0) continue;
    plan.scratch = root;
    const Clock::time_point t0 = Clock::now();
    std::string why;
    const std::optional<ResultDocument> doc =
        run_config(checkpoint_config(plan), work + "/checkpoint-" + path, deadline, stop, &why);
    if (!doc) {
      std::printf("%s\n", wrap_text("  checkpoint: the " + path + "'s not measured: " + why).c_str());
      continue;
    }
    out.push_back(read_checkpoint(*doc, path, plan));
    std::printf("  checkpoint %s, %s: written at %s, restored cold at %s (%.0f s)\n", plan.model.c_str(),
                path.c_str(), format_rate(out.back().write_bytes_per_second).c_str(),
                format_rate(out.back().restore_bytes_per_second).c_str(), seconds_since(t0));
    std::fflush(stdout);
  }
  return out;
}

// Runs ps.searches.back(), repetition `rep` of the search of one workload through one path, until
// it is bracketed or `search_deadline` passes (no trial starts after it; a running one stops at
// `deadline`).
void run_one_search(WorkloadRun& run, PathSearch& ps, int rep, const std::string& work, const Options& o,
                    Clock::time_point search_deadline, Clock::time_point deadline,
                    const std::atomic<int>* stop) {
  SearchRun& sr = ps.searches.back();
  AcceleratorSearch& search = sr.search;
  while (const std::optional<int> k = search.next()) {
    const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (Clock::now() >= search_deadline || stop->load() != 0) {
      ps.budget_ran_out = true;
      return;
    }
    TrialPlan plan;
    plan.profile = run.profile;
    plan.path = ps.path;
    plan.accelerators = *k;
    plan.store_data = run.data.store_dir;
    plan.cache_data = run.data.cache_dir;
    plan.step = run.step;
    plan.target_au = run.target;
    plan.seed = o.seed;
    plan.step_scale = 1 / o.speedup;
    const std::string stem = work + "/" + run.profile->name + "-" + ps.path + "-r" + std::to_string(rep) +
                             "-k" + std::to_string(*k);
    // A built-in workload: one run of K trainers. A trace: K replays of the job at once.
    std::vector<std::vector<std::string>> args;
    std::vector<std::string> logs, outs;
    if (run.profile->trace.empty()) {
      args.push_back(run_args(trial_config(plan), stem));
      outs.push_back(stem + ".result.json");
      logs.push_back(stem + ".log");
    } else {
      for (int u = 0; u < *k; ++u) {
        outs.push_back(stem + "-" + unit_folder(u) + ".result.json");
        args.push_back(replay_args(plan, u, outs.back()));
        logs.push_back(stem + "-" + unit_folder(u) + ".log");
      }
    }
    const std::string repetition = o.repetitions > 1 ? " #" + std::to_string(rep + 1) : std::string();
    std::printf("  [%s left] %-8s %-5s%s %3d accelerator(s): ", minutes_text(left).c_str(),
                run.profile->name.c_str(), ps.path.c_str(), repetition.c_str(), *k);
    std::fflush(stdout);
    const Clock::time_point t0 = Clock::now();
    const std::vector<ChildRun> ran = run_this_program(args, logs, deadline, stop);
    std::vector<TrialResult> each;
    for (std::size_t i = 0; i < ran.size(); ++i) {
      const ChildRun& r = ran[i];
      if (r.timed_out || r.stopped) {
        std::printf("stopped (%s)\n", r.timed_out ? "the budget ran out" : "interrupted");
        std::fflush(stdout);
        ps.budget_ran_out = r.timed_out;
        return;
      }
      std::error_code ec;
      if (r.exit_code != 0 || !fs::exists(outs[i], ec)) {
        std::printf("failed\n");
        std::fflush(stdout);
        ps.not_measured = "the trial of " + std::to_string(*k) + " failed: " + last_line_of(logs[i]);
        return;
      }
      each.push_back(read_trial(ResultDocument::load(outs[i]), run.profile->trace.empty() ? *k : 1));
    }
    TrialResult t = run.profile->trace.empty() ? std::move(each[0]) : combine_replays(std::move(each));
    const StateFigures& cold = t.states[0];
    const StateFigures& steady = t.states[1];
    if (cold.judged)
      std::printf("cold AU %.1f%%, steady AU %.1f%% (%.0f s)\n", 100 * cold.au, 100 * steady.au,
                  seconds_since(t0));
    else  // the reason, which can run long, is the card's to say
      std::printf("not judged (the card says why)\n");
    std::fflush(stdout);
    search.record(t.outcome());
    sr.trials.emplace(*k, std::move(t));
  }
}

// Runs the o.repetitions searches of one workload through one path, one after another, each
// with an equal share of the time to `search_deadline`.
void run_search(WorkloadRun& run, PathSearch& ps, const std::string& work, const Options& o,
                Clock::time_point search_deadline, Clock::time_point deadline, const std::atomic<int>* stop) {
  for (int r = 0; r < o.repetitions && !ps.budget_ran_out && ps.not_measured.empty(); ++r) {
    const auto share = (search_deadline - Clock::now()) / (o.repetitions - r);
    ps.searches.push_back({AcceleratorSearch(run.target, run.cap), {}});
    run_one_search(run, ps, r, work, o, Clock::now() + share, deadline, stop);
    if (stop->load() != 0) return;
  }
}

// RETURNS: the card's cell of `ps` in `state`: the median of its searches' answers, their range
// and count; the limit and one accelerator's need from the search at the median (the lower of
// the two middle ones for an even count).
CardCell card_cell(const WorkloadRun& run, const PathSearch& ps, FedState state) {
  CardCell cell;
  cell.path = ps.path;
  cell.state = state == FedState::kCold ? "cold" : "steady";
  std::vector<std::pair<double, const SearchRun*>> found;  // (fed, search)
  for (const SearchRun& sr : ps.searches)
    if (const FedAnswer a = sr.search.answer(state); a.found) found.emplace_back(a.fed, &sr);
  if (found.empty()) {
    cell.measured = false;
    if (!ps.not_measured.empty()) cell.reason = ps.not_measured;
    else if (ps.budget_ran_out || ps.searches.empty())
      cell.reason = "the budget ran out before its first trial";
    else {
      const std::map<int, TrialResult>& trials = ps.searches.front().trials;
      const auto it = trials.find(1);
      cell.reason =
          it != trials.end() ? "not judged: " + it->second.states[std::size_t(state)].why_not : "not judged";
    }
    return cell;
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  const std::size_t n = found.size();
  cell.accelerators_fed = n % 2 ? found[n / 2].first : (found[n / 2 - 1].first + found[n / 2].first) / 2;
  cell.accelerators_fed_min = found.front().first;
  cell.accelerators_fed_max = found.back().first;
  cell.repetitions = std::int64_t(n);
  const SearchRun& median = *found[(n - 1) / 2].second;
  const FedAnswer a = median.search.answer(state);
  // What stopped K + 1: the trial that fell short; for a fraction of one, K = 1's own.
  const int deciding = a.first_short != 0 ? a.first_short : std::max(a.last_fed, 1);
  const TrialResult& t = median.trials.at(deciding);
  const bool open = a.first_short == 0 && !a.capped;
  if (open && a.unjudged != 0) {
    const StateFigures& u = median.trials.at(a.unjudged).states[std::size_t(state)];
    cell.limit = "not bracketed: " + std::to_string(a.last_fed) +
                 " kept the target (a lower bound); the trial of " + std::to_string(a.unjudged) +
                 " could not be judged: " + u.why_not;
  } else if (open) {
    cell.limit = "not bracketed: the budget ran out after " + std::to_string(a.last_fed) +
                 " kept the target (a lower bound)";
  } else {
    cell.limit = cell_limit(*run.profile, ps.path, a, t, state, run.cap);
  }
  // One accelerator's need at its step: from the trial of one, where it ran alone.
  const TrialResult& one = median.trials.count(1) ? median.trials.at(1) : t;
  cell.per_accelerator = one.need;
  return cell;
}

// Adds to `w` (its cells made) the run's best reads, each with the accelerators it feeds by its
// bytes alone, said too in a CPU-bound cell's limit ("the store could feed 6"), and the stage
// with the epochs after which it pays.
void add_storage_figures(const WorkloadRun& run, const Options& o, CardWorkload& w) {
  // One accelerator's bytes a second: K = 1's, the same in every cell that measured it.
  double need = 0;
  for (const CardCell& c : w.paths)
    if (c.measured && c.per_accelerator.bytes_per_second > 0) {
      need = c.per_accelerator.bytes_per_second;
      break;
    }
  for (CardReads r : run.reads) {
    r.accelerators = need > 0 ? r.bytes_per_second / need : 0;
    for (CardCell& c : w.paths)
      if (c.measured && c.path == r.path) c.limit = limit_with_reads(c, r);
    w.reads.push_back(r);
  }
  if (run.stage_s > 0 && run.stage_from_store) {
    CardStaging st;
    st.bytes = run.data.bytes();
    st.seconds = run.stage_s;
    st.bytes_per_second = double(st.bytes) / run.stage_s;
    st.epochs_of_reading = staging_epochs_of_reading(w, st.bytes_per_second, o.accelerators_per_node);
    st.pays_after_epochs = staging_pays_after_epochs(w, st.bytes_per_second, o.accelerators_per_node);
    w.staging = st;
  }
}

// RETURNS: the card of `runs`; `labels` gets a name for each result it holds ("images store K=2").
Card make_card(const std::vector<WorkloadRun>& runs, const Options& o, std::vector<std::string>* labels) {
  Card card;
  card.created_utc = utc_timestamp();
  card.feedbench_version = describe_tool().value("version", "");
  card.target_au = o.target_au.value_or(runs.empty() ? 0.9 : runs.front().target);
  card.speedup = o.speedup;
  card.accelerators_per_node = o.accelerators_per_node;
  std::vector<std::pair<const TrialResult*, std::string>> deciding;  // with its path
  for (const WorkloadRun& run : runs) {
    CardWorkload w;
    w.name = run.profile->name;
    w.step_ns = run.step.count();
    w.step_source = run.profile->source +
                    (o.speedup != 1 ? format_printf("; ÷ %g (--speedup)", o.speedup) : std::string()) +
                    format_printf("; target AU %.0f%%", 100 * run.target);
    for (const PathSearch& ps : run.paths) {
      for (FedState s : kFedStates) w.paths.push_back(card_cell(run, ps, s));
      // The trials that bracket an answer, and K = 1's (one accelerator's need), are the evidence
      // a card carries.
      for (std::size_t r = 0; r < ps.searches.size(); ++r)
        for (const auto& [k, t] : ps.searches[r].trials) {
          bool decides = k == 1;
          for (FedState s : kFedStates) {
            const FedAnswer a = ps.searches[r].search.answer(s);
            decides = decides || k == a.last_fed || k == a.first_short;
          }
          if (!decides) continue;
          deciding.emplace_back(&t, ps.path);
          labels->push_back(run.profile->name + " " + ps.path +
                            (ps.searches.size() > 1 ? " #" + std::to_string(r + 1) : std::string()) +
                            " K=" + std::to_string(k));
        }
    }
    add_storage_figures(run, o, w);
    card.workloads.push_back(std::move(w));
  }
  for (const auto& [trial, path] : deciding) {
    const ResultDocument& doc = trial->document;
    if (card.host.empty()) card.host = doc.environment.value("host", nlohmann::json::object());
    // A trial reads its path's folder as its source (trial.h).
    const nlohmann::json paths = doc.environment.value("paths", nlohmann::json::object());
    if (paths.contains("source") && !card.storage.contains(path)) card.storage[path] = paths["source"];
    card.results.push_back(doc);
  }
  return card;
}

// RETURNS: one run per workload, each with its data set and a search per path.
std::vector<WorkloadRun> plan_runs(const Options& o) {
  std::vector<WorkloadRun> runs;
  for (const WorkloadProfile* p : o.workloads) {
    WorkloadRun run;
    run.profile = p;
    run.cap = o.max_accelerators.value_or(p->default_max_accelerators);
    run.target = o.target_au.value_or(p->target_au);
    run.step = std::chrono::nanoseconds(std::int64_t(double(p->step.count()) / o.speedup));
    run.speedup = o.speedup;
    run.data = qualify_data_set(*p, run.cap, o.seed, o.store, o.cache);
    for (const char* path : {"store", "cache"}) {
      if (std::string(path) == "cache" && o.cache.empty()) continue;
      PathSearch ps;
      ps.path = path;
      run.paths.push_back(std::move(ps));
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

// Refuses a data set folder qualify did not make, and data sets the folders have no room for,
// before anything is written; prints the plan and its estimate. One workload's data sets are
// removed before the next one's are written, so without --keep the largest counts; with it,
// all of them. RETURNS: the estimate in seconds.
double check_room_and_estimate(const std::vector<WorkloadRun>& runs, const Options& o) {
  std::uint64_t store_need = 0, cache_need = 0, store_written = 0;
  double estimate = 0;
  for (const WorkloadRun& run : runs) {
    std::string why;
    const FolderState s = folder_state(run.data.store_dir, run.data, &why);
    if (s == FolderState::kNotOurs)
      throw InputError("--store: " + run.data.store_dir + " " + why +
                       ": remove it or choose another --store");
    FolderState c = FolderState::kMissing;
    if (!run.data.cache_dir.empty()) {
      c = folder_state(run.data.cache_dir, run.data, &why);
      if (c == FolderState::kNotOurs)
        throw InputError("--cache: " + run.data.cache_dir + " " + why +
                         ": remove it or choose another --cache");
    }
    const std::uint64_t bytes = run.data.bytes();
    const std::uint64_t store_bytes = s != FolderState::kComplete ? bytes : 0;
    const std::uint64_t cache_bytes = !run.data.cache_dir.empty() && c != FolderState::kComplete ? bytes : 0;
    store_written += store_bytes;
    store_need = o.keep ? store_need + store_bytes : std::max(store_need, store_bytes);
    cache_need = o.keep ? cache_need + cache_bytes : std::max(cache_need, cache_bytes);
    estimate +=
        estimate_seconds(run, s == FolderState::kComplete, c == FolderState::kComplete, o.repetitions);
  }
  // The checkpoint is written while the first data set is there, and removed at once.
  std::int64_t ranks = 0;
  const std::uint64_t checkpoint_bytes =
      std::uint64_t(o.checkpoint_scale * double(checkpoint_full_bytes(kQualifyCheckpointModel, &ranks)));
  if (checkpoint_bytes > 0) {
    const int paths = o.cache.empty() ? 1 : 2;
    estimate += paths * (2 * double(checkpoint_bytes) / kStageBytesPerSecond + kRunOverheadS);
    store_need += checkpoint_bytes;
    cache_need += o.cache.empty() ? 0 : checkpoint_bytes;
  }
  const std::string what = checkpoint_bytes > 0 ? "the data sets and the checkpoint (" +
                                                      format_size(double(checkpoint_bytes)) + ") need "
                                                : std::string("the data sets need ");
  const std::string fewer = checkpoint_bytes > 0
                                ? "fewer --workload, a lower --max-accelerators or --checkpoint-scale"
                                : "fewer --workload, a lower --max-accelerators";
  auto room = [&](const std::string& option, const std::string& dir, std::uint64_t need) {
    const std::int64_t free = free_bytes_at(dir);
    if (free >= 0 && std::uint64_t(free) < need + need / 20)
      throw InputError(option + ": " + what + format_size(double(need)) + " (and 5% to spare) in " + dir +
                       ", which has " + format_size(double(free)) + " free: " + fewer +
                       ", or another folder");
  };
  room("--store", o.store, store_need);
  if (!o.cache.empty()) {
    // One file system for both: the two copies together.
    const bool same_fs = free_bytes_at(o.store) == free_bytes_at(o.cache) &&
                         file_system_at(o.store) == file_system_at(o.cache);
    room("--cache", o.cache, same_fs ? cache_need + store_need : cache_need);
  }

  std::printf("feedbench qualify: %zu workload(s), %s; data to write %s%s; estimate about %s, budget %s\n",
              runs.size(), o.cache.empty() ? "the store" : "store and cache",
              format_size(double(store_written)).c_str(), o.cache.empty() ? "" : " a path",
              duration_text(estimate).c_str(), o.budget_text.c_str());
  for (const WorkloadRun& run : runs) {
    const WorkloadProfile& p = *run.profile;
    const std::string epoch = p.trace.empty() ? std::to_string(epoch_steps(p)) + " steps of " +
                                                    std::to_string(p.batch_size) + " a trial epoch"
                                              : "its recorded pass a trial epoch";
    std::printf("  %-8s %s: K up to %d, %s, step %s, target AU %.0f%%\n", p.name.c_str(),
                p.like.substr(0, p.like.find(':')).c_str(), run.cap, epoch.c_str(),
                format_duration_ns(double(run.step.count())).c_str(), 100 * run.target);
  }
  if (checkpoint_bytes > 0)
    std::printf("  checkpoint llama3-8b x %g: %s by %lld ranks, written to %s and restored cold\n",
                o.checkpoint_scale, format_size(double(checkpoint_bytes)).c_str(),
                static_cast<long long>(ranks), o.cache.empty() ? "the store" : "each path");
  if (estimate > 1e-9 * double(o.budget_ns))
    std::printf("  the estimate is over the budget: cells it leaves unmeasured will say so on the card\n");
  std::fflush(stdout);
  return estimate;
}

// Removes `run`'s data sets unless --keep. RETURNS: false when a folder stays (said on stderr).
bool remove_data(const WorkloadRun& run, const Options& o) {
  if (o.keep) return true;
  bool removed = true;
  for (const auto& [dir, files] : {std::pair{run.data.store_dir, run.data.store_files()},
                                   std::pair{run.data.cache_dir, run.data.cache_files()}}) {
    if (dir.empty()) continue;
    const FolderState state = folder_state(dir, run.data, nullptr);
    if (state == FolderState::kNotOurs || state == FolderState::kMissing) continue;
    if (const std::string left = remove_qualify_folder(dir, files); !left.empty()) {
      std::fprintf(stderr, "feedbench qualify: %s\n", printable(left).c_str());
      removed = false;
    }
  }
  return removed;
}

// Writes each run's data sets and runs its searches, one workload after another, within the
// budget. RETURNS: false when a data set folder could not be removed.
bool measure_all(std::vector<WorkloadRun>& runs, const Options& o, const std::string& work,
                 Clock::time_point deadline, const std::atomic<int>* stop,
                 std::vector<CardCheckpoint>* checkpoints) {
  bool removed = true;
  std::size_t searches_left = 0;
  for (const WorkloadRun& run : runs) searches_left += run.paths.size();
  for (WorkloadRun& run : runs) {
    try {
      if (Clock::now() < deadline && stop->load() == 0) {
        prepare_store(run, stop);
        if (run.paths.size() > 1)
          if (std::string why = prepare_cache(run, work, stop, deadline); !why.empty())
            run.paths[1].not_measured = why;
        measure_reads(run, work, deadline, stop);
        // Once per card, before the searches take their shares of the time.
        if (&run == &runs.front()) *checkpoints = measure_checkpoints(o, work, deadline, stop);
      }
      for (PathSearch& ps : run.paths) {
        // Each search gets an equal share of what is left, so one slow workload cannot starve the rest.
        const auto share = (deadline - Clock::now()) / std::max<std::size_t>(searches_left, 1);
        --searches_left;
        if (!ps.not_measured.empty()) continue;
        if (Clock::now() >= deadline) {
          ps.budget_ran_out = true;
          continue;
        }
        run_search(run, ps, work, o, Clock::now() + share, deadline, stop);
      }
    } catch (...) {
      remove_data(run, o);
      throw;
    }
    removed = remove_data(run, o) && removed;
    if (stop->load() != 0) break;
  }
  return removed;
}

// Prints the card and writes its files. RETURNS: whether any cell was measured.
bool write_card(const std::vector<WorkloadRun>& runs, const Options& o, Clock::time_point started,
                const std::vector<CardCheckpoint>& checkpoints) {
  std::vector<std::string> labels;
  Card card = make_card(runs, o, &labels);
  card.checkpoints = checkpoints;
  bool measured = false;
  for (const CardWorkload& w : card.workloads)
    for (const CardCell& c : w.paths) measured = measured || c.measured;
  std::printf("\n%s", card_console(card).c_str());
  std::printf("took %s (budget %s)\n", duration_text(seconds_since(started)).c_str(), o.budget_text.c_str());
  // The default name never replaces a file (another card of the same second): the first free "-N".
  const std::string written = write_file_atomically(
      o.out, card.dump(),
      o.default_out ? AtomicFile::Existing::kNeverReplace : AtomicFile::Existing::kReplace);
  std::printf("card: %s\n", written.c_str());
  if (!o.markdown.empty())
    std::printf("markdown: %s\n", write_file_atomically(o.markdown, card_markdown(card)).c_str());
  if (!o.html.empty()) {
    write_html_report(card.results, labels, o.html, "Qualification card", {}, cards_html({card}, {written}));
    std::printf("html: %s\n", o.html.c_str());
  }
  return measured;
}

}  // namespace

int qualify_main(int argc, char** argv) {
  bool help = false;
  const Options o = parse_options(argc, argv, &help);
  if (help) return 0;
  check_folders(o);
  std::vector<WorkloadRun> runs = plan_runs(o);
  check_room_and_estimate(runs, o);
  if (o.dry_run) return 0;

  StopOnSignals stop_on_signals;
  const std::atomic<int>* stop = stop_on_signals.flag();
  const Clock::time_point started = Clock::now();
  const Clock::time_point deadline = started + std::chrono::nanoseconds(o.budget_ns);
  // The trials' configs, logs and results: a private folder, removed at the end.
  const char* tmpdir = std::getenv("TMPDIR");
  std::string work = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/feedbench-qualify-XXXXXX";
  if (!::mkdtemp(work.data())) throw RunError("cannot create a folder for the trials in " + folder_of(work));
  struct RemoveWork {
    std::string path;
    ~RemoveWork() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } remove_work{work};

  std::vector<CardCheckpoint> checkpoints;
  const bool removed = measure_all(runs, o, work, deadline, stop, &checkpoints);
  if (stop->load() != 0) {
    std::fprintf(stderr, "feedbench qualify: interrupted; no card written\n");
    return 128 + stop->load();
  }
  const bool measured = write_card(runs, o, started, checkpoints);
  return measured && removed ? 0 : 1;
}

}  // namespace feedbench
