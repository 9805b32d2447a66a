// Table, Markdown, JSON and JUnit XML views of a Comparison.
#include "diff_formats.h"

#include "markup.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <utility>

#include "feedbench/base/error.h"
#include "feedbench/base/statistics.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/results/counters.h"

namespace feedbench {

DiffFormat parse_diff_format(const std::string& text) {
  if (text == "table") return DiffFormat::kTable;
  if (text == "markdown" || text == "md") return DiffFormat::kMarkdown;
  if (text == "json") return DiffFormat::kJson;
  if (text == "junit") return DiffFormat::kJunit;
  throw InputError("--format " + text + ": expected table, markdown, json or junit");
}

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string format_change(double change) {
  if (std::isinf(change)) return change > 0 ? "+inf%" : "-inf%";
  return format_printf("%+.1f%%", change * 100);
}

std::string format_p(double p) { return p < 0.001 ? "<0.001" : format_printf("%.3f", p); }

std::string shortest_percent(double fraction) { return format_printf("%g%%", fraction * 100); }

const char* verdict_word(Verdict v) {
  switch (v) {
    case Verdict::kRegression: return "REGRESSION";
    case Verdict::kImprovement: return "improvement";
    case Verdict::kNoisy: return "noisy";
    case Verdict::kUnchanged: break;
  }
  return "unchanged";
}

const char* status_word(CaseStatus s) {
  switch (s) {
    case CaseStatus::kCompared: return "compared";
    case CaseStatus::kRemoved: return "removed";
    case CaseStatus::kAdded: return "added";
    case CaseStatus::kCacheNotAchieved: return "cache_not_achieved";
    case CaseStatus::kErrored: return "errored";
    case CaseStatus::kNoMetrics: return "no_metrics";
    case CaseStatus::kNotMeasured: return "not_measured";
    case CaseStatus::kTooFewSteps: return "too_few_steps";
  }
  return "?";
}

bool not_judged(CaseStatus s) {
  return s == CaseStatus::kCacheNotAchieved || s == CaseStatus::kErrored || s == CaseStatus::kNoMetrics ||
         s == CaseStatus::kTooFewSteps;
}

// The one note of a document whose verdicts were weak: said once, not on every row.
// "weak verdict: too few repetitions: 3 vs 3 cannot reach alpha 0.05 ..."
std::string weak_note(const Comparison& c) {
  std::size_t smallest = 0, needed = 0, rows = 0;
  for (const CaseComparison& k : c.cases)
    for (const MetricComparison& m : k.metrics) {
      if (!m.weak) continue;
      ++rows;
      const std::size_t n = std::min(m.base_values.size(), m.new_values.size());
      smallest = smallest == 0 ? n : std::min(smallest, n);
      needed = std::max(needed, m.repetitions_needed);
    }
  if (rows == 0) return "";
  return "weak verdict: too few repetitions (as few as " + std::to_string(smallest) + " per side, in " +
         std::to_string(rows) + (rows == 1 ? " comparison" : " comparisons") +
         ") for the test to reach alpha " + format_printf("%g", c.options.alpha) +
         ": the threshold and the noise rule alone decided those marked (weak); use " +
         std::to_string(needed) + " or more repetitions per side";
}

std::string verdict_text(const MetricComparison& m, double /*alpha*/) {
  std::string s = verdict_word(m.verdict);
  if (m.verdict == Verdict::kNoisy) s += " (" + m.why_noisy + ")";
  else if (m.below_floor)
    s += " (change below the floor of " + std::string(find_metric(m.metric)->floor_text) + ")";
  else if (m.weak && m.verdict != Verdict::kUnchanged) s += " (weak)";
  return s;
}

// RETURNS: "set aside as outliers: BASE repetition 3 of ...; NEW ..." for a case, "" when none.
std::string case_set_aside_line(const CaseComparison& k) {
  std::string out;
  for (const MetricComparison& m : k.metrics)
    for (auto [side, list] : {std::pair{"BASE", &m.base_set_aside}, std::pair{"NEW", &m.new_set_aside}})
      for (const OutlierRepetition& o : *list)
        out += (out.empty() ? "" : "; ") + std::string(side) + " " + outlier_text(o);
  return out.empty() ? out : "set aside as outliers: " + out;
}

// One line per side with outliers, said once above the cases:
// "BASE has an outlier repetition (1 case; farther than 3.5 scaled MADs and 10% from the
// median of its case): judged without it, listed under its case; measure the baseline again
// before keeping it"
std::vector<std::string> outlier_warnings(const Comparison& c) {
  std::vector<std::string> out;
  for (const bool base : {true, false}) {
    std::set<std::pair<std::string, std::int64_t>> repetitions;
    std::set<std::string> cases;
    for (const CaseComparison& k : c.cases)
      for (const MetricComparison& m : k.metrics)
        for (const OutlierRepetition& o : base ? m.base_set_aside : m.new_set_aside) {
          repetitions.insert({o.case_name, o.repetition_index});
          cases.insert(k.identity);
        }
    if (repetitions.empty()) continue;
    const bool one = repetitions.size() == 1;
    out.push_back(
        std::string(base ? "BASE" : "NEW") + " has " +
        (one ? "an outlier repetition" : std::to_string(repetitions.size()) + " outlier repetitions") + " (" +
        plural(cases.size(), "case", "cases") + "; " + outlier_rule_text() + " of " +
        (one ? "its case" : "their case") + "): judged without " + (one ? "it" : "them") + ", listed under " +
        (cases.size() == 1 ? "its case" : "their cases") +
        (base ? "; measure the baseline again before keeping it" : ""));
  }
  return out;
}

std::string rerun_line(const Comparison& c) {
  const std::size_t n = c.rerun_cases.size();
  return "confirmation re-run: " + std::to_string(n) + (n == 1 ? " case" : " cases") +
         " judged on the repetitions of " + c.rerun_file + " instead of NEW's";
}

// "host load per core: BASE 0.55 (1.1 -> 1.0 on 2 cores), NEW 1.40 (2.6 -> 3.0 on 2 cores)"
std::string load_line(const Comparison& c) {
  auto side = [](const HostLoad& l) {
    if (!l.known) return std::string("not recorded");
    return format_printf("%.2f", l.per_core()) + " (" + format_printf("%.2f", l.before) + " -> " +
           format_printf("%.2f", l.after) + " on " + format_printf("%g", l.cores) + " cores)";
  };
  if (!c.base_load.known && !c.new_load.known) return "";
  return "host load per core: BASE " + side(c.base_load) + ", NEW " + side(c.new_load);
}

// "other programs took: BASE 0.1 of 2 cores, NEW 1.8 of 2 cores", "" when neither file says.
std::string other_programs_line(const Comparison& c) {
  auto side = [](const HostLoad& l) {
    if (!l.other_known) return std::string("not recorded");
    return format_printf("%.1f", l.other_cores) + " of " + format_printf("%g", l.cores) + " cores";
  };
  if (!c.base_load.other_known && !c.new_load.other_known) return "";
  return "other programs took: BASE " + side(c.base_load) + ", NEW " + side(c.new_load);
}

// With several runs of BASE: "BASE: 3 runs, their repetitions judged together; a change within
// 2x the spread between their medians (log scale) is noisy"; "" with one.
std::string base_runs_line(const Comparison& c) {
  if (c.base_files.size() < 2) return "";
  return "BASE: " + std::to_string(c.base_files.size()) +
         " runs, their repetitions judged together; a change within " +
         format_printf("%g", kRunSpreadFactor) + "x the spread between their medians (log scale) is noisy";
}

std::string geomean_text(const GeomeanSummary& g) {
  return g.metric + " " + format_printf("%.3f", g.ratio) + " (" + format_change(g.ratio - 1) + ", " +
         (g.direction == Direction::kHigherIsBetter ? "higher" : "lower") + " is better, " +
         std::to_string(g.cases) + (g.cases == 1 ? " case)" : " cases)");
}

std::string summary_line(const Comparison& c, bool strict) {
  std::size_t compared = 0;
  for (const CaseComparison& k : c.cases) compared += k.status == CaseStatus::kCompared;
  std::size_t r = c.regressions(), i = c.improvements(), z = c.noisy();
  std::string s = std::to_string(r) + (r == 1 ? " regression, " : " regressions, ") + std::to_string(i) +
                  (i == 1 ? " improvement, " : " improvements, ") + std::to_string(z) + " noisy in " +
                  std::to_string(compared) + (compared == 1 ? " compared case" : " compared cases") +
                  " (threshold " + shortest_percent(c.options.threshold) + ", alpha " +
                  format_printf("%g", c.options.alpha) + ")";
  const std::size_t m = c.missing();
  if (m > 0)
    s += "; " + std::to_string(m) + (m == 1 ? " case" : " cases") + " of BASE not measured in NEW" +
         (c.options.allow_missing ? " (allowed by --allow-missing)" : "");
  if (c.excluded_cases > 0)
    s += "; " + std::to_string(c.excluded_cases) + (c.excluded_cases == 1 ? " case" : " cases") +
         " left out by --include/--exclude";
  if (compared == 0) s += "; nothing was compared";
  if (strict && !c.warnings.empty()) s += "; --strict: the runs are not comparable";
  return s;
}

// ---- table ----------------------------------------------------------------------------------

struct Paint {
  bool on;
  std::string operator()(const std::string& text, const char* code) const {
    return on ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
  }
};

std::string pad(const std::string& s, std::size_t width, bool right) {
  if (s.size() >= width) return s;
  std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

std::string format_table(const Comparison& c, const DiffFormatOptions& o) {
  Paint paint{o.colour};
  std::ostringstream out;
  for (const std::string& f : c.base_files.empty() ? std::vector<std::string>{c.base_file} : c.base_files)
    out << "BASE " << f << "\n";
  out << "NEW  " << c.new_file << "\n";
  if (std::string runs = base_runs_line(c); !runs.empty()) out << runs << "\n";
  for (const std::string& w : c.warnings) out << paint("warning: " + w, o.strict ? "1;31" : "33") << "\n";
  for (const std::string& w : outlier_warnings(c)) out << paint("warning: " + w, "33") << "\n";
  if (std::string load = load_line(c); !load.empty()) out << load << "\n";
  if (std::string other = other_programs_line(c); !other.empty()) out << other << "\n";
  if (!c.rerun_file.empty()) out << rerun_line(c) << "\n";

  // Rows: metric, base, new, change, p, verdict; aligned over the whole table.
  struct Row {
    std::string cells[5];
    const MetricComparison* m;
  };
  std::size_t width[5] = {6, 4, 3, 6, 1};
  const char* heads[5] = {"metric", "base", "new", "change", "p"};
  std::vector<std::pair<const CaseComparison*, std::vector<Row>>> groups;
  for (const CaseComparison& k : c.cases) {
    if (k.status != CaseStatus::kCompared) continue;
    std::vector<Row> rows;
    for (const MetricComparison& m : k.metrics) {
      Row r{{m.metric, format_metric_value(m.metric, m.base_median),
             format_metric_value(m.metric, m.new_median), format_change(m.change), format_p(m.p)},
            &m};
      for (int i = 0; i < 5; ++i) width[i] = std::max(width[i], r.cells[i].size());
      rows.push_back(r);
    }
    groups.emplace_back(&k, rows);
  }
  if (!groups.empty()) {
    out << "\n";
    std::string head = "  ";
    for (int i = 0; i < 5; ++i) head += pad(heads[i], width[i], i > 0) + "  ";
    out << paint(head + "verdict", "1") << "\n";
  }
  for (const auto& [k, rows] : groups) {
    out << k->identity << "\n";
    if (k->base_name != k->new_name) out << "  (BASE " << k->base_name << ", NEW " << k->new_name << ")\n";
    if (!k->note.empty()) out << "  (" << k->note << ")\n";
    if (std::string aside = case_set_aside_line(*k); !aside.empty())
      out << "  (" << paint(aside, "33") << ")\n";
    for (const Row& r : rows) {
      std::string line = "  ";
      for (int i = 0; i < 5; ++i) line += pad(r.cells[i], width[i], i > 0) + "  ";
      std::string verdict = verdict_text(*r.m, c.options.alpha);
      const char* colour = r.m->verdict == Verdict::kRegression    ? "1;31"
                           : r.m->verdict == Verdict::kImprovement ? "32"
                           : r.m->verdict == Verdict::kNoisy       ? "33"
                                                                   : "0";
      if (r.m->verdict == Verdict::kUnchanged) verdict = paint(verdict, "2");
      else verdict = paint(verdict, colour);
      out << line << verdict << "\n";
    }
  }

  auto list = [&](const char* title, auto pick, auto text) {
    bool first = true;
    for (const CaseComparison& k : c.cases) {
      if (!pick(k)) continue;
      if (first) out << "\n" << title << "\n";
      first = false;
      out << "  " << text(k) << "\n";
    }
  };
  list(
      "not judged:", [](const CaseComparison& k) { return not_judged(k.status); },
      [&](const CaseComparison& k) { return k.identity + ": " + paint(k.note, "33"); });
  list(
      c.options.allow_missing ? "missing in NEW (allowed by --allow-missing):"
                              : "MISSING in NEW (fails the diff; --allow-missing to accept):",
      [](const CaseComparison& k) { return k.missing(); },
      [&](const CaseComparison& k) {
        return k.status == CaseStatus::kRemoved ? k.base_name + ": only in BASE"
                                                : k.identity + ": " + paint(k.note, "33");
      });
  list(
      "added (only in NEW):", [](const CaseComparison& k) { return k.status == CaseStatus::kAdded; },
      [](const CaseComparison& k) { return k.new_name; });

  out << "\n";
  if (std::string weak = weak_note(c); !weak.empty()) out << paint(weak, "33") << "\n";
  if (!c.geomeans.empty()) {
    out << "geomean NEW/BASE over the compared cases:\n";
    for (const GeomeanSummary& g : c.geomeans) out << "  " << geomean_text(g) << "\n";
  }
  const bool failed = c.exit_code(o.strict) != 0;
  out << paint(summary_line(c, o.strict), failed ? "1;31" : "32") << "\n";
  return out.str();
}

// ---- markdown -------------------------------------------------------------------------------

std::string format_markdown(const Comparison& c, const DiffFormatOptions& o) {
  std::ostringstream out;
  const bool failed = c.exit_code(o.strict) != 0;
  out << "### feedbench diff: " << (failed ? "❌ " : "✅ ") << escape_markdown_cell(summary_line(c, o.strict))
      << "\n\nBASE `" << escape_markdown_cell(c.base_file) << "` · NEW `" << escape_markdown_cell(c.new_file)
      << "`\n";
  if (std::string runs = base_runs_line(c); !runs.empty()) out << "\n" << escape_markdown_cell(runs) << "\n";
  if (!c.warnings.empty()) {
    out << "\n> **Not comparable" << (o.strict ? " (fails with --strict)" : "") << ":**\n";
    for (const std::string& w : c.warnings) out << "> - " << escape_markdown_cell(w) << "\n";
  }
  for (const std::string& w : outlier_warnings(c))
    out << "\n> **Outliers:** " << escape_markdown_cell(w) << "\n";
  if (std::string load = load_line(c); !load.empty()) out << "\n" << escape_markdown_cell(load) << "\n";
  if (std::string other = other_programs_line(c); !other.empty())
    out << "\n" << escape_markdown_cell(other) << "\n";
  if (!c.rerun_file.empty()) out << "\n" << escape_markdown_cell(rerun_line(c)) << "\n";
  if (std::string weak = weak_note(c); !weak.empty()) out << "\n> " << escape_markdown_cell(weak) << "\n";
  bool header = false;
  for (const CaseComparison& k : c.cases) {
    if (k.status != CaseStatus::kCompared) continue;
    if (!header) {
      out << "\n| case | metric | base | new | change | p | verdict |\n"
             "| --- | --- | ---: | ---: | ---: | ---: | --- |\n";
      header = true;
    }
    for (const MetricComparison& m : k.metrics) {
      std::string verdict = verdict_text(m, c.options.alpha);
      if (m.verdict == Verdict::kRegression) verdict = "**" + verdict + "**";
      out << "| `" << escape_markdown_cell(k.identity) << "` | " << m.metric << " | "
          << format_metric_value(m.metric, m.base_median) << " | "
          << format_metric_value(m.metric, m.new_median) << " | " << format_change(m.change) << " | "
          << format_p(m.p) << " | " << escape_markdown_cell(verdict) << " |\n";
    }
  }
  auto list = [&](const char* title, CaseStatus status, auto text) {
    bool first = true;
    for (const CaseComparison& k : c.cases) {
      const bool pick = status == CaseStatus::kCompared  ? not_judged(k.status)
                        : status == CaseStatus::kRemoved ? k.missing()
                                                         : k.status == status;
      if (!pick) continue;
      if (first) out << "\n**" << title << "**\n\n";
      first = false;
      out << "- " << escape_markdown_cell(text(k)) << "\n";
    }
  };
  // kCompared stands for "any not-judged status" here, kRemoved for "missing in NEW".
  list("Not judged", CaseStatus::kCompared,
       [](const CaseComparison& k) { return "`" + k.identity + "`: " + k.note; });
  list(c.options.allow_missing ? "Missing in NEW (allowed by --allow-missing)"
                               : "Missing in NEW (fails the diff)",
       CaseStatus::kRemoved, [](const CaseComparison& k) {
         return k.status == CaseStatus::kRemoved ? "`" + k.base_name + "`: only in BASE"
                                                 : "`" + k.identity + "`: " + k.note;
       });
  list("Added (only in NEW)", CaseStatus::kAdded,
       [](const CaseComparison& k) { return "`" + k.new_name + "`"; });
  bool first_aside = true;
  for (const CaseComparison& k : c.cases) {
    const std::string aside = case_set_aside_line(k);
    if (aside.empty()) continue;
    if (first_aside) out << "\n**Set aside as outliers (judged without them)**\n\n";
    first_aside = false;
    out << "- `" << escape_markdown_cell(k.identity)
        << "`: " << escape_markdown_cell(aside.substr(std::string("set aside as outliers: ").size())) << "\n";
  }
  if (!c.geomeans.empty()) {
    out << "\n**Geometric mean NEW/BASE:**";
    for (std::size_t i = 0; i < c.geomeans.size(); ++i)
      out << (i ? "; " : " ") << escape_markdown_cell(geomean_text(c.geomeans[i]));
    out << "\n";
  }
  return out.str();
}

// ---- junit ----------------------------------------------------------------------------------

std::string xml(const std::string& s) { return escape_markup(s); }

std::string family_of(const std::string& identity) { return identity.substr(0, identity.find('/')); }

std::string format_junit(const Comparison& c, const DiffFormatOptions& o) {
  std::ostringstream body;
  std::size_t tests = 0, failures = 0, skipped = 0;
  for (const CaseComparison& k : c.cases) {
    ++tests;
    body << "    <testcase classname=\"feedbench." << xml(family_of(k.identity)) << "\" name=\""
         << xml(k.identity) << "\">\n";
    if (k.status == CaseStatus::kCompared) {
      std::string details;
      for (const MetricComparison& m : k.metrics)
        details += m.metric + ": " + format_metric_value(m.metric, m.base_median) + " -> " +
                   format_metric_value(m.metric, m.new_median) + " (" + format_change(m.change) + ", p " +
                   format_p(m.p) + ") " + verdict_text(m, c.options.alpha) + "\n";
      if (std::string aside = case_set_aside_line(k); !aside.empty()) details += aside + "\n";
      if (k.regressed()) {
        ++failures;
        std::string message;
        for (const MetricComparison& m : k.metrics)
          if (m.verdict == Verdict::kRegression)
            message += (message.empty() ? "" : "; ") + m.metric + " " + format_change(m.change) +
                       (m.weak ? " (weak)" : "");
        body << "      <failure type=\"regression\" message=\"" << xml("regression: " + message) << "\">"
             << xml(details) << "</failure>\n";
      } else if (k.missing() && !c.options.allow_missing) {
        // A metric BASE judges the case on and NEW lacks: as missing as an absent case.
        ++failures;
        body << "      <failure type=\"missing\" message=\"" << xml("missing: " + k.note) << "\">"
             << xml(details) << "</failure>\n";
      } else {
        body << "      <system-out>" << xml(details) << "</system-out>\n";
      }
    } else if (k.missing() && !c.options.allow_missing) {
      // Nothing measured is not a pass: CI shows the case as a failed test.
      ++failures;
      std::string why = k.status == CaseStatus::kRemoved ? "missing: only in BASE, not measured in NEW"
                                                         : "missing: " + k.note;
      body << "      <failure type=\"missing\" message=\"" << xml(why) << "\">" << xml(why) << "</failure>\n";
    } else {
      ++skipped;
      std::string why = k.status == CaseStatus::kRemoved ? "only in BASE"
                        : k.status == CaseStatus::kAdded ? "only in NEW (no baseline)"
                                                         : "not judged: " + k.note;
      body << "      <skipped message=\"" << xml(why) << "\"/>\n";
    }
    body << "    </testcase>\n";
  }
  if (!c.warnings.empty()) {
    ++tests;
    std::string text;
    for (const std::string& w : c.warnings) text += w + "\n";
    body << "    <testcase classname=\"feedbench\" name=\"comparability\">\n";
    if (o.strict) {
      ++failures;
      body << "      <failure type=\"not_comparable\" message=\"" << xml(c.warnings.front()) << "\">"
           << xml(text) << "</failure>\n";
    } else {
      body << "      <system-out>" << xml(text) << "</system-out>\n";
    }
    body << "    </testcase>\n";
  }
  std::ostringstream out;
  std::string counts = "tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
                       "\" errors=\"0\" skipped=\"" + std::to_string(skipped) + "\"";
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"feedbench diff\" " << counts << ">\n"
      << "  <testsuite name=\"feedbench diff\" " << counts << ">\n"
      << "    <properties>\n"
      << "      <property name=\"base\" value=\"" << xml(c.base_file) << "\"/>\n"
      << "      <property name=\"new\" value=\"" << xml(c.new_file) << "\"/>\n"
      << "      <property name=\"threshold\" value=\"" << c.options.threshold << "\"/>\n"
      << "      <property name=\"alpha\" value=\"" << c.options.alpha << "\"/>\n"
      << "    </properties>\n"
      << body.str() << "  </testsuite>\n</testsuites>\n";
  return out.str();
}

nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

}  // namespace

namespace {

// RETURNS: `v` to four significant digits, a whole number from 10,000 up: never an exponent.
std::string plain_number(double v) {
  return std::fabs(v) >= 1e4 ? format_printf("%.0f", v) : format_printf("%.4g", v);
}

}  // namespace

std::string format_metric_value(const std::string& metric, double v) {
  const CounterInfo* info = find_counter(metric);
  CounterUnit unit = info ? info->unit : CounterUnit::kCount;
  if (!info) {  // a counter not in the table: its unit from its name's suffix
    if (ends_with(metric, "_per_second")) unit = CounterUnit::kPerSecond;
    else if (ends_with(metric, "_us")) unit = CounterUnit::kMicroseconds;
    else if (ends_with(metric, "_ms")) unit = CounterUnit::kMilliseconds;
    else if (ends_with(metric, "_s")) unit = CounterUnit::kSeconds;
  }
  switch (unit) {
    case CounterUnit::kBytesPerSecond: {
      const char* units[] = {"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"};
      int u = 0;
      while (std::fabs(v) >= 1024 && u < 4) {
        v /= 1024;
        ++u;
      }
      return format_printf(std::fabs(v) >= 100 ? "%.0f " : "%.3g ", v) + units[u];
    }
    case CounterUnit::kPerSecond: {  // reads, files, samples: SI prefixes
      const char* prefixes[] = {"", "k", "M", "G", "T"};
      int u = 0;
      while (std::fabs(v) >= 1000 && u < 4) {
        v /= 1000;
        ++u;
      }
      return format_printf("%.4g", v) + prefixes[u] + "/s";
    }
    case CounterUnit::kFraction:
      break;  // AU 0.913: the floor and the change are in points of it
    // A duration in the largest unit under which it stays below 1,000 (never "9.621e+04 us").
    case CounterUnit::kMicroseconds:
      if (std::fabs(v) >= 1e6) return plain_number(v / 1e6) + " s";
      if (std::fabs(v) >= 1e3) return plain_number(v / 1e3) + " ms";
      return plain_number(v) + " us";
    case CounterUnit::kMilliseconds:
      if (std::fabs(v) >= 1e3) return plain_number(v / 1e3) + " s";
      return plain_number(v) + " ms";
    case CounterUnit::kSeconds: return plain_number(v) + " s";
    case CounterUnit::kNanoseconds:
      if (v >= 1e9) return format_printf("%.3g s", v / 1e9);
      if (v >= 1e6) return format_printf("%.3g ms", v / 1e6);
      if (v >= 1e3) return format_printf("%.3g us", v / 1e3);
      return format_printf("%.3g ns", v);
    case CounterUnit::kCount: break;
  }
  return plain_number(v);
}

std::string outlier_text(const OutlierRepetition& o) {
  return "repetition " + std::to_string(o.repetition_index) + " of " + o.metric + ": " +
         format_metric_value(o.metric, o.value) + ", median " + format_metric_value(o.metric, o.median);
}

std::string outlier_rule_text() {
  return "farther than " + format_printf("%g", kOutlierScaledMads) + " scaled MADs and " +
         shortest_percent(kOutlierMinDeviation) + " from the median";
}

nlohmann::ordered_json diff_to_json(const Comparison& c, bool strict) {
  nlohmann::ordered_json j;
  j["schema"] = "feedbench-diff/2";
  j["base"] = c.base_file;
  if (c.base_files.size() > 1) j["base_runs"] = c.base_files;
  j["new"] = c.new_file;
  j["options"] = {{"metrics", c.options.metrics},
                  {"threshold", c.options.threshold},
                  {"alpha", c.options.alpha},
                  {"match_ignore", c.options.match_ignore},
                  {"allow_missing", c.options.allow_missing},
                  {"include", c.options.include},
                  {"exclude", c.options.exclude},
                  {"noise_rule", c.options.noise_rule},
                  {"strict", strict}};
  j["warnings"] = c.warnings;
  auto load_json = [](const HostLoad& l) {
    nlohmann::ordered_json out = l.known ? nlohmann::ordered_json{{"loadavg_1m_before", l.before},
                                                                  {"loadavg_1m_after", l.after},
                                                                  {"online_cores", l.cores},
                                                                  {"per_core", l.per_core()}}
                                         : nlohmann::ordered_json();
    if (l.other_known) out["other_programs_cores"] = l.other_cores;
    return out;
  };
  j["load"] = {{"base", load_json(c.base_load)},
               {"new", load_json(c.new_load)},
               {"differ", loads_differ(c.base_load, c.new_load)}};
  if (!c.rerun_file.empty()) j["rerun"] = {{"file", c.rerun_file}, {"cases", c.rerun_cases}};
  j["notes"] = nlohmann::ordered_json::array();
  for (const std::string& w : outlier_warnings(c)) j["notes"].push_back(w);
  if (std::string weak = weak_note(c); !weak.empty()) j["notes"].push_back(weak);
  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  for (const CaseComparison& k : c.cases) {
    nlohmann::ordered_json jc;
    jc["case"] = k.identity;
    jc["base_name"] = k.base_name.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(k.base_name);
    jc["new_name"] = k.new_name.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(k.new_name);
    jc["status"] = status_word(k.status);
    jc["regressed"] = k.regressed();
    jc["missing"] = k.missing();
    if (!k.note.empty()) jc["note"] = k.note;
    if (!k.missing_metrics.empty()) jc["missing_metrics"] = k.missing_metrics;
    nlohmann::ordered_json metrics = nlohmann::ordered_json::array();
    for (const MetricComparison& m : k.metrics) {
      nlohmann::ordered_json jm;
      jm["metric"] = m.metric;
      jm["direction"] = m.direction == Direction::kHigherIsBetter ? "higher_is_better" : "lower_is_better";
      jm["base_median"] = m.base_median;
      jm["new_median"] = m.new_median;
      jm["change"] = number_or_null(m.change);
      jm["p"] = m.p;
      jm["test"] = m.exact ? "exact" : "normal_approximation";
      jm["weak"] = m.weak;
      if (m.weak) jm["repetitions_needed"] = m.repetitions_needed;
      jm["verdict"] = m.verdict == Verdict::kRegression    ? "regression"
                      : m.verdict == Verdict::kImprovement ? "improvement"
                      : m.verdict == Verdict::kNoisy       ? "noisy"
                                                           : "unchanged";
      jm["base_cv"] = m.base_cv;
      jm["new_cv"] = m.new_cv;
      jm["noise_band"] = m.noise_band;
      if (!m.base_run_medians.empty()) {
        jm["base_run_medians"] = m.base_run_medians;
        jm["run_spread"] = m.run_spread;
      }
      jm["below_floor"] = m.below_floor;
      if (m.verdict == Verdict::kNoisy) jm["why_noisy"] = m.why_noisy;
      jm["base_values"] = m.base_values;
      jm["new_values"] = m.new_values;
      auto set_aside_json = [](const std::vector<OutlierRepetition>& list) {
        nlohmann::ordered_json a = nlohmann::ordered_json::array();
        for (const OutlierRepetition& o : list)
          a.push_back({{"repetition_index", o.repetition_index}, {"value", o.value}, {"median", o.median}});
        return a;
      };
      jm["base_set_aside"] = set_aside_json(m.base_set_aside);
      jm["new_set_aside"] = set_aside_json(m.new_set_aside);
      metrics.push_back(jm);
    }
    jc["metrics"] = metrics;
    cases.push_back(jc);
  }
  j["cases"] = cases;
  nlohmann::ordered_json geo = nlohmann::ordered_json::array();
  for (const GeomeanSummary& g : c.geomeans)
    geo.push_back({{"metric", g.metric}, {"ratio", g.ratio}, {"cases", g.cases}});
  j["geomean"] = geo;
  j["regressions"] = c.regressions();
  j["improvements"] = c.improvements();
  j["noisy"] = c.noisy();
  j["excluded"] = c.excluded_cases;
  j["missing"] = c.missing();
  j["compared"] = c.compared();
  j["exit_code"] = c.exit_code(strict);
  return j;
}

std::string format_diff(const Comparison& c, DiffFormat format, const DiffFormatOptions& o) {
  switch (format) {
    case DiffFormat::kTable: return format_table(c, o);
    case DiffFormat::kMarkdown: return format_markdown(c, o);
    case DiffFormat::kJson: {
      return diff_to_json(c, o.strict).dump(2) + "\n";
    }
    case DiffFormat::kJunit: return format_junit(c, o);
  }
  return "";
}

}  // namespace feedbench
