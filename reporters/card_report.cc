#include "card_report.h"

#include <algorithm>
#include <sstream>
#include <tuple>
#include <utility>

#include "console_table.h"
#include "feedbench/base/json_limits.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "markup.h"

namespace feedbench {
namespace {

// RETURNS: accelerators as a card prints them: "6", "0.43".
std::string fed_text(double v) {
  if (v == static_cast<double>(static_cast<long long>(v)) && v < 1e15)
    return std::to_string(static_cast<long long>(v));
  return v < 10 ? format_printf("%.2f", v) : format_number(v);
}

// RETURNS: "6 (5-7, 3x)": the median, the repetitions' range when they differ, and their count.
std::string fed_cell(const CardCell& c) {
  std::string s = fed_text(c.accelerators_fed);
  if (c.accelerators_fed_min != c.accelerators_fed_max)
    s += " (" + fed_text(c.accelerators_fed_min) + "-" + fed_text(c.accelerators_fed_max) + ", " +
         std::to_string(c.repetitions) + "x)";
  else s += " (" + std::to_string(c.repetitions) + "x)";
  return s;
}

// RETURNS: one accelerator's need: "112 MiB/s, 850 samples/s, 0.80 cores"; with `brief`, as
// the console's narrow column has it: "112 MiB/s, 850/s, 0.80 cores".
std::string need_text(const PerAccelerator& p, bool brief = false) {
  return format_rate(p.bytes_per_second) + ", " + format_count(p.samples_per_second) +
         (brief ? "/s, " : " samples/s, ") + format_printf("%.2f", p.cpu_cores) + " cores";
}

std::string cell_place(const std::string& workload, const CardCell& c) {
  return workload + " through the " + c.path + ", " + c.state;
}

// RETURNS: the head line: the target, the speedup, the host, when and by which version.
std::string card_head(const Card& card) {
  std::string host;
  if (card.host.is_object()) {
    const auto text = [&](const char* key) {
      const auto it = card.host.find(key);
      return it != card.host.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    host = !text("instance_type").empty() ? text("instance_type") : text("hostname");
    if (const auto it = card.host.find("cores"); it != card.host.end() && is_non_negative_integer(*it))
      host += (host.empty() ? "" : ", ") + plural(it->get<std::size_t>(), "core", "cores");
  }
  std::string head = "feedbench card: accelerators fed at AU >= " + format_percent(card.target_au, 0);
  if (card.speedup != 1) head += ", each " + format_printf("%g", card.speedup) + "x as fast as profiled";
  if (card.accelerators_per_node > 0)
    head += "; a node of " + plural(std::size_t(card.accelerators_per_node), "accelerator", "accelerators");
  if (!host.empty()) head += "; host " + host;
  if (!card.created_utc.empty()) head += "; " + card.created_utc;
  return printable(head);
}

// RETURNS: `line` cut to `width` columns, "..." marking the cut.
std::string clip(const std::string& line, std::size_t width) {
  if (console_columns(line) <= width) return line;
  std::string out;
  std::size_t n = 0;
  for (std::size_t i = 0; i < line.size() && n < width - 3; ++i) {
    out += line[i];
    if (i + 1 == line.size() || (static_cast<unsigned char>(line[i + 1]) & 0xC0) != 0x80) ++n;
  }
  return out + "...";
}

// RETURNS: `text` wrapped to the console's width, continuation lines `hanging` columns further
// in, each line that still does not fit (a word longer than a line) clipped; ends in '\n'.
std::string fit(const std::string& text, std::size_t hanging) {
  std::string out;
  std::istringstream lines(wrap_text(text, kConsoleWidth, hanging));
  for (std::string line; std::getline(lines, line);) out += clip(line, kConsoleWidth) + "\n";
  return out;
}

// RETURNS: "45 s", "4.4 min", "2.1 h": a duration a person plans around.
std::string long_duration_text(double s) {
  if (s < 90) return format_printf("%.0f s", s);
  return s < 90 * 60 ? format_printf("%.1f min", s / 60) : format_printf("%.1f h", s / 3600);
}

// RETURNS: "1.43", "12", "28k": a count of accelerators a rate is worth.
std::string worth_text(double v) {
  return v < 10 ? format_printf("%.2f", v) : v < 1000 ? format_printf("%.0f", v) : format_count(v);
}

// RETURNS: "3.1 epochs", "1 epoch".
std::string epochs_text(double v) {
  const std::string n = v < 10 ? format_printf("%.1f", v) : format_printf("%.0f", v);
  return n + (n == "1.0" || n == "1" ? " epoch" : " epochs");
}

}  // namespace

std::vector<std::string> card_storage_lines(const Card& card) {
  std::vector<std::string> out;
  for (const CardWorkload& w : card.workloads) {
    if (w.reads.empty() && !w.staging) continue;
    std::string line = w.name + ":";
    if (!w.reads.empty()) {
      line += " read at best, cold, whole files:";
      for (std::size_t i = 0; i < w.reads.size(); ++i) {
        const CardReads& r = w.reads[i];
        line += std::string(i ? ";" : "") + " the " + r.path + " " + format_rate(r.bytes_per_second) + " (" +
                plural(std::size_t(r.workers), "reader", "readers");
        // A pass far under a second is a burst more than a rate: said with its size.
        if (r.seconds > 0 && r.seconds < 1)
          line += "; only " + format_size(double(r.bytes)) + " in " + format_printf("%.2f s", r.seconds);
        line += ")";
        if (r.accelerators > 0) line += ", " + worth_text(r.accelerators) + " accelerators' worth";
      }
      line += ".";
    }
    if (w.staging) {
      const CardStaging& st = *w.staging;
      line += " Staged at " + format_rate(st.bytes_per_second) + " (" + format_size(double(st.bytes)) +
              " in " + format_printf("%.1f s", st.seconds) + ", verified)";
      if (st.epochs_of_reading > 0)
        line += ", as long as " + epochs_text(st.epochs_of_reading) + " through the store";
      line += st.pays_after_epochs ? "; it pays after " + epochs_text(*st.pays_after_epochs) + "."
                                   : "; it never pays: the cache feeds no more when cold.";
    }
    out.push_back(line);
  }
  for (const CardCheckpoint& c : card.checkpoints) {
    std::string line = "checkpoint " + c.model + " x " + format_printf("%g", c.scale) + " (" +
                       format_size(double(c.bytes)) + " by " + plural(std::size_t(c.ranks), "rank", "ranks") +
                       ") on the " + c.path + ": written at " + format_rate(c.write_bytes_per_second) +
                       ", restored cold at " + format_rate(c.restore_bytes_per_second);
    if (c.write_bytes_per_second > 0 && c.restore_bytes_per_second > 0)
      line += "; the whole " + format_size(double(c.full_bytes)) + ": " +
              long_duration_text(double(c.full_bytes) / c.write_bytes_per_second) + " to write, " +
              long_duration_text(double(c.full_bytes) / c.restore_bytes_per_second) + " to restore";
    out.push_back(line + ".");
  }
  return out;
}

std::vector<std::string> card_advice(const Card& card) {
  std::vector<std::string> out;
  const CardCell* fewest = nullptr;
  std::string fewest_workload;
  std::size_t unmeasured = 0;
  for (const CardWorkload& w : card.workloads)
    for (const CardCell& c : w.paths) {
      if (!c.measured) {
        ++unmeasured;
        continue;
      }
      if (!fewest || c.accelerators_fed < fewest->accelerators_fed) {
        fewest = &c;
        fewest_workload = w.name;
      }
    }
  if (fewest)
    out.push_back(
        "Fewest fed: " + cell_place(fewest_workload, *fewest) + ", " + fed_text(fewest->accelerators_fed) +
        (card.accelerators_per_node > 0 ? " of the node's " + std::to_string(card.accelerators_per_node)
                                        : std::string()) +
        " (" + fewest->limit.substr(0, fewest->limit.find_first_of(":;(")) + ").");
  // Staging pays where the cache feeds more than the store beyond noise (feeds_more_beyond_noise):
  // cold first, with the epochs after which the stage pays where the card has it; the figures
  // are the table's and the storage lines'.
  std::string staging;
  for (const CardWorkload& w : card.workloads) {
    for (const char* state : {"cold", "steady"}) {
      const CardCell* store = measured_cell(w, "store", state);
      const CardCell* cache = measured_cell(w, "cache", state);
      if (!store || !cache || !feeds_more_beyond_noise(*cache, *store)) continue;
      std::string why = std::string(state) == "steady" ? "steady" : "";
      if (std::string(state) == "cold" && w.staging && w.staging->pays_after_epochs) {
        const std::string epochs = epochs_text(*w.staging->pays_after_epochs);
        why = staging.find("pays after") == std::string::npos ? "pays after " + epochs
                                                              : epochs.substr(0, epochs.find(' '));
      }
      staging += (staging.empty() ? "" : ", ") + w.name + (why.empty() ? "" : " (" + why + ")");
      break;
    }
  }
  if (!staging.empty()) out.push_back("Stage to the cache: it feeds more for " + staging + ".");
  if (unmeasured > 0)
    out.push_back(plural(unmeasured, "cell was", "cells were") +
                  " not measured: qualify again with a longer --budget to fill them.");
  if (out.size() > kCardAdviceLines) out.resize(kCardAdviceLines);
  return out;
}

std::string card_console(const Card& card) {
  std::vector<std::vector<std::string>> rows = {
      {"workload", "path", "state", "fed", "per accelerator", "limit"}};
  for (const CardWorkload& w : card.workloads)
    for (const CardCell& c : w.paths) {
      const std::string name = clip(printable(w.name), 16);
      if (c.measured)
        rows.push_back(
            {name, c.path, c.state, fed_cell(c), need_text(c.per_accelerator, true), printable(c.limit)});
      else rows.push_back({name, c.path, c.state, "-", "-", "not measured: " + printable(c.reason)});
    }
  // Where the limit column starts: a long limit continues on lines indented to it.
  std::size_t limit_column = 2;
  for (std::size_t i = 0; i + 1 < rows.front().size(); ++i) {
    std::size_t width = 0;
    for (const auto& row : rows) width = std::max(width, console_columns(row[i]));
    limit_column += width + 2;
  }
  std::string out = fit(card_head(card), 4);
  std::istringstream table(text_table(rows, 2));
  for (std::string line; std::getline(table, line);) {
    // A limit too long for its column goes on under it (under the row, were the column far right).
    out += fit(line, limit_column > 90 ? 4 : limit_column - 2);
  }
  const std::vector<std::string> storage = card_storage_lines(card);
  if (!storage.empty()) out += "\nreads, staging and checkpoints:\n";
  for (const std::string& s : storage) out += fit("  " + printable(s), 4);
  const std::vector<std::string> advice = card_advice(card);
  if (!advice.empty()) out += "\nwhat to do:\n";
  for (const std::string& a : advice) out += clip("  " + printable(a), kConsoleWidth) + "\n";  // a line each
  return out;
}

std::string card_markdown(const Card& card) {
  std::ostringstream out;
  out << "## Qualification card\n\n" << escape_markdown_cell(card_head(card)) << "\n\n";
  out << "| workload | path | state | accelerators fed | per accelerator | limit |\n";
  out << "|---|---|---|--:|---|---|\n";
  for (const CardWorkload& w : card.workloads)
    for (const CardCell& c : w.paths) {
      out << "| " << escape_markdown_cell(w.name) << " | " << c.path << " | " << c.state << " | ";
      if (c.measured)
        out << fed_cell(c) << " | " << need_text(c.per_accelerator) << " | " << escape_markdown_cell(c.limit)
            << " |\n";
      else out << "- | - | not measured: " << escape_markdown_cell(c.reason) << " |\n";
    }
  const std::vector<std::string> storage = card_storage_lines(card);
  if (!storage.empty()) out << "\nReads, staging and checkpoints:\n\n";
  for (const std::string& s : storage) out << "- " << escape_markdown_cell(s) << "\n";
  const std::vector<std::string> advice = card_advice(card);
  if (!advice.empty()) out << "\nWhat to do:\n\n";
  for (const std::string& a : advice) out << "- " << escape_markdown_cell(a) << "\n";
  return out.str();
}

std::string cards_html(const std::vector<Card>& cards, const std::vector<std::string>& names) {
  std::ostringstream p;
  const auto cell = [](const std::string& text) { return "<td>" + escape_markup(text) + "</td>"; };
  p << "<section id=\"card\"><h2>" << (cards.size() == 1 ? "Qualification card" : "Qualification cards")
    << "</h2>\n";
  for (std::size_t i = 0; i < cards.size(); ++i)
    p << "<p class=\"subtitle\">"
      << (cards.size() > 1 ? "<strong>" + escape_markup(names[i]) + "</strong>: " : "")
      << escape_markup(card_head(cards[i])) << "</p>\n";
  p << "<table class=\"card\"><tr><th>workload</th><th>path</th><th>state</th>";
  if (cards.size() == 1) {
    p << "<th>accelerators fed</th><th>per accelerator</th><th>limit</th></tr>\n";
    for (const CardWorkload& w : cards.front().workloads)
      for (const CardCell& c : w.paths)
        p << "<tr>" << cell(w.name) << cell(c.path) << cell(c.state)
          << (c.measured ? cell(fed_cell(c)) + cell(need_text(c.per_accelerator)) + cell(c.limit)
                         : cell("-") + cell("-") + cell("not measured: " + c.reason))
          << "</tr>\n";
  } else {
    for (const std::string& n : names)
      p << "<th>" << escape_markup(n) << ": fed</th><th>" << escape_markup(n) << ": limit</th>";
    p << "</tr>\n";
    // Every (workload, path, state) of any card, in the order the cards first hold them.
    std::vector<std::tuple<std::string, std::string, std::string>> keys;
    for (const Card& card : cards)
      for (const CardWorkload& w : card.workloads)
        for (const CardCell& c : w.paths)
          if (std::find(keys.begin(), keys.end(), std::make_tuple(w.name, c.path, c.state)) == keys.end())
            keys.emplace_back(w.name, c.path, c.state);
    for (const auto& [workload, path, state] : keys) {
      p << "<tr>" << cell(workload) << cell(path) << cell(state);
      for (const Card& card : cards) {
        const CardCell* found = nullptr;
        for (const CardWorkload& w : card.workloads)
          for (const CardCell& c : w.paths)
            if (w.name == workload && c.path == path && c.state == state) found = &c;
        if (!found) p << cell("(not in this card)") << cell("");
        else if (!found->measured) p << cell("-") << cell("not measured: " + found->reason);
        else p << cell(fed_cell(*found)) << cell(found->limit);
      }
      p << "</tr>\n";
    }
  }
  p << "</table>\n";
  if (cards.size() == 1) {
    const std::vector<std::string> storage = card_storage_lines(cards.front());
    if (!storage.empty()) {
      p << "<h3>Reads, staging and checkpoints</h3><ul>";
      for (const std::string& s : storage) p << "<li>" << escape_markup(s) << "</li>";
      p << "</ul>\n<h3>What to do</h3>\n";
    }
    p << "<ul>";
    for (const std::string& a : card_advice(cards.front())) p << "<li>" << escape_markup(a) << "</li>";
    p << "</ul>\n";
  }
  p << "</section>\n";
  return p.str();
}

std::string format_card_diff(const CardComparison& comparison, const std::string& base_file,
                             const std::string& new_file) {
  std::string out;
  for (const std::string& line : {"BASE " + printable(base_file), "NEW  " + printable(new_file)})
    out += fit(line, 4);
  std::vector<std::vector<std::string>> rows = {
      {"workload", "path", "state", "base", "new", "change", "verdict"}};
  std::vector<std::string> notes;  // a noisy or unjudged cell's reason, under its row
  std::vector<std::string> only;
  for (const CellComparison& k : comparison.cells) {
    const std::string name = clip(printable(k.workload), 24);
    if (k.verdict == CellVerdict::kOnlyBase || k.verdict == CellVerdict::kOnlyNew) {
      only.push_back(name + " " + k.path + " " + k.state +
                     (k.verdict == CellVerdict::kOnlyBase ? ": only in BASE" : ": only in NEW"));
      continue;
    }
    const auto side = [](const CardCell& c) {
      return c.measured ? fed_cell(c) : std::string("not measured");
    };
    std::string change = "-";
    if (k.base->measured && k.next->measured && k.base->accelerators_fed > 0)
      change = format_printf("%+.0f%%", 100 * (k.next->accelerators_fed / k.base->accelerators_fed - 1));
    const char* verdict = k.verdict == CellVerdict::kFewer       ? "FEWER"
                          : k.verdict == CellVerdict::kNoisy     ? "noisy"
                          : k.verdict == CellVerdict::kMore      ? "more"
                          : k.verdict == CellVerdict::kUnchanged ? "same"
                                                                 : "not judged";
    rows.push_back({name, k.path, k.state, side(*k.base), side(*k.next), change, verdict});
    notes.push_back(k.note);
  }
  if (rows.size() > 1) {
    out += "\n";
    std::istringstream table(text_table(rows, 2));
    std::string line;
    std::getline(table, line);
    out += line + "\n";
    for (std::size_t i = 0; std::getline(table, line); ++i) {
      out += line + "\n";
      if (!notes[i].empty()) out += fit("    (" + printable(notes[i]) + ")", 2);
    }
  }
  if (!only.empty()) {
    out += "\nin one card only (not judged):\n";
    for (const std::string& o : only) out += "  " + o + "\n";
  }
  const std::size_t fewer = comparison.count(CellVerdict::kFewer),
                    noisy = comparison.count(CellVerdict::kNoisy),
                    more = comparison.count(CellVerdict::kMore), compared = comparison.compared();
  out += "\n" + plural(fewer, "cell feeds", "cells feed") + " fewer, " + std::to_string(more) + " more, " +
         std::to_string(noisy) + " noisy in " + plural(compared, "compared cell", "compared cells") +
         (compared == 0 ? "; nothing was compared" : "") + "\n";
  return out;
}

}  // namespace feedbench
