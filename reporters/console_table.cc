#include "console_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>
#include <set>

#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "loader_demand.h"

namespace feedbench {

namespace {

using nlohmann::json;

// Columns a text takes on a terminal: UTF-8 code points, ANSI colour sequences left out.
std::size_t columns(const std::string& s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b') {  // ESC [ ... m
      while (i < s.size() && s[i] != 'm') ++i;
      continue;
    }
    n += (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
  }
  return n;
}

std::string pad_left(const std::string& s, std::size_t width) {
  const std::size_t n = columns(s);
  return n >= width ? s : std::string(width - n, ' ') + s;
}

std::string pad_right(const std::string& s, std::size_t width) {
  const std::size_t n = columns(s);
  return n >= width ? s : s + std::string(width - n, ' ');
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string percent_text(double fraction) { return format_percent(fraction); }

std::string whole_percent_text(double fraction) { return format_percent(fraction, 0); }

// One column of a family's line: its title, width and the text of a case's value.
struct Column {
  const char* title;
  std::size_t width;
  std::string (*text)(const CaseView&);
};

std::optional<double> at(const CaseView& c, const char* key) { return c.counter(key); }
std::string or_dash(std::optional<double> v, std::string (*f)(double)) { return v ? f(*v) : "-"; }

std::string spread_of(const CaseView& c, const char* key) {
  auto it = c.spread.find(key);
  return it == c.spread.end() ? "-" : percent_text(it->second);
}

const std::vector<Column>& columns_of(const std::string& family) {
  static const std::vector<Column> file_read = {
      {"median", 11, [](const CaseView& c) { return or_dash(at(c, "bytes_per_second"), format_rate); }},
      {"spread", 7, [](const CaseView& c) { return spread_of(c, "bytes_per_second"); }},
      {"IOPS", 9, [](const CaseView& c) { return or_dash(at(c, "items_per_second"), format_count); }},
      {"p99 lat", 9,
       [](const CaseView& c) {
         return or_dash(at(c, "lat_p99_us"), [](double us) { return format_duration_ns(us * 1e3); });
       }},
      {"CPU", 6, [](const CaseView& c) { return or_dash(at(c, "cpu_util"), whole_percent_text); }}};
  static const std::vector<Column> loader = {
      // The lowest trainer's AU (with one accelerator, the AU): the summary's is every trainer's together.
      {"min AU", 11, [](const CaseView& c) { return or_dash(c.worst_au(), percent_text); }},
      {"spread", 7, [](const CaseView& c) { return spread_of(c, "au"); }},
      {"stall", 9, [](const CaseView& c) { return or_dash(at(c, "stall_fraction"), percent_text); }},
      {"samples/s", 9, [](const CaseView& c) { return or_dash(at(c, "samples_per_second"), format_count); }},
      // How many accelerators like the case's its supply keeps at the target (loader_demand.h).
      {"acc fed", 8,
       [](const CaseView& c) {
         const std::optional<double> au = at(c, "au");
         // Too few steps to judge: no claim of what the supply feeds either.
         if (!au || c.calibration || !c.extra.value("judged", true) || !demand_of(c)) return std::string("-");
         return accelerators_fed_text(accelerators_fed(c, *au), *au >= c.target_au());
       }},
      {"wait p99", 9, [](const CaseView& c) {
         return or_dash(at(c, "wait_p99_ms"), [](double ms) { return format_duration_ns(ms * 1e6); });
       }}};
  static const std::vector<Column> stage = {
      {"median", 11, [](const CaseView& c) { return or_dash(at(c, "bytes_per_second"), format_rate); }},
      {"spread", 7, [](const CaseView& c) { return spread_of(c, "bytes_per_second"); }},
      {"files/s", 9, [](const CaseView& c) { return or_dash(at(c, "files_per_second"), format_count); }},
      {"CPU", 6, [](const CaseView& c) { return or_dash(at(c, "cpu_util"), whole_percent_text); }}};
  if (family == "loader" || family == "replay") return loader;
  if (family == "stage") return stage;
  return file_read;
}

std::size_t figures_width(const std::string& family) {
  std::size_t w = 0;
  for (const Column& col : columns_of(family)) w += 1 + col.width;
  return w;
}

// Room for the short verdicts ("1 excluded", "not judged", "CPU-bound").
constexpr std::size_t kVerdictWidth = 12;
constexpr std::size_t kIndent = 2;

// RETURNS: the widest label that leaves a family's figures and verdict room on one line.
std::size_t label_cap(const std::string& family) {
  return kConsoleWidth - kIndent - figures_width(family) - 2 - kVerdictWidth;
}

enum class Tone { good, doubtful, bad };

// RETURNS: the case's short verdict and its tone.
std::pair<std::string, Tone> verdict_of(const CaseView& c) {
  if (!c.measured()) return {c.errored > 0 ? "skipped" : "excluded", Tone::bad};
  if (c.family == "loader" || c.family == "replay") {
    const double au = c.worst_au().value_or(0);
    if (c.calibration) return au >= 0.99 ? std::pair{"ok", Tone::good} : std::pair{"FAILED", Tone::bad};
    if (!c.extra.value("judged", true)) return {"not judged", Tone::doubtful};
    // Fed by memory is not storage keeping up: said, in doubt (its line says how much).
    const json limit = c.extra.value("limit", json());
    const std::string by = limit.is_object() ? limit.value("by", "") : "";
    if (au >= c.target_au())
      return by == "page_cache" ? std::pair{"page cache", Tone::doubtful} : std::pair{"fed", Tone::good};
    return {c.extra.value("cpu_bound", false) ? "CPU-bound" : "stalls", Tone::bad};
  }
  if (!c.excluded.empty()) return {std::to_string(c.excluded.size()) + " excluded", Tone::doubtful};
  return {"ok", Tone::good};
}

std::string coloured(const std::string& text, Tone tone) {
  const char* code = tone == Tone::good ? "\x1b[32m" : tone == Tone::doubtful ? "\x1b[33m" : "\x1b[31m";
  return code + text + "\x1b[0m";
}

// What the figures leave out, one note per item.
std::vector<std::string> notes_of(const CaseView& c) {
  std::vector<std::string> notes;
  if (c.measured() && c.errored > 0)
    notes.push_back(std::to_string(c.errored) + " of " + std::to_string(c.repetitions()) +
                    (c.repetitions() == 1 ? " repetition" : " repetitions") + " failed:");
  for (const std::string& e : c.errors) notes.push_back(e);
  if (std::string x = c.exclusion_note(); !x.empty()) notes.push_back(x);
  if (!c.measured()) return notes;
  if (c.family == "loader" || c.family == "replay") {
    // The verdict's words after its figure, where the short verdict is not "fed".
    const auto [verdict, tone] = verdict_of(c);
    const std::string text = c.extra.value("verdict", std::string());
    if (tone != Tone::good && !text.empty()) {
      const std::string dash = " \xe2\x80\x94 ";  // " — "
      const std::size_t at = text.find(dash);
      notes.push_back(at == std::string::npos ? text : text.substr(at + dash.size()));
    }
  } else if (!c.label.empty()) {
    notes.push_back(c.label);
  }
  return notes;
}

}  // namespace

bool colour_wanted(bool terminal, const char* no_color, const char* term) {
  if (!terminal) return false;
  if (no_color && *no_color) return false;  // https://no-color.org: any value but empty
  if (term && std::string(term) == "dumb") return false;
  return true;
}

std::string wrap_text(const std::string& text, std::size_t width, std::size_t hanging) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    const bool newline = end != std::string::npos;
    if (!newline) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (columns(line) <= width) {
      out += line + (newline ? "\n" : "");
      continue;
    }
    std::size_t lead = 0;
    while (lead < line.size() && line[lead] == ' ') ++lead;
    std::vector<std::string> words;
    const std::size_t room = width > lead + hanging + 10 ? width - lead - hanging : 10;
    for (std::size_t i = lead; i <= line.size();) {
      std::size_t sp = line.find(' ', i);
      if (sp == std::string::npos) sp = line.size();
      std::string word = line.substr(i, sp - i);
      // A path or case name longer than a line breaks after a '/', where it has one.
      while (columns(word) > room) {
        const std::size_t cut = word.rfind('/', room - 1);
        if (cut == std::string::npos || cut == 0) break;
        words.push_back(word.substr(0, cut + 1) + "\x01");  // glued to what follows
        word = word.substr(cut + 1);
      }
      words.push_back(word);
      i = sp + 1;
    }
    std::string cur(lead, ' ');
    bool fresh = true;   // nothing but indentation on `cur` yet
    bool glued = false;  // the last word was the head of a broken one: no space after it
    for (std::string w : words) {
      const bool head = !w.empty() && w.back() == '\x01';
      if (head) w.pop_back();
      const std::string sep = glued ? "" : " ";
      if (fresh) {
        if (w.empty()) continue;
        cur += w;
        fresh = false;
      } else if (columns(cur) + sep.size() + columns(w) <= width) {
        cur += sep + w;
      } else if (!w.empty()) {
        while (!cur.empty() && cur.back() == ' ') cur.pop_back();
        out += cur + "\n";
        cur = std::string(lead + hanging, ' ') + w;
      }
      glued = head;
    }
    while (!cur.empty() && cur.back() == ' ') cur.pop_back();
    out += cur + (newline ? "\n" : "");
  }
  return out;
}

std::size_t console_columns(const std::string& text) { return columns(text); }

std::string text_table(const std::vector<std::vector<std::string>>& rows, std::size_t indent) {
  std::vector<std::size_t> width;
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], columns(row[i]));
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent, ' ');
    for (std::size_t i = 0; i < row.size(); ++i)
      line += i + 1 == row.size() ? row[i] : pad_right(row[i], width[i]) + "  ";
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string verdict_block(const std::string& head, const std::string& details, std::size_t indent) {
  std::vector<std::string> parts = clauses(details);
  std::string first = head;
  if (first.empty() && !parts.empty()) {
    first = parts.front();
    parts.erase(parts.begin());
  }
  std::string out = std::string(indent, ' ') + first + "\n";
  for (const std::string& p : parts)
    if (first.find(p) == std::string::npos) out += std::string(indent + 4, ' ') + p + "\n";
  return wrap_text(out, kConsoleWidth, 4);
}

const CaseLabels::Label* CaseLabels::find(const std::string& name) const {
  auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : &it->second;
}

std::string label_part(const std::string& family, const NamePart& part, const json& value) {
  const std::string& k = part.key;
  const std::string& v = part.value;
  if (k == "pattern") {
    if (v == "sequential") return "seq";
    if (v == "random") return "rand";
    if (v == "shuffled_files") return "shuffled";
    return v;
  }
  if ((k == "block_size" || k == "max_bytes") && value.is_number()) {
    std::string size = format_size(value.get<double>());
    size.erase(std::remove(size.begin(), size.end(), ' '), size.end());
    return k == "max_bytes" ? "max " + size : size;
  }
  if (k == "engine" || k == "cache_state" || k == "path") return v;
  if (k == "queue_depth") return "qd" + v;
  if (k == "workers") return "w" + v;
  if (k == "batch_size") return "b" + v;
  if (k == "accelerators") return "acc" + v;
  if (k == "prefetch") return "prefetch " + v;
  if (k == "epochs") return v + (v == "1" ? " epoch" : " epochs");
  if (k == "steps") return v + " steps";
  if (k == "warmup_steps") return "warmup " + v;
  if (k == "target_au" && value.is_number()) return "target " + whole_percent_text(value.get<double>());
  if (k == "verify" && family == "stage") return value == true ? "verify" : "no verify";
  if (k == "step_time") return "step " + v;
  if (k == "runtime" || k == "ramp_time") {
    const std::string word = k == "runtime" ? "runtime " : "ramp ";
    return word + (value.is_number_integer() ? format_duration_exact(value.get<std::int64_t>()) : v);
  }
  if (k == "transform") return v == "none" ? "no transform" : "transform " + v;
  if (k == "samples") return v == "files" || v == "memory" ? "from " + v : "samples " + v;
  return part.short_key + ":" + v;
}

CaseLabels label_cases(const std::vector<Case>& cases) {
  CaseLabels out;
  // Per group and per family: every value each parameter takes.
  std::map<std::string, std::size_t> group_index;
  std::vector<std::vector<const Case*>> members;
  std::map<std::string, std::map<std::string, std::set<std::string>>> family_values;
  for (const Case& c : cases) {
    const std::string key = c.group.empty() ? c.family : c.group;
    auto [it, added] = group_index.emplace(key, out.groups.size());
    if (added) {
      out.groups.push_back({c.family, c.group, "", {}, 0});
      members.emplace_back();
    }
    members[it->second].push_back(&c);
    for (const NamePart& p : c.name_parts()) family_values[c.family][p.key].insert(p.value);
  }
  for (std::size_t g = 0; g < out.groups.size(); ++g) {
    CaseLabels::Group& group = out.groups[g];
    const std::vector<const Case*>& list = members[g];
    std::map<std::string, std::set<std::string>> values;
    std::set<int> repetitions;
    for (const Case* c : list) {
      for (const NamePart& p : c->name_parts()) values[p.key].insert(p.value);
      repetitions.insert(c->repetitions);
    }
    std::vector<std::string> constant;
    const Case& first = *list.front();
    for (const NamePart& p : first.name_parts()) {
      if (values[p.key].size() > 1) group.varying.push_back(p.key);
      else constant.push_back(label_part(first.family, p, first.params.at(p.key)));
    }
    // A parameter only some cases of the group have (an optional one) varies too.
    for (const auto& entry : values) {
      const std::string& key = entry.first;  // a lambda may not capture a structured binding (clang 14)
      if (std::find(group.varying.begin(), group.varying.end(), key) == group.varying.end() &&
          std::any_of(list.begin(), list.end(), [&](const Case* c) { return !c->params.contains(key); }))
        group.varying.push_back(key);
    }
    std::string reps;
    if (repetitions.size() == 1)
      reps =
          std::to_string(*repetitions.begin()) + (*repetitions.begin() == 1 ? " repetition" : " repetitions");
    else
      reps = std::to_string(*repetitions.begin()) + " to " + std::to_string(*repetitions.rbegin()) +
             " repetitions";
    group.header = group.family + (group.at.empty() ? "" : " " + group.at) +
                   (constant.empty() ? "" : ": " + join(constant, " ")) + "; " + reps + " (" +
                   std::to_string(list.size()) + (list.size() == 1 ? " case)" : " cases)");
    for (const Case* c : list) {
      std::vector<std::string> mine, brief, all;
      for (const NamePart& p : c->name_parts()) {
        const std::string text = label_part(c->family, p, c->params.at(p.key));
        if (std::find(group.varying.begin(), group.varying.end(), p.key) != group.varying.end())
          mine.push_back(text);
        if (family_values[c->family][p.key].size() > 1) brief.push_back(text);
        all.push_back(text);
      }
      if (brief.empty()) brief = all;  // the family's only case: all of it
      CaseLabels::Label l;
      l.group = g;
      l.label = mine.empty() ? "(one case)" : join(mine, " ");
      l.brief = c->family + " " + join(brief, " ");
      group.label_width = std::max(group.label_width, columns(l.label));
      out.by_name[c->name()] = l;
    }
    group.label_width = std::min(group.label_width, label_cap(group.family));
  }
  return out;
}

std::string column_titles(const std::string& family, std::size_t label_width) {
  std::string line(kIndent, ' ');
  line += std::string(label_width, ' ');
  for (const Column& col : columns_of(family)) line += " " + pad_left(col.title, col.width);
  return line + "  verdict\n";
}

std::string format_case_lines(const CaseView& c, const std::string& raw_label, std::size_t label_width,
                              bool colour, const std::vector<std::string>& notes_above) {
  // A label and notes quote the config, a trace's job name, file names: escaped for the terminal.
  const std::string label = printable(raw_label);
  std::string out(kIndent, ' ');
  if (columns(label) > label_width) {
    // Too long for the figures beside it: a line of its own.
    out += label + "\n" + std::string(kIndent + label_width, ' ');
  } else {
    out += pad_right(label, label_width);
  }
  for (const Column& col : columns_of(c.family)) out += " " + pad_left(col.text(c), col.width);
  const auto [verdict, tone] = verdict_of(c);
  out += "  " + (colour ? coloured(verdict, tone) : verdict) + "\n";
  const std::vector<std::string> notes = notes_of(c);
  if (!notes.empty() && notes == notes_above) return out + "    (the same as above)\n";
  for (const std::string& note : notes) out += wrap_text("    " + printable(note) + "\n", kConsoleWidth, 2);
  return out;
}

CaseTable::CaseTable(std::ostream& out, const CaseLabels& labels, bool colour)
    : out_(out), labels_(labels), colour_(colour) {}

void CaseTable::add(const std::vector<BenchmarkEntry>& entries) {
  ResultDocument doc;
  doc.benchmarks = entries;
  for (const CaseView& c : fold_cases(doc)) {
    const CaseLabels::Label* l = labels_.find(c.name);
    if (l && l->group != shown_group_) {
      const CaseLabels::Group& g = labels_.groups[l->group];
      out_ << "\n"
           << wrap_text(printable(g.header) + "\n", kConsoleWidth, 4)
           << column_titles(g.family, g.label_width);
      shown_group_ = l->group;
      notes_above_.clear();
    }
    if (l) {
      out_ << format_case_lines(c, l->label, labels_.groups[l->group].label_width, colour_, notes_above_);
    } else {
      out_ << format_case_lines(c, c.name, 0, colour_, notes_above_);  // its full name on a line of its own
    }
    notes_above_ = notes_of(c);
  }
  out_.flush();
}

}  // namespace feedbench
