// The HTML report. The static parts (verdict, environment, paths, data set, config,
// command line, tables) are rendered here, so the page reads without JavaScript and prints;
// the charts are drawn in the page by Chart.js from the data embedded as JSON.
#include "html_report.h"

#include "cache_trust.h"
#include "case_view.h"
#include "markup.h"
#include "summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/chartjs.h"
#include "feedbench/report_css.h"
#include "feedbench/report_js.h"
#include "feedbench/results/comparison.h"
#include "feedbench/results/counters.h"
#include "feedbench/results/recorded_variables.h"

namespace feedbench {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------- small helpers

std::string escape_html(const std::string& s) { return escape_markup(s); }

// JSON inside <script>: every '<' becomes \u003c (it can only occur inside strings), so no
// "</script" or "<!--" can end or confuse the element.
std::string script_safe_json(const json& j) {
  std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

// Chart.js inlined: a literal "</script" inside it would end the element early. Only that
// sequence is touched ("</" alone may close a regular expression literal).
std::string script_safe_js(std::string js) {
  for (std::size_t at = 0; (at = js.find("</script", at)) != std::string::npos; at += 3) {
    js.replace(at, 2, "<\\/");
  }
  return js;
}

// RETURNS: j[a][b]... or nullptr where any step is missing or not an object.
const json* at(const json& j, std::initializer_list<const char*> keys) {
  const json* cur = &j;
  for (const char* k : keys) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(k);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

std::string text_of(const json* v) {
  if (!v || v->is_null()) return "";
  if (v->is_string()) return v->get<std::string>();
  if (v->is_boolean()) return v->get<bool>() ? "yes" : "no";
  if (v->is_number_float()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v->get<double>());
    return buf;
  }
  return v->dump();
}

std::string text_at(const json& j, std::initializer_list<const char*> keys) { return text_of(at(j, keys)); }

// A counter's unit: the counter table's, else what a name not in it ends with (lat_p75_us,
// wait_p75_ms), else a plain count. One rule for a column's header and its cells.
CounterUnit unit_of(const std::string& key) {
  if (const CounterInfo* info = find_counter(key)) return info->unit;
  auto ends = [&](const std::string& suffix) {
    return key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends("_us")) return CounterUnit::kMicroseconds;
  if (ends("_ms")) return CounterUnit::kMilliseconds;
  return CounterUnit::kCount;
}

// One counter as a cell: a bare number in the unit its header names (counter_header): MiB for
// MiB/s, points for a percentage; a duration with its unit, whose header ("time") names none.
std::string format_counter(const std::string& key, double v) {
  switch (unit_of(key)) {
    case CounterUnit::kBytesPerSecond: return format_printf("%.1f", v / (1024.0 * 1024.0));
    case CounterUnit::kFraction: return format_printf("%.1f", v * 100);
    case CounterUnit::kNanoseconds: return format_duration_ns(v);
    default: return format_number(v);
  }
}

// A column's title: the counter table's label, else the name with its unit: lat_p75_us
// "p75 µs", wait_p75_ms "wait p75 ms"; else the name.
std::string counter_header(const std::string& key) {
  if (const CounterInfo* info = find_counter(key)) return info->label;
  const CounterUnit unit = unit_of(key);
  if (unit != CounterUnit::kMicroseconds && unit != CounterUnit::kMilliseconds) return key;
  std::string k = key.rfind("lat_", 0) == 0 ? key.substr(4) : key;
  k.resize(k.size() - 3);  // the "_us" or "_ms"
  std::replace(k.begin(), k.end(), '_', ' ');
  return k + (unit == CounterUnit::kMicroseconds ? " µs" : " ms");
}

// The command line as the page shows it: credentials withheld, also in a result written before
// feedbench withheld them (the names' rule; a value passed alone cannot be told then).
std::string command_text(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : withhold_in_command(argv, {}, nullptr)) {
    if (!out.empty()) out += ' ';
    out += shell_quote(a);
  }
  return out;
}

// ---------------------------------------------------------------- cases

// Cumulative distribution from the histogram's bins, in µs: [[upper_us, fraction], ...],
// thinned to at most ~240 points (the shape survives; the tail's last point is always kept).
json latency_cdf(const Histogram& h) {
  json bins = h.to_json("ns")["bins"];
  json points = json::array();
  if (!bins.is_array() || bins.empty() || h.count() == 0) return points;
  double total = static_cast<double>(h.count());
  std::size_t step = std::max<std::size_t>(1, bins.size() / 240);
  points.push_back(json::array({bins[0][0].get<double>() / 1000.0, 0.0}));
  double cum = 0;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    cum += bins[i][2].get<double>();
    if (i % step == 0 || i + 1 == bins.size())
      points.push_back(json::array({bins[i][1].get<double>() / 1000.0, cum / total}));
  }
  return points;
}

json case_json(const CaseView& c) {
  json excluded = json::array();
  for (const ExcludedRepetition& x : c.excluded)
    excluded.push_back({{"repetition_index", x.repetition_index}, {"reason", x.reason}});
  json j = {{"case", c.name},
            {"family", c.family},
            {"params", c.params},
            {"repetitions", c.repetitions()},
            {"achieved_repetitions", c.achieved},
            {"excluded", excluded},
            {"calibration", c.calibration},
            {"counters", c.counters},
            {"errors", c.errors},
            {"extra", c.extra}};
  // A watched job's command, withheld as the command line is (the page embeds extra whole).
  if (const json* command = at(c.extra, {"command"}); command && command->is_array()) {
    std::vector<std::string> argv;
    for (const json& a : *command)
      if (a.is_string()) argv.push_back(a.get<std::string>());
    if (argv.size() == command->size()) j["extra"]["command"] = withhold_in_command(argv, {}, nullptr);
  }
  bool cache_achieved = true;
  for (const ExcludedRepetition& x : c.excluded)
    if (x.cache.is_object() && x.cache.value("achieved", true) == false) cache_achieved = false;
  j["cache"] = {
      {"requested", c.requested_state}, {"residency_before", c.residency}, {"achieved", cache_achieved}};
  if (c.latency && c.latency->count() > 0) {
    j["latency"] = {{"unit", "us"},
                    {"count", c.latency->count()},
                    {"p50", c.latency->quantile(0.5) / 1000.0},
                    {"p99", c.latency->quantile(0.99) / 1000.0},
                    {"cdf", latency_cdf(*c.latency)}};
  } else {
    j["latency"] = nullptr;
  }
  return j;
}

// RETURNS: the non-empty parts joined with `sep`: an absent part leaves no separator behind.
std::string joined(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts)
    if (!p.empty()) out += (out.empty() ? "" : sep) + p;
  return out;
}

// ---------------------------------------------------------------- page sections

struct Page {
  std::ostringstream html;
  template <typename T>
  Page& operator<<(const T& s) {
    html << s;
    return *this;
  }
};

std::string row(const std::string& label, const std::vector<std::string>& cells, bool code = false) {
  std::string r = "<tr><th scope=\"row\">" + escape_html(label) + "</th>";
  for (const auto& c : cells)
    r += code ? "<td><code>" + escape_html(c) + "</code></td>" : "<td>" + escape_html(c) + "</td>";
  return r + "</tr>\n";
}

bool any_nonempty(const std::vector<std::string>& v) {
  return std::any_of(v.begin(), v.end(), [](const std::string& s) { return !s.empty(); });
}

std::string file_header_cells(const std::vector<std::string>& names) {
  std::string r = "<tr><th></th>";
  for (const auto& n : names) r += "<th scope=\"col\">" + escape_html(n) + "</th>";
  return r + "</tr>\n";
}

void render_environment(Page& p, const std::vector<ResultDocument>& docs,
                        const std::vector<std::string>& names) {
  p << "<section id=\"environment\"><h2>Environment</h2>\n<div class=\"scroll\"><table class=\"facts\">\n";
  if (docs.size() > 1) p << "<thead>" << file_header_cells(names) << "</thead>";
  auto host_row = [&](const std::string& label, auto value_of) {
    std::vector<std::string> cells;
    for (const auto& d : docs) cells.push_back(value_of(d));
    if (any_nonempty(cells)) p << row(label, cells);
  };
  auto host = [](const char* k) {
    return [k](const ResultDocument& d) { return text_at(d.environment, {"host", k}); };
  };
  host_row("Instance type", host("instance_type"));
  host_row("CPU", [](const ResultDocument& d) {
    std::string s = text_at(d.environment, {"host", "cpu_model"});
    std::string cores = text_at(d.environment, {"host", "cores"});
    if (!cores.empty()) s += (s.empty() ? "" : ", ") + cores + " cores";
    return s;
  });
  host_row("Memory", [](const ResultDocument& d) {
    const json* m = at(d.environment, {"host", "memory_total_bytes"});
    return m && m->is_number() ? format_size(m->get<double>()) : text_of(m);
  });
  host_row("GPU", [](const ResultDocument& d) {
    const json* g = at(d.environment, {"host", "gpus"});
    if (!g || !g->is_array() || g->empty()) return std::string("none detected");
    std::map<std::string, int> count;
    std::vector<std::string> order;
    for (const auto& gpu : *g) {
      std::string drv = text_at(gpu, {"driver"});
      std::string s = joined({joined({text_at(gpu, {"name"}), text_at(gpu, {"memory"})}, " "),
                              drv.empty() ? "" : "driver " + drv},
                             ", ");
      if (s.empty()) s = "unnamed GPU";
      if (!count[s]++) order.push_back(s);
    }
    std::string out;
    for (const auto& s : order) out += (out.empty() ? "" : "; ") + std::to_string(count[s]) + " × " + s;
    return out;
  });
  host_row("Kernel", host("kernel"));
  host_row("Distribution", host("distribution"));
  host_row("Host name", host("hostname"));
  host_row("Run at", [](const ResultDocument& d) { return text_at(d.context, {"date"}); });
  host_row("feedbench", [](const ResultDocument& d) {
    std::string version = text_at(d.tool, {"version"});
    std::string commit = text_at(d.tool, {"git_commit"});
    if (!commit.empty()) {
      commit = "commit " + commit.substr(0, 12) +
               (text_at(d.tool, {"git_dirty"}) == "yes" ? ", modified tree" : "");
      version = version.empty() ? commit : version + " (" + commit + ")";
    }
    std::string gb = text_at(d.tool, {"benchmark_version"});
    return joined({version, gb.empty() ? "" : "Google Benchmark " + gb}, ", ");
  });
  p << "</table></div></section>\n";
}

// Roles in a stable order: source, cache, then the rest as the document lists them.
std::vector<std::string> roles_of(const json* obj) {
  std::vector<std::string> roles;
  if (!obj || !obj->is_object()) return roles;
  for (const char* r : {"source", "cache"})
    if (obj->contains(r)) roles.push_back(r);
  for (const auto& [k, v] : obj->items())
    if (k != "source" && k != "cache") roles.push_back(k);
  return roles;
}

// RETURNS: a warning when two roles' paths share a block device, else "".
std::string same_device_warning(const json* paths) {
  std::vector<std::string> roles = roles_of(paths);
  for (const auto& r : roles) {
    const json& info = (*paths)[r];
    const json* shares = at(info, {"shares_device_with"});
    std::string other;
    if (shares && shares->is_string()) other = shares->get<std::string>();
    else if (shares && shares->is_array() && !shares->empty()) other = text_of(&(*shares)[0]);
    else if (shares && shares->is_boolean() && shares->get<bool>()) other = "another path";
    if (!other.empty())
      return "The " + r + " path shares its device with the " + other +
             " path: a cache there cannot be faster than its source, except through the page cache.";
  }
  for (std::size_t i = 0; i < roles.size(); ++i)
    for (std::size_t k = i + 1; k < roles.size(); ++k) {
      std::string a = text_at((*paths)[roles[i]], {"device"}), b = text_at((*paths)[roles[k]], {"device"});
      if (!a.empty() && a == b)
        return "The " + roles[i] + " and " + roles[k] + " paths are on the same device (" + a +
               "): a cache there cannot be faster than its source, except through the page cache.";
    }
  return "";
}

void render_paths_and_data(Page& p, const std::vector<ResultDocument>& docs,
                           const std::vector<std::string>& names) {
  p << "<section id=\"paths\"><h2>Paths and data set</h2>\n";
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const ResultDocument& d = docs[i];
    if (docs.size() > 1) p << "<h3>" << escape_html(names[i]) << "</h3>\n";
    const json* paths = at(d.environment, {"paths"});
    std::string warning = same_device_warning(paths);
    if (!warning.empty())
      p << "<p class=\"warning\" role=\"alert\"><strong>Same device.</strong> " << escape_html(warning)
        << "</p>\n";
    std::vector<std::string> roles = roles_of(paths);
    for (const auto& r : roles_of(at(d.dataset, {})))
      if (std::find(roles.begin(), roles.end(), r) == roles.end()) roles.push_back(r);
    if (roles.empty()) {
      p << "<p class=\"muted\">The result file records no paths.</p>\n";
      continue;
    }
    p << "<div class=\"scroll\"><table class=\"facts\"><thead><tr><th></th>";
    for (const auto& r : roles) p << "<th scope=\"col\">" << escape_html(r) << "</th>";
    p << "</tr></thead>\n";
    auto role_row = [&](const std::string& label, auto value_of, bool code = false) {
      std::vector<std::string> cells;
      for (const auto& r : roles) {
        const json* info = paths ? at(*paths, {r.c_str()}) : nullptr;
        const json* data = at(d.dataset, {r.c_str()});
        cells.push_back(value_of(info ? *info : json::object(), data ? *data : json::object()));
      }
      if (any_nonempty(cells)) p << row(label, cells, code);
    };
    role_row(
        "Path",
        [](const json& info, const json& data) {
          std::string s = text_at(info, {"resolved"});
          return s.empty() ? text_at(data, {"root"}) : s;
        },
        true);
    role_row("File system", [](const json& info, const json&) { return text_at(info, {"fs_type"}); });
    role_row(
        "Mount",
        [](const json& info, const json&) {
          std::string m = text_at(info, {"mount_point"}), src = text_at(info, {"mount_source"});
          return m.empty() || src.empty() ? m + src : m + " from " + src;
        },
        true);
    role_row("Device", [](const json& info, const json&) {
      std::string s = text_at(info, {"device"});
      if (s.empty() && !text_at(info, {"fs_type"}).empty()) s = "no local block device";
      std::string model = text_at(info, {"device_info", "model"});
      if (!model.empty()) s += (s.empty() ? "" : ", ") + model;
      const json* rot = at(info, {"device_info", "rotational"});
      if (rot && (rot->is_boolean() || rot->is_number()))
        s += (rot->is_boolean() ? rot->get<bool>() : rot->get<double>() != 0) ? ", rotational"
                                                                              : ", non-rotational";
      std::string ra = text_at(info, {"device_info", "read_ahead_kb"});
      if (!ra.empty()) s += ", read-ahead " + ra + " KiB";
      std::string sched = text_at(info, {"device_info", "scheduler"});
      if (!sched.empty()) s += ", scheduler " + sched;
      return s;
    });
    role_row("Files", [](const json&, const json& data) { return text_at(data, {"files"}); });
    role_row("Bytes", [](const json&, const json& data) {
      const json* b = at(data, {"bytes"});
      return b && b->is_number() ? format_size(b->get<double>()) + " (" + b->dump() + " B)" : text_of(b);
    });
    role_row(
        "Fingerprint", [](const json&, const json& data) { return text_at(data, {"fingerprint"}); }, true);
    role_row("Cache manifest", [](const json&, const json& data) {
      std::string label = text_at(data, {"manifest", "label"});
      std::string ver = text_at(data, {"manifest", "version"});
      return ver.empty() || label.empty() ? label : label + " (manifest " + ver + ")";
    });
    p << "</table></div>\n";
  }
  p << "</section>\n";
}

void render_reproduce(Page& p, const std::vector<ResultDocument>& docs,
                      const std::vector<std::string>& names) {
  p << "<section id=\"reproduce\"><h2>Rerun it</h2>\n";
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const ResultDocument& d = docs[i];
    if (docs.size() > 1) p << "<h3>" << escape_html(names[i]) << "</h3>\n";
    p << "<p>Command line:</p><pre class=\"command\">" << escape_html(command_text(d.command_line))
      << "</pre>\n";
    if (!d.environment_variables.empty()) {
      std::string env;
      for (const auto& [k, v] : d.environment_variables) env += k + "=" + shell_quote(v) + "\n";
      p << "<p>With these environment variables set:</p><pre class=\"command\">" << escape_html(env)
        << "</pre>\n";
    }
    // The config's ${VAR:-default} fallbacks: not the user's settings, so not shown as such.
    if (const json* defaults = at(d.config, {"defaults_used"});
        defaults && defaults->is_object() && !defaults->empty()) {
      std::string list;
      for (const auto& [k, v] : defaults->items())
        list += k + " unset: the config's default " + shell_quote(text_of(&v)) + " applied\n";
      p << "<p>Defaults the config applied (these variables were <em>not</em> set):</p><pre "
           "class=\"defaults\">"
        << escape_html(list) << "</pre>\n";
    }
    std::string cname = text_at(d.config, {"name"}), cfile = text_at(d.config, {"file"});
    std::string sha = text_at(d.config, {"sha256"});
    p << "<details><summary>Config <code>" << escape_html(cname.empty() ? "(unnamed)" : cname) << "</code>";
    if (!cfile.empty()) p << " from <code>" << escape_html(cfile) << "</code>";
    if (!sha.empty()) p << ", SHA-256 <code>" << escape_html(sha.substr(0, 16)) << "…</code>";
    p << " (as run, click to show)</summary>\n<pre class=\"json\">";
    const json* resolved = at(d.config, {"resolved"});
    p << escape_html(resolved ? resolved->dump(2) : d.config.dump(2)) << "</pre></details>\n";
    if (d.summary.is_object() && !d.summary.empty())
      p << "<details><summary>The run's own summary (as recorded)</summary>\n<pre class=\"json\">"
        << escape_html(d.summary.dump(2)) << "</pre></details>\n";
  }
  p << "</section>\n";
}

// A parameter's place in a case label: the order a person names a read (pattern, block size,
// engine, queue depth, workers), then the page-cache state and the path; the rest after.
int param_rank(const std::string& key) {
  static const char* order[] = {"pattern",    "block_size", "record_size", "engine",       "queue_depth",
                                "batch_size", "workers",    "prefetch",    "accelerators", "samples",
                                "transform",  "step_time",  "cache_state", "path"};
  for (int i = 0; i < static_cast<int>(std::size(order)); ++i)
    if (key == order[i]) return i;
  return 1000;
}

// A size as people write it in a config: "4 KiB", "1 MiB"; else 3 significant digits.
std::string size_text(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = bytes;
  while (u < 4 && v >= 1024 && std::fmod(v, 1024) == 0) {
    v /= 1024;
    ++u;
  }
  return u > 0 || bytes < 1024 ? format_printf("%.0f ", v) + units[u] : format_size(bytes);
}

// One parameter as it reads in a case label: "w 4", "qd 32", "4 KiB", "cold", "source".
std::string param_text(const std::string& key, const json* v) {
  if (!v || v->is_null()) return "";
  if (v->is_number() && (key == "block_size" || key == "record_size" || key == "samples"))
    return size_text(v->get<double>());
  std::string value = text_of(v);
  if (key == "pattern" || key == "engine" || key == "cache_state" || key == "path" || key == "transform")
    return value;
  static const std::map<std::string, std::string> prefix = {{"workers", "w"},
                                                            {"queue_depth", "qd"},
                                                            {"accelerators", "acc"},
                                                            {"batch_size", "batch"},
                                                            {"prefetch", "prefetch"}};
  auto it = prefix.find(key);
  return (it == prefix.end() ? key : it->second) + " " + value;
}

// The parameters of a family's cases, in label order: those that differ between them (they
// label each case) and those that do not (said once).
struct CaseLabels {
  std::vector<std::string> varying, constant;
  explicit CaseLabels(const std::vector<const CaseView*>& cases) {
    std::vector<std::string> keys;
    for (const auto* c : cases)
      for (const auto& [k, v] : c->params.items())
        if (k != "family" && std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    std::stable_sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) {
      return param_rank(a) < param_rank(b);
    });
    for (const auto& k : keys) {
      std::set<std::string> values;
      for (const auto* c : cases) values.insert(param_text(k, at(c->params, {k.c_str()})));
      (values.size() > 1 ? varying : constant).push_back(k);
    }
  }
  // RETURNS: "sequential · 1 MiB · w 4 · cold", or the case name when nothing varies.
  std::string label(const CaseView& c) const {
    std::vector<std::string> parts;
    for (const auto& k : varying) parts.push_back(param_text(k, at(c.params, {k.c_str()})));
    std::string text = joined(parts, " · ");
    return text.empty() ? c.name : text;
  }
  // RETURNS: the line that names the shared parameters once, or "" when there is none.
  std::string same_line(const CaseView& any) const {
    std::vector<std::string> same;
    for (const auto& k : constant) same.push_back(param_text(k, at(any.params, {k.c_str()})));
    std::string text = joined(same, " · ");
    return text.empty() ? "" : "<p class=\"same\">Every case here: " + escape_html(text) + "</p>\n";
  }
};

// The columns a reader needs to see without scrolling, per family, after the label and reps.
std::vector<std::string> key_counters(const std::string& family) {
  if (family == "loader" || family == "replay") return {"samples_per_second", "au", "stall_fraction"};
  if (family == "stage") return {"bytes_per_second", "files_per_second"};
  if (family == "checkpoint")
    return {"bytes_per_second", "checkpoint_s", "restore_bytes_per_second", "restore_s", "fsync_share"};
  if (family == "job") return {"au", "wait_p99_ms", "samples_per_second"};
  return {"bytes_per_second", "items_per_second", "lat_p50_us", "lat_p99_us", "residency_before"};
}

void render_case_tables(Page& p, const std::vector<ResultDocument>& docs,
                        const std::vector<std::vector<CaseView>>& all,
                        const std::vector<std::string>& names) {
  p << "<section id=\"cases\"><h2>Every case</h2>\n<p class=\"muted\">Median of the achieved repetitions "
       "(reps: achieved of all that ran). Each case is labelled by what varies between the cases of its "
       "family; what is the same for all of them is said once above the table, and the full case name is "
       "its tooltip. A round whose page-cache state was not the one asked for "
       "(<em>not cold</em>, <em>not warm</em>) or that read less than planned (<em>short round</em>) is "
       "excluded from every figure on this page, and named in the notes. A calibration case (samples from "
       "memory) measures the harness, not storage, and is in no headline.</p>\n";
  for (std::size_t f = 0; f < all.size(); ++f) {
    std::vector<std::string> families;
    for (const auto& c : all[f])
      if (std::find(families.begin(), families.end(), c.family) == families.end())
        families.push_back(c.family);
    for (const auto& family : families) {
      std::vector<const CaseView*> cases;
      for (const auto& c : all[f])
        if (c.family == family) cases.push_back(&c);
      std::set<std::string> counters_seen;
      bool any_verdict = false;
      for (const auto* c : cases) {
        for (const auto& [k, v] : c->counters) counters_seen.insert(k);
        any_verdict = any_verdict || !text_at(c->extra, {"verdict"}).empty();
      }
      const CaseLabels labels(cases);
      std::vector<std::string> counters;
      for (const auto& k : key_counters(family))
        if (counters_seen.count(k)) counters.push_back(k);
      const std::size_t n_key = counters.size();
      std::vector<std::string> rest;
      for (const auto& k : counters_seen)
        if (std::find(counters.begin(), counters.end(), k) == counters.end()) rest.push_back(k);
      std::stable_sort(rest.begin(), rest.end(), [](const std::string& a, const std::string& b) {
        return counter_rank(a) < counter_rank(b);
      });
      counters.insert(counters.end(), rest.begin(), rest.end());

      p << "<h3>" << escape_html(family) << (all.size() > 1 ? " — " + escape_html(names[f]) : "")
        << "</h3>\n";
      p << labels.same_line(*cases.front());
      p << "<div class=\"scroll\"><table class=\"cases\"><thead><tr><th scope=\"col\" "
           "class=\"label\">case</th>"
           "<th scope=\"col\" class=\"num key\">reps</th>";
      for (std::size_t i = 0; i < counters.size(); ++i) {
        if (i == n_key && any_verdict) p << "<th scope=\"col\" class=\"key verdict\">verdict</th>";
        p << "<th scope=\"col\" class=\"num" << (i < n_key ? " key" : "") << "\">"
          << escape_html(counter_header(counters[i])) << "</th>";
      }
      if (counters.size() == n_key && any_verdict)
        p << "<th scope=\"col\" class=\"key verdict\">verdict</th>";
      p << "<th scope=\"col\">notes</th></tr></thead>\n<tbody>\n";
      // A row of figures read on a cache that failed its checks says so in its label.
      const bool unverified = cache_unverified(docs[f]);
      for (const auto* c : cases) {
        p << "<tr" << (c->errors.empty() ? "" : " class=\"failed\"") << " title=\"" << escape_html(c->name)
          << "\">"
          << "<th scope=\"row\" class=\"label\">"
          << escape_html(labels.label(*c) +
                         cache_note(unverified && c->measured() && c->param("path") == "cache"))
          << "</th>";
        // The figures are the median of the achieved repetitions, out of all that ran.
        p << "<td class=\"num\">" << c->achieved
          << (c->achieved == c->repetitions() ? "" : " of " + std::to_string(c->repetitions())) << "</td>";
        const std::string verdict =
            "<td class=\"verdict\">" + escape_html(text_at(c->extra, {"verdict"})) + "</td>";
        for (std::size_t i = 0; i < counters.size(); ++i) {
          if (i == n_key && any_verdict) p << verdict;
          auto v = c->counter(counters[i]);
          p << "<td class=\"num\">" << (v ? escape_html(format_counter(counters[i], *v)) : "") << "</td>";
        }
        if (counters.size() == n_key && any_verdict) p << verdict;
        std::string notes;
        if (c->calibration) notes += "<span class=\"flag\">calibration</span> no storage figure ";
        for (const auto& x : c->excluded) {
          const bool cache_missed = x.cache.is_object() && x.cache.value("achieved", true) == false;
          notes += "<span class=\"flag\">" +
                   escape_html(cache_missed ? "not " + c->requested_state : std::string("short round")) +
                   "</span> repetition " + std::to_string(x.repetition_index) +
                   " excluded: " + escape_html(x.reason) + " ";
        }
        for (const auto& e : c->errors) notes += "<span class=\"error\">" + escape_html(e) + "</span> ";
        p << "<td class=\"notes\">" << notes << "</td></tr>\n";
      }
      p << "</tbody></table></div>\n";
    }
  }
  p << "</section>\n";
}

// Cases run across ranks: per case, each host's rate (or a loader's lowest AU per host) and the
// straggler line, as text (the per-rank chart above draws the same from the embedded data).
void render_across_ranks(Page& p, const std::vector<ResultDocument>& docs,
                         const std::vector<std::vector<CaseView>>& all,
                         const std::vector<std::string>& names) {
  std::ostringstream body;
  for (std::size_t f = 0; f < all.size(); ++f)
    for (const CaseView& c : all[f]) {
      const json* ranks = at(c.extra, {"ranks"});
      if (!ranks || !ranks->is_array() || ranks->size() < 2) continue;
      const bool loader = c.family == "loader";
      std::vector<std::string> hosts;
      if (const json* hs = at(c.extra, {"hosts"}); hs && hs->is_array())
        for (const json& h : *hs)
          if (h.contains("bytes_per_second") && h["bytes_per_second"].is_number())
            hosts.push_back(h.value("host", std::string("?")) + " " +
                            format_rate(h["bytes_per_second"].get<double>()));
      std::string line;
      if (loader) {
        const json* min_rank = at(c.extra, {"min_au_rank"});
        const json* min_au = at(c.extra, {"min_au"});
        if (min_rank && min_rank->is_number() && min_au && min_au->is_number())
          line = "lowest AU " + format_printf("%.1f%%", 100 * min_au->get<double>()) + " on rank " +
                 std::to_string(min_rank->get<int>()) + " (host " + text_at(c.extra, {"min_au_host"}) + ")";
      } else {
        const json* st = at(c.extra, {"stragglers"});
        std::vector<std::string> named;
        if (st && st->is_array())
          for (const json& s : *st)
            named.push_back("rank " + std::to_string(s.value("rank", 0)) + " (host " +
                            s.value("host", std::string("?")) + ") at " +
                            format_rate(s.value("bytes_per_second", 0.0)) + ", " +
                            format_printf("%.2f", s.value("vs_median", 0.0)) + " of the median rank's rate");
        const double below =
            c.extra.contains("cluster") ? c.extra["cluster"].value("straggler_below", 0.8) : 0.8;
        line = named.empty()
                   ? "no straggler: every rank read at " + format_printf("%.1f", below) +
                         " of the median rank's rate or more"
                   : std::string(named.size() == 1 ? "straggler: " : "stragglers: ") + joined(named, "; ");
      }
      body << "<li><code>" << escape_html(c.name) << "</code>"
           << escape_html(cache_note(cache_unverified(docs[f]) && c.param("path") == "cache"))
           << (all.size() > 1 ? " (" + escape_html(names[f]) + ")" : "") << ": " << ranks->size() << " ranks"
           << (hosts.empty() ? "" : " — hosts " + escape_html(joined(hosts, ", "))) << "<br><span class=\""
           << (line.rfind("straggler", 0) == 0 ? "straggler" : "muted") << "\">" << escape_html(line)
           << "</span></li>\n";
    }
  if (body.str().empty()) return;
  p << "<section id=\"across-ranks\"><h2>Across ranks</h2>\n<p class=\"muted\">Cases run under MPI: each "
       "host's rate "
       "(the representative repetition) and the ranks slower than 0.8 of the median rank's rate, which hold "
       "the "
       "aggregate down. The per-rank chart is under Charts.</p>\n<ul class=\"ranks\">\n"
    << body.str() << "</ul></section>\n";
}

// The figure compared across files: the first metric `diff` judges the family on (a read's
// rate, the loader's AU), else a throughput.
std::optional<std::pair<std::string, double>> primary_metric(const CaseView& c) {
  const std::string primary = primary_counter(c.family);
  if (auto v = c.counter(primary)) return std::make_pair(primary, *v);
  for (const char* k : {"samples_per_second", "bytes_per_second", "items_per_second"})
    if (auto v = c.counter(k)) return std::make_pair(std::string(k), *v);
  return std::nullopt;
}

// diff's verdict on one metric of a case, and when noisy why (the spread, the load, other
// programs' share of the cores): a noisy change is drawn uncoloured, its reason in the tooltip.
struct DiffMark {
  Verdict verdict = Verdict::kUnchanged;
  std::string why_noisy;
};

// RETURNS: per case name of BASE, diff's verdict on `metric` of that case: what the ratio
// table colours (only a significant change is coloured; diff's rule, not a second one).
std::map<std::string, std::map<std::string, DiffMark>> diff_verdicts(const ResultDocument& base,
                                                                     const ResultDocument& next,
                                                                     const std::string& base_name,
                                                                     const std::string& next_name) {
  std::map<std::string, std::map<std::string, DiffMark>> out;
  Comparison cmp;
  try {
    cmp = compare_results(base, next, CompareOptions{}, base_name, next_name);
  } catch (const InputError&) {
    return out;  // nothing in common (or nothing diff can judge): nothing coloured
  }
  for (const CaseComparison& c : cmp.cases)
    for (const MetricComparison& m : c.metrics) out[c.base_name][m.metric] = {m.verdict, m.why_noisy};
  return out;
}

void render_ratio_table(Page& p, const std::vector<ResultDocument>& docs,
                        const std::vector<std::vector<CaseView>>& all,
                        const std::vector<std::string>& names) {
  if (all.size() < 2) return;
  p << "<section id=\"ratios\"><h2>Ratios between files</h2>\n<p class=\"muted\">Each case's figure that "
       "<code>feedbench diff</code> judges it on (MiB/s for reads and staging, AU % for the loader) in every "
       "file, and its ratio to <strong>"
    << escape_html(names[0])
    << "</strong>. Above 1: better than the first file. A ratio is coloured only where "
       "<code>diff</code> calls the change significant (beyond its threshold and the noise of the "
       "repetitions); "
       "a tooltip gives its verdict.</p>\n";
  std::vector<std::map<std::string, std::map<std::string, DiffMark>>> verdicts(all.size());
  for (std::size_t f = 1; f < all.size(); ++f)
    verdicts[f] = diff_verdicts(docs[0], docs[f], names[0], names[f]);
  // Per file, whether its cache failed its checks: its figures of cache cases, and the ratios
  // made of them, say so in their cells.
  std::vector<bool> unverified;
  for (const ResultDocument& d : docs) unverified.push_back(cache_unverified(d));
  std::vector<std::string> families;
  for (const auto& c : all[0])
    if (std::find(families.begin(), families.end(), c.family) == families.end()) families.push_back(c.family);
  for (const auto& family : families) {
    // One table per family of the first file: the ratios first (what the table is for), then
    // the figures they come from.
    std::vector<const CaseView*> cases;
    for (const auto& c : all[0])
      if (c.family == family && primary_metric(c)) cases.push_back(&c);
    if (cases.empty()) continue;
    const CaseLabels labels(cases);
    p << "<h3>" << escape_html(family) << " — "
      << escape_html(counter_header(primary_metric(*cases.front())->first)) << "</h3>\n"
      << labels.same_line(*cases.front());
    p << "<div class=\"scroll\"><table class=\"cases ratios\"><thead><tr><th scope=\"col\" "
         "class=\"label\">case</th>";
    for (std::size_t f = 1; f < names.size(); ++f)
      p << "<th scope=\"col\" class=\"num key\">" << escape_html(names[f]) << " / " << escape_html(names[0])
        << "</th>";
    for (const auto& n : names) p << "<th scope=\"col\" class=\"num\">" << escape_html(n) << "</th>";
    p << "</tr></thead><tbody>\n";
    for (const CaseView* base : cases) {
      auto b = primary_metric(*base);
      std::vector<std::optional<double>> values{b->second};
      bool any = false;
      for (std::size_t f = 1; f < all.size(); ++f) {
        std::optional<double> v;
        for (const auto& c : all[f])
          if (c.name == base->name)
            if (auto m = c.counter(b->first)) v = *m;
        any = any || v.has_value();
        values.push_back(v);
      }
      if (!any) continue;
      const bool on_cache = base->param("path") == "cache";
      p << "<tr title=\"" << escape_html(base->name) << "\"><th scope=\"row\" class=\"label\">"
        << escape_html(labels.label(*base)) << "</th>";
      for (std::size_t f = 1; f < values.size(); ++f) {
        if (!values[f] || b->second == 0) {
          p << "<td class=\"num\">—</td>";
          continue;
        }
        std::string cls, why = "diff: unchanged or not judged";
        if (auto c = verdicts[f].find(base->name); c != verdicts[f].end())
          if (auto m = c->second.find(b->first); m != c->second.end()) {
            if (m->second.verdict == Verdict::kImprovement) cls = " better", why = "diff: improvement";
            if (m->second.verdict == Verdict::kRegression) cls = " worse", why = "diff: regression";
            if (m->second.verdict == Verdict::kNoisy)
              why = "diff: noisy, not a regression: " + m->second.why_noisy;
          }
        p << "<td class=\"num" << cls << "\" title=\"" << escape_html(why) << "\">"
          << format_printf("%.2f", *values[f] / b->second) << "×"
          << escape_html(cache_note(on_cache && (unverified[0] || unverified[f]))) << "</td>";
      }
      for (std::size_t f = 0; f < values.size(); ++f)
        p << "<td class=\"num\">"
          << (values[f]
                  ? escape_html(format_counter(b->first, *values[f]) + cache_note(on_cache && unverified[f]))
                  : "—")
          << "</td>";
      p << "</tr>\n";
    }
    p << "</tbody></table></div>\n";
  }
  p << "</section>\n";
}

std::string default_title(const std::vector<ResultDocument>& docs, const std::vector<std::string>& names) {
  std::vector<std::string> configs;
  for (const auto& d : docs) {
    std::string n = text_at(d.config, {"name"});
    if (!n.empty() && std::find(configs.begin(), configs.end(), n) == configs.end()) configs.push_back(n);
  }
  std::string joined;
  for (const auto& n : configs.empty() ? names : configs) joined += (joined.empty() ? "" : ", ") + n;
  return "feedbench report: " + joined;
}

}  // namespace

std::vector<std::string> report_labels(const std::vector<ResultDocument>& docs,
                                       const std::vector<std::string>& files,
                                       const std::vector<std::string>& given) {
  FB_CHECK(docs.size() == files.size(), "one file name per result document");
  if (!given.empty()) {
    if (given.size() != files.size())
      throw InputError("--label: given " +
                       (given.size() == 1 ? std::string("once") : std::to_string(given.size()) + " times") +
                       " for " + std::to_string(files.size()) +
                       " result files: give one per file, in the order of the files");
    std::set<std::string> seen;
    for (const auto& l : given) {
      if (l.empty()) throw InputError("--label: expected a name, got an empty one");
      if (!seen.insert(l).second)
        throw InputError("--label: \"" + l + "\" given twice: each file needs its own");
    }
    return given;
  }
  using Source = std::function<std::string(std::size_t)>;
  const std::vector<Source> sources = {
      [&](std::size_t i) {
        return text_at(docs[i].dataset, {"cache", "manifest", "label"});
      },
      [&](std::size_t i) {
        return text_at(docs[i].environment, {"host", "instance_type"});
      },
      [&](std::size_t i) { return std::filesystem::path(files[i]).stem().string(); },
  };
  for (std::size_t s = 0; s < sources.size(); ++s) {
    if (docs.size() == 1 && s == 1) continue;  // one file: its data version, else its name
    std::vector<std::string> names;
    std::set<std::string> distinct;
    for (std::size_t i = 0; i < docs.size(); ++i) {
      names.push_back(sources[s](i));
      distinct.insert(names.back());
    }
    if (!distinct.count("") && distinct.size() == names.size()) return names;
  }
  return files;
}

nlohmann::json html_report_data(const std::vector<ResultDocument>& docs,
                                const std::vector<std::string>& names) {
  FB_CHECK(docs.size() == names.size(), "one name per result document");
  json files = json::array();
  for (std::size_t i = 0; i < docs.size(); ++i) {
    json cases = json::array();
    for (const auto& c : fold_cases(docs[i])) cases.push_back(case_json(c));
    json file = {{"name", names[i]}, {"config", text_at(docs[i].config, {"name"})}, {"cases", cases}};
    // The words the charts put beside the cache path of a file whose cache failed its checks.
    if (cache_unverified(docs[i])) file["cache_qualifier"] = kCacheUnverified;
    files.push_back(std::move(file));
  }
  return {{"files", files}};
}

std::vector<std::string> html_report_verdicts(const ResultDocument& doc) {
  // The summary's answers, as the run stored them: the page judges nothing itself.
  std::vector<std::string> out = answer_sentences(summary_of(doc).value("answers", json::object()));
  // A watched job's verdict, as feedbench watch wrote it.
  for (const BenchmarkEntry& e : doc.benchmarks) {
    // Read as text: a hand-edited file may hold anything there.
    if (text_at(e.params, {"family"}) != "job") continue;
    const std::string verdict = text_at(e.extra, {"verdict"});
    const std::string failed = text_at(e.extra, {"failed"}) == "yes"
                                   ? " (the job failed: exit " + text_at(e.extra, {"exit_code"}) + ")"
                                   : "";
    if (!verdict.empty()) out.push_back(e.case_name + failed + ": " + verdict);
  }
  if (out.empty()) out.push_back("No case completed, so there is nothing to judge: see the errors below.");
  return out;
}

namespace {

// RETURNS: the page's opening up to <main>: its head, the style inlined, nothing fetched.
std::string page_head(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src "
         "'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
         "<meta name=\"generator\" content=\"feedbench report\">\n<title>" +
         escape_html(title) + "</title>\n<style>" + embedded::kReportCss +
         "</style>\n</head>\n<body>\n<main>\n";
}

}  // namespace

std::string render_lead_page(const std::string& title, const std::string& lead_html) {
  return page_head(title) + "<header><h1>" + escape_html(title) + "</h1>\n" + lead_html +
         "</header>\n<footer>Written by <code>feedbench report</code>: this page makes no network "
         "request.</footer>\n</main>\n</body>\n</html>\n";
}

std::string render_html_report(const std::vector<ResultDocument>& docs, const std::vector<std::string>& names,
                               const std::string& title_in, const std::vector<std::string>& files,
                               const std::string& lead_html) {
  FB_CHECK(!docs.empty() && docs.size() == names.size(), "one name per result document, at least one");
  FB_CHECK(files.empty() || files.size() == docs.size(), "one path per result document, or none");
  std::string title = title_in.empty() ? default_title(docs, names) : title_in;
  std::vector<std::vector<CaseView>> all;
  for (const auto& d : docs) all.push_back(fold_cases(d));

  Page p;
  p << page_head(title);
  p << "<header><h1>" << escape_html(title) << "</h1>\n" << lead_html << "<p class=\"subtitle\">";
  for (std::size_t i = 0; i < docs.size(); ++i) {
    std::string date = text_at(docs[i].context, {"date"});
    std::string host = text_at(docs[i].environment, {"host", "instance_type"});
    if (host.empty()) host = text_at(docs[i].environment, {"host", "hostname"});
    // The data version the cache holds: a run on another version is not the same experiment.
    std::string label = text_at(docs[i].dataset, {"cache", "manifest", "label"});
    // What the label stands for: the file, and whichever of host, date and cache label it is not.
    std::string facts =
        joined({files.empty() || files[i] == names[i] ? "" : files[i], host == names[i] ? "" : host, date,
                label.empty() ? "" : "cache label " + label},
               ", ");
    p << (i ? "<br>" : "") << "<strong>" << escape_html(names[i]) << "</strong>"
      << (facts.empty() ? "" : " — " + escape_html(facts));
  }
  p << "</p>\n";
  for (std::size_t i = 0; i < docs.size(); ++i) {
    p << "<div class=\"verdict\">";
    if (docs.size() > 1) p << "<h3>" << escape_html(names[i]) << "</h3>";
    // The answers' table first (summary.h: answer_table), as the console and Markdown open with it.
    const auto rows = answer_table(summary_of(docs[i]).value("answers", json::object()));
    if (!rows.empty()) {
      p << "<table class=\"answers\">";
      for (std::size_t r = 0; r < rows.size(); ++r) {
        p << "<tr>";
        for (const std::string& cell : rows[r])
          p << (r ? "<td>" : "<th>") << escape_html(cell) << (r ? "</td>" : "</th>");
        p << "</tr>";
      }
      p << "</table>";
    }
    p << "<ul>";
    for (const auto& v : html_report_verdicts(docs[i])) p << "<li>" << escape_html(v) << "</li>";
    p << "</ul></div>\n";
  }
  for (const auto& d : docs) {
    std::string warning = same_device_warning(at(d.environment, {"paths"}));
    if (!warning.empty()) {
      p << "<p class=\"warning\"><strong>Same device.</strong> " << escape_html(warning) << "</p>\n";
      break;
    }
  }
  p << "<nav class=\"toc\"><a href=\"#environment\">Environment</a><a href=\"#paths\">Paths and data</a>"
       "<a href=\"#reproduce\">Rerun it</a><a href=\"#charts\">Charts</a>"
    << (docs.size() > 1 ? "<a href=\"#ratios\">Ratios</a>" : "")
    << "<a href=\"#cases\">Every case</a></nav>\n</header>\n";
  render_environment(p, docs, names);
  render_paths_and_data(p, docs, names);
  render_reproduce(p, docs, names);
  p << "<div id=\"charts\"><noscript><p class=\"muted\">The charts need JavaScript; the tables below hold "
       "every "
       "number.</p></noscript></div>\n";
  render_ratio_table(p, docs, all, names);
  render_across_ranks(p, docs, all, names);
  render_case_tables(p, docs, all, names);
  p << "<footer>Written by <code>feedbench report</code>. Charts drawn by Chart.js (MIT licence), inlined: "
       "this "
       "page makes no network request.</footer>\n</main>\n";
  p << "<script id=\"feedbench-data\" type=\"application/json\">"
    << script_safe_json(html_report_data(docs, names)) << "</script>\n";
  p << "<script>" << script_safe_js(embedded::kChartJs) << "</script>\n";
  p << "<script>" << script_safe_js(embedded::kReportJs) << "</script>\n</body>\n</html>\n";
  return p.html.str();
}

void write_html_report(const std::vector<ResultDocument>& docs, const std::vector<std::string>& names,
                       const std::string& out_path, const std::string& title,
                       const std::vector<std::string>& files, const std::string& lead_html) {
  write_file_atomically(out_path, docs.empty() ? render_lead_page(title, lead_html)
                                               : render_html_report(docs, names, title, files, lead_html));
}

}  // namespace feedbench
