// `feedbench diff BASE NEW`: compares two result files and says, with its exit code, whether
// NEW regressed (harness/results/comparison.cc judges, reporters/diff_formats.cc shows).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <boost/program_options.hpp>

#include "command_line.h"
#include "feedbench/base/error.h"
#include "feedbench/plan/preflight.h"
#include "feedbench/results/card.h"
#include "feedbench/results/comparison.h"
#include "feedbench/results/result.h"
#include "reporters/card_report.h"
#include "reporters/diff_formats.h"
#include "verbs.h"

namespace po = boost::program_options;

namespace feedbench {
namespace {

constexpr const char* kUsage =
    "usage: feedbench diff BASE.json [MORE_BASE.json...] NEW.json [options]\n"
    "\n"
    "Compares two result files case by case. A metric regressed when its median over the\n"
    "repetitions is worse than --threshold AND a two-sided Mann-Whitney U test over the\n"
    "repetitions gives p < --alpha. With too few repetitions for the test to reach alpha, the\n"
    "threshold and the noise rule decide, and the verdict is marked weak (one note says so).\n"
    "\n"
    "Without --metric, each case is judged on the metrics that gate its family (below):\n"
    "file_read on bytes_per_second and lat_p99_us, stage on bytes_per_second, the loader on au\n"
    "and wait_p99_ms. A change smaller than a metric's floor is not judged. A change beyond\n"
    "the threshold is noisy - listed, counted apart, never a regression - when either side's\n"
    "spread (coefficient of variation of its repetitions), or for a case served from memory\n"
    "the host's load per core, could explain it (bands are factors on a log scale), or when\n"
    "it is a p99-or-beyond tail and either run had more runnable tasks than cores\n"
    "(--no-noise-rule: raw verdicts). The load counts only when the two runs' loads differ\n"
    "(by more than 10% of the larger, or 0.1 per core) or the verdict is weak. Where both\n"
    "files record the cores other programs took, a CPU-bound figure (served from memory, a\n"
    "loader, a watched job, a replay) worse on the busier side by up to the share of the cores\n"
    "taken is noisy too, the shares named.\n"
    "\n"
    "Repetitions within one run cannot show how far a second run lands. Give several runs of\n"
    "BASE (one config and build, measured apart; all files but the last): their repetitions\n"
    "are judged together, and a change by less than the square of the largest ratio between\n"
    "two runs' medians is noisy, named with that ratio. tools/aa-check measures such runs.\n"
    "\n"
    "Each side is judged without its outlier repetitions: per metric, farther from the case's\n"
    "median than 3.5 scaled MADs, 10% and the metric's floor, in 4 or more repetitions, at\n"
    "most a quarter of them. Each one set aside is named under its case.\n"
    "\n"
    "A case of BASE that NEW did not measure (absent, or every repetition excluded: cache state\n"
    "not achieved, a short round, errored or skipped) is missing, and fails the diff unless\n"
    "--allow-missing. Only counted repetitions are judged, as every report folds them.\n"
    "\n"
    "Given two qualification cards (schema feedbench-card/1, docs/card.md), compares them cell\n"
    "by cell (workload, path, state): a cell feeds fewer accelerators beyond noise when NEW's\n"
    "median is below the lowest repetition of BASE and BASE's median above the highest of NEW; a\n"
    "drop within either cell's spread is noisy, listed with its range. A cell one card holds and\n"
    "the other does not, or that either left unmeasured, is listed, never a regression. Only\n"
    "--out and --format table apply to cards; a card and a result file together are bad input.\n"
    "\n"
    "exit codes: 0 no regression, 1 regression, a missing case, nothing compared at all (or\n"
    "            --strict and the runs are not comparable), 2 bad input (unreadable or\n"
    "            malformed file, unknown schema, no common case, an --out that cannot be\n"
    "            written or is a file it compares (by device and inode): checked before\n"
    "            comparing).\n"
    "How to gate CI with it: results/GATING.md.\n"
    "\n"
    "examples:\n"
    "  feedbench diff results/baselines/p4d.24xlarge/demo.json new.json\n"
    "  feedbench diff base-1.json base-2.json base-3.json new.json\n"
    "  feedbench diff base.json new.json --metric lat_p99_us --threshold 10 --format markdown\n"
    "  feedbench diff base.json new.json --format junit --out diff.xml --strict\n"
    "  feedbench diff base.json new.json --exclude 'state:warm' --include '^file_read/'\n"
    "  feedbench diff card-p4d.json card-p5.json\n"
    "\n";

std::string metric_list() {
  std::string s;
  for (const CounterInfo* row : judged_metrics()) {
    const CounterInfo& m = *row;
    std::string name = m.name;
    std::string gates;
    for (const std::string& f : m.gates) gates += (gates.empty() ? "" : ", ") + f;
    s += "  " + name + std::string(name.size() < 20 ? 20 - name.size() : 1, ' ') +
         (m.direction == Direction::kHigherIsBetter ? "(higher is better" : "(lower is better") +
         (*m.floor_text ? std::string(", floor ") + m.floor_text : std::string()) +
         (gates.empty() ? std::string(")\n") : "; gates " + gates + " by default)\n");
  }
  return s;
}

// RETURNS: `text` as a finite number when all of it is one, else NaN.
double parse_whole_number(const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nan("");
  }
  return used == text.size() && std::isfinite(v) ? v : std::nan("");
}

// "5", "5%" and "2.5%" all mean percent.
double parse_percent(std::string text, const char* option) {
  if (!text.empty() && text.back() == '%') text.pop_back();
  const double v = parse_whole_number(text);
  if (!(v >= 0))
    throw InputError(std::string(option) + ": expected a percentage such as 5 or 5%, got '" + text + "'");
  return v / 100;
}

double parse_alpha(const std::string& text) {
  const double v = parse_whole_number(text);
  if (!(v > 0 && v < 1))
    throw InputError("--alpha: expected a significance level between 0 and 1 such as 0.05, got '" + text +
                     "'");
  return v;
}

// The data version each side measured: the same label on both is part of "same experiment".
// RETURNS: "cache label: BASE \"v1\", NEW \"v2\"\n", or "" when neither side read a cache.
std::string cache_label_line(const ResultDocument& base, const ResultDocument& next) {
  auto label = [](const ResultDocument& d) {
    const auto& m = d.dataset.contains("cache") ? d.dataset["cache"].value("manifest", nlohmann::json())
                                                : nlohmann::json();
    return m.is_object() && m.contains("label") ? "\"" + m.value("label", "") + "\""
                                                : std::string("(no cache)");
  };
  const std::string a = label(base), b = label(next);
  if (a == "(no cache)" && b == "(no cache)") return "";
  return "cache label: BASE " + a + ", NEW " + b + "\n";
}

// The options that judge result files; none of them means anything for two cards.
constexpr const char* kResultOnlyOptions[] = {"metric",  "threshold", "alpha",         "match-ignore",
                                              "include", "exclude",   "no-noise-rule", "rerun-result",
                                              "list",    "strict",    "allow-missing"};

// `feedbench diff CARD_A CARD_B`: cell by cell (harness/results/card.cc judges,
// reporters/card_report.cc shows). RETURNS: the exit code.
// REQUIRES: --out, when given, checked as for result files.
int diff_cards(const std::vector<CardOrResult>& inputs, const std::vector<std::string>& files,
               const po::variables_map& vm, const std::string& format, const std::string& out) {
  for (const char* option : kResultOnlyOptions)
    if (vm.count(option) && !vm[option].defaulted())
      throw InputError(std::string("--") + option + ": applies to result files, not to cards");
  if (format != "table") throw InputError("--format " + format + ": cards are compared as a table only");
  if (files.size() != 2) throw InputError("expected two cards: feedbench diff CARD_A.json CARD_B.json");
  const std::string& base_file = files.front();
  const std::string& new_file = files.back();
  const Card& base = std::get<Card>(inputs.front());
  const Card& next = std::get<Card>(inputs.back());
  const CardComparison comparison = compare_cards(base, next);
  const std::string text = format_card_diff(comparison, base_file, new_file);
  if (out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  } else {
    write_file_atomically(out, text);
    std::fprintf(stderr, "feedbench diff: %zu cell(s) feed fewer, %zu noisy, %zu compared; wrote %s\n",
                 comparison.count(CellVerdict::kFewer), comparison.count(CellVerdict::kNoisy),
                 comparison.compared(), out.c_str());
  }
  return comparison.exit_code();
}

}  // namespace

int diff_main(int argc, char** argv) {
  std::vector<std::string> files;
  std::string threshold = "5", alpha = "0.05", format = "table", out;
  std::vector<std::string> metrics, match_ignore, include, exclude;
  std::string rerun_result, list;
  po::options_description visible("options");
  visible.add_options()("help,h", "print this help")(
      "metric", po::value(&metrics)->composing()->value_name("NAME"),
      "judge this metric in every case that has it (repeatable); default: each family's gating ones")(
      "threshold", po::value(&threshold)->value_name("PERCENT"),
      "smallest change of the median that counts, in percent (default 5)")(
      "alpha", po::value(&alpha)->value_name("P"),
      "significance level of the Mann-Whitney U test (default 0.05)")(
      "match-ignore", po::value(&match_ignore)->composing()->value_name("KEY"),
      "leave this case-name key out when matching cases, e.g. bs (repeatable)")(
      "include", po::value(&include)->composing()->value_name("REGEX"),
      "compare only the cases whose name matches (ECMAScript, searched; repeatable)")(
      "exclude", po::value(&exclude)->composing()->value_name("REGEX"),
      "leave out the cases whose name matches (repeatable; wins over --include)")(
      "no-noise-rule", "judge without the noise rule (raw verdicts; for looking, not for CI)")(
      "rerun-result", po::value(&rerun_result)->value_name("FILE"),
      "a confirmation re-run: its cases' repetitions replace NEW's (check-regression --confirm)")(
      "list", po::value(&list)->value_name("WHAT"),
      "print only the NEW names of the cases judged so, one a line: 'regressed'")(
      "strict", "comparability warnings (config, data set, versions, host, paths) fail the diff")(
      "allow-missing", "cases of BASE that NEW did not measure are listed but do not fail the diff")(
      "format", po::value(&format)->value_name("FORMAT"), "table (default), markdown, json or junit")(
      "out", po::value(&out)->value_name("FILE"), "write there (atomically) instead of to stdout");
  po::options_description hidden;
  hidden.add_options()("files", po::value(&files)->composing());
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description positional;
  positional.add("files", -1);
  po::variables_map vm;
  if (parse_command_line(argc, argv, all, vm, &positional)) {
    std::cout << kUsage << "\noptions:\n" << options_help(visible) << "\nmetrics:\n" << metric_list();
    return 0;
  }
  if (files.size() < 2)
    throw InputError(
        "expected two result files or more: feedbench diff BASE.json [MORE_BASE.json...] NEW.json");
  // An empty file name would be taken as none given (stdout, no re-run): refused instead.
  for (const char* option : {"out", "rerun-result"})
    if (vm.count(option) && vm[option].as<std::string>().empty())
      throw InputError(std::string("--") + option + ": expected a file name, got ''");
  // The last file is NEW; every one before it a run of BASE.
  const std::string new_file = files.back();
  const std::vector<std::string> base_files(files.begin(), files.end() - 1);

  CompareOptions options;
  options.metrics = metrics;
  options.threshold = parse_percent(threshold, "--threshold");
  options.alpha = parse_alpha(alpha);
  options.match_ignore = match_ignore;
  options.allow_missing = vm.count("allow-missing") > 0;
  options.include = include;
  options.exclude = exclude;
  options.noise_rule = vm.count("no-noise-rule") == 0;
  if (vm.count("list") && list != "regressed") throw InputError("--list " + list + ": expected 'regressed'");
  const DiffFormat fmt = parse_diff_format(format);
  const bool strict = vm.count("strict") > 0;

  // Everything that can be bad input is checked before anything is written, the output path
  // first: a path that cannot be written is bad input (2), never a late "regression" (1).
  if (!out.empty()) {
    require_writable_file("--out", out);
    std::vector<NamedPath> inputs;
    for (const std::string& f : base_files) inputs.push_back({"BASE", f});
    inputs.push_back({"NEW", new_file});
    if (!rerun_result.empty()) inputs.push_back({"--rerun-result", rerun_result});
    check_outputs_apart({{"--out", out}}, inputs, {});
  }
  // Each file read once, cards and result files alike; a mix of the two is refused.
  std::vector<CardOrResult> inputs;
  for (const std::string& f : files) inputs.push_back(load_card_or_result(f));
  if (all_cards(inputs, files)) return diff_cards(inputs, files, vm, format, out);
  std::vector<ResultDocument> base_runs;
  for (std::size_t i = 0; i + 1 < inputs.size(); ++i)
    base_runs.push_back(std::move(std::get<ResultDocument>(inputs[i])));
  std::vector<const ResultDocument*> base_pointers;
  for (const ResultDocument& d : base_runs) base_pointers.push_back(&d);
  ResultDocument next = std::move(std::get<ResultDocument>(inputs.back()));
  inputs.clear();
  std::vector<std::string> rerun_cases;
  if (!rerun_result.empty())
    next = replace_cases(std::move(next), ResultDocument::load(rerun_result), match_ignore, &rerun_cases);
  Comparison comparison = compare_results(base_pointers, next, options, base_files, new_file);
  if (!rerun_result.empty()) {
    comparison.rerun_file = rerun_result;
    comparison.rerun_cases = rerun_cases;
  }
  if (!list.empty()) {
    for (const CaseComparison& k : comparison.cases)
      if (k.regressed()) std::printf("%s\n", k.new_name.c_str());
    std::fflush(stdout);
    return comparison.exit_code(strict);
  }

  DiffFormatOptions show;
  show.strict = strict;
  const char* no_color = std::getenv("NO_COLOR");
  show.colour = out.empty() && interactive_terminal(STDOUT_FILENO) && !(no_color && *no_color);
  std::string text = format_diff(comparison, fmt, show);
  if (fmt == DiffFormat::kTable) text = cache_label_line(base_runs.front(), next) + text;
  if (out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  } else {
    write_file_atomically(out, text);
    // The verdict still reaches a person reading the CI log.
    std::fprintf(stderr,
                 "feedbench diff: %zu regression(s), %zu improvement(s), %zu noisy, %zu missing, %zu "
                 "compared; wrote %s\n",
                 comparison.regressions(), comparison.improvements(), comparison.noisy(),
                 comparison.missing(), comparison.compared(), out.c_str());
  }
  return comparison.exit_code(strict);
}

}  // namespace feedbench
