// `feedbench report RESULT.json [MORE.json...] --out report.html`: one or more result files
// turned into one self-contained HTML page (reporters/html_report.cc renders it).
#include <cstdio>
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
#include "feedbench/results/result.h"
#include "reporters/card_report.h"
#include "reporters/html_report.h"
#include "verbs.h"

namespace po = boost::program_options;

namespace feedbench {
namespace {

constexpr const char* kUsage =
    "usage: feedbench report RESULT.json [MORE.json...] --out report.html [--title TEXT] [--label NAME...]\n"
    "\n"
    "Writes one self-contained HTML page: the verdict per path, the environment, each path's\n"
    "device and file system, the data set, the config and command line to rerun it, charts\n"
    "(throughput vs workers, cold vs warm, latency CDF, loader AU) and a table of every case.\n"
    "With several result files (instance types, before/after) every chart has one series per\n"
    "file, named by the file's label (--label, once per file; else the cache manifest's label, the\n"
    "instance type or the file name, whichever tells the files apart), and a table gives the\n"
    "ratios, coloured where `feedbench diff` judges the change significant. Chart.js is inlined:\n"
    "the page makes no network request.\n"
    "The verdict is the answers the run stored in its summary, as its console printed them\n"
    "(summarised again, by the same rules, only for a file from an older feedbench).\n"
    "Every figure is folded as the run's console summary folds it: the median of a case's\n"
    "achieved repetitions; a round whose cache state was not the one asked for, or that read\n"
    "less than planned, is excluded and named; a calibration case (samples from memory) is in\n"
    "no headline. The environment variables shown are those that were set; the config's\n"
    "${VAR:-default} fallbacks that applied are listed apart, as defaults.\n"
    "\n"
    "Given qualification cards (schema feedbench-card/1, docs/card.md), the page opens with the\n"
    "card's table, or for several one table with each card's accelerators fed and limits side by\n"
    "side (labels as above: the host's instance type, else the file name), followed by the\n"
    "report of the result documents the cards hold; each card is printed as the console shows it\n"
    "(its table, then what to do) before the page's path. Cards and result files are not mixed.\n"
    "\n"
    "exit codes: 0 written, 2 bad input (unreadable or malformed result file, missing --out, an\n"
    "            --out that cannot be written or is one of the result files (by device and\n"
    "            inode), --label not given once per file or repeated: checked before anything\n"
    "            is read).\n"
    "\n"
    "examples:\n"
    "  feedbench report results/demo/host-20240101T000000Z.json --out demo.html\n"
    "  feedbench report p4d.json p5.json --out compare.html --title \"p4d vs p5\"\n"
    "  feedbench report a.json b.json --label before --label after --out compare.html\n"
    "  feedbench report card-p4d.json card-p5.json --out cards.html\n"
    "\n";

// Writes the page of `files`, cards: their table at its head, then the report of the result
// documents they hold (a card's label, with " #N" where it holds several).
void write_card_report(std::vector<CardOrResult>& inputs, const std::vector<std::string>& files,
                       const std::vector<std::string>& given, const std::string& out, std::string title) {
  std::vector<Card> cards;
  for (CardOrResult& input : inputs) cards.push_back(std::move(std::get<Card>(input)));
  // Labelled as result files are: by the host's instance type, else the file's name.
  std::vector<ResultDocument> hosts(cards.size());
  for (std::size_t i = 0; i < cards.size(); ++i) hosts[i].environment["host"] = cards[i].host;
  const std::vector<std::string> names = report_labels(hosts, files, given);
  std::vector<ResultDocument> docs;
  std::vector<std::string> doc_names;
  // The result documents move to the page's report: the cards' tables never read them.
  for (std::size_t i = 0; i < cards.size(); ++i) {
    const std::size_t held = cards[i].results.size();
    for (std::size_t k = 0; k < held; ++k) {
      docs.push_back(std::move(cards[i].results[k]));
      doc_names.push_back(names[i] + (held > 1 ? " #" + std::to_string(k + 1) : ""));
    }
  }
  for (const Card& card : cards) std::printf("%s\n", card_console(card).c_str());
  if (title.empty() && docs.empty()) title = cards.size() == 1 ? "Qualification card" : "Qualification cards";
  write_html_report(docs, doc_names, out, title, {}, cards_html(cards, names));
}

}  // namespace

int report_main(int argc, char** argv) {
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")("out,o", po::value<std::string>()->value_name("FILE"),
                                                    "the HTML file to write (required)")(
      "title", po::value<std::string>()->value_name("TEXT"), "page title (default: the config names)")(
      "label", po::value<std::vector<std::string>>()->composing()->value_name("NAME"),
      "a file's name on the page; once per file, in order");
  po::options_description all;
  all.add(visible).add_options()("results", po::value<std::vector<std::string>>(), "result files");
  po::positional_options_description positional;
  positional.add("results", -1);
  po::variables_map vm;
  if (parse_command_line(argc, argv, all, vm, &positional)) {
    std::cout << kUsage << "\noptions:\n" << options_help(visible);
    return 0;
  }
  if (!vm.count("results")) throw InputError("expected at least one result file (RESULT.json)");
  if (!vm.count("out")) throw InputError("--out: expected the HTML file to write, e.g. --out report.html");
  std::vector<std::string> files = vm["results"].as<std::vector<std::string>>();
  const std::string out = vm["out"].as<std::string>();
  require_writable_file("--out", out);  // before reading and rendering
  std::vector<NamedPath> inputs;
  for (const std::string& f : files) inputs.push_back({"RESULT", f});
  check_outputs_apart({{"--out", out}}, inputs, {});  // the page never replaces a result it shows
  const std::vector<std::string> given =
      vm.count("label") ? vm["label"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (!given.empty())  // a wrong count or a repeated label is refused before anything is read
    report_labels(std::vector<ResultDocument>(files.size()), files, given);
  // Each file read once (InputError names it), cards and result files alike, never mixed.
  std::vector<CardOrResult> loaded;
  for (const auto& f : files) loaded.push_back(load_card_or_result(f));
  if (all_cards(loaded, files)) {
    write_card_report(loaded, files, given, out, vm.count("title") ? vm["title"].as<std::string>() : "");
    std::printf("%s\n", out.c_str());
    return 0;
  }
  std::vector<ResultDocument> docs;
  for (CardOrResult& input : loaded) docs.push_back(std::move(std::get<ResultDocument>(input)));
  loaded.clear();
  write_html_report(docs, report_labels(docs, files, given), out,
                    vm.count("title") ? vm["title"].as<std::string>() : "", files);
  std::printf("%s\n", out.c_str());
  return 0;
}

}  // namespace feedbench
