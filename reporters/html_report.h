// The HTML report: one or more result files turned into a single self-contained page (verdict,
// environment, paths, data set, config, command line, charts and tables). Chart.js and the
// data are inlined, so the page opens offline and makes no network request. A file whose cache
// was measured though it failed its checks says "(cache unverified)" beside each cache figure:
// its headline sentences, case rows, ratio cells and the charts' name for the path (cache_trust.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/results/result.h"

namespace feedbench {

// The data the page's charts draw from, one entry per document under "files": per case the
// median of its repetitions' counters, the cache flags, errors and the latency CDF (µs); a file
// whose cache was unverified also has "cache_qualifier" (kCacheUnverified), which the charts put
// beside its cache path.
// REQUIRES: names.size() == docs.size(). RETURNS: {"files": [{"name", "cases": [...]}, ...]}.
nlohmann::json html_report_data(const std::vector<ResultDocument>& docs,
                                const std::vector<std::string>& names);

// RETURNS: the verdict of one document, as sentences: the answers of the document's summary
// (summary.h: summary_of, answer_sentences), which the console and Markdown print too; one
// sentence saying there is nothing to judge when they are empty.
std::vector<std::string> html_report_verdicts(const ResultDocument& doc);

// The name each file goes by on the page (series, columns, headings), never its path unless
// nothing else tells the files apart. `given`: the report's --label values, one per file in
// order, or empty. Otherwise the first of these that is set for every file and distinct
// between them: the cache manifest's label (the data version), the instance type, the file
// name without its extension; else the path. A single file: its manifest label, else its name.
// Throws InputError when `given` is not one non-empty, distinct label per file.
std::vector<std::string> report_labels(const std::vector<ResultDocument>& docs,
                                       const std::vector<std::string>& files,
                                       const std::vector<std::string>& given);

// RETURNS: the whole page. `title` empty: derived from the config names. `files`: the result
// files' paths, shown beside their labels in the header (empty: not shown). `lead_html`: a
// section put at the head of the page, under its title (qualification cards: card_report.h).
// REQUIRES: names.size() == docs.size(), docs not empty, files empty or one per document.
std::string render_html_report(const std::vector<ResultDocument>& docs, const std::vector<std::string>& names,
                               const std::string& title = "", const std::vector<std::string>& files = {},
                               const std::string& lead_html = "");

// RETURNS: a page of `lead_html` alone under `title`, styled as the report (cards that hold no
// result documents).
std::string render_lead_page(const std::string& title, const std::string& lead_html);

// Writes the page to out_path atomically (temporary name, then rename): with no documents,
// render_lead_page's page. Throws RunError when it cannot write.
void write_html_report(const std::vector<ResultDocument>& docs, const std::vector<std::string>& names,
                       const std::string& out_path, const std::string& title = "",
                       const std::vector<std::string>& files = {}, const std::string& lead_html = "");

}  // namespace feedbench
