// The HTML report (issue 8). The static parts (verdict, environment, paths, data set, config,
// command line, tables) are rendered here, so the page reads without JavaScript and prints;
// the charts are drawn in the page by Chart.js from the data embedded as JSON.
#include "html_report.h"

#include "case_view.h"
#include "markup.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "feedbench/chartjs.h"
#include "feedbench/error.h"

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

std::string text_at(const json& j, std::initializer_list<const char*> keys) {
  return text_of(at(j, keys));
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// 3 significant digits, no exponent for ordinary magnitudes.
std::string sig3(double v) {
  double a = std::fabs(v);
  if (a >= 100) return fmt("%.0f", v);
  if (a >= 10) return fmt("%.1f", v);
  if (a >= 1) return fmt("%.2f", v);
  return fmt("%.3g", v);
}

std::string human_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt("%.0f B", bytes) : sig3(bytes) + " " + units[u];
}

std::string human_rate(double bytes_per_second) { return human_bytes(bytes_per_second) + "/s"; }

// One counter as a person reads it; the unit is in the column header.
std::string format_counter(const std::string& key, double v) {
  if (key == "bytes_per_second") return fmt("%.1f", v / (1024.0 * 1024.0));
  if (key == "residency_before" || key == "cpu_util" || key == "au" || key == "stall_fraction")
    return fmt("%.1f", v * 100);
  return sig3(v);
}

std::string counter_header(const std::string& key) {
  if (key == "bytes_per_second") return "MiB/s";
  if (key == "items_per_second") return "reads/s";
  if (key == "files_per_second") return "files/s";
  if (key == "samples_per_second") return "samples/s";
  if (key == "residency_before") return "resident before %";
  if (key == "cpu_util") return "CPU %";
  if (key == "au") return "AU %";
  if (key == "stall_fraction") return "stall %";
  if (key == "epoch_s") return "epoch s";
  auto ends = [&](const std::string& suffix) {
    return key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends("_us")) return key.substr(0, key.size() - 3) + " µs";
  if (ends("_ms")) return key.substr(0, key.size() - 3) + " ms";
  return key;
}

// Counters in the order a reader scans them; the rest follow alphabetically.
int counter_rank(const std::string& key) {
  static const char* order[] = {"bytes_per_second", "samples_per_second", "au", "stall_fraction",
                                "items_per_second", "files_per_second", "lat_p50_us", "lat_p90_us",
                                "lat_p99_us", "lat_p999_us", "lat_max_us", "wait_p50_ms",
                                "wait_p90_ms", "wait_p99_ms", "wait_max_ms", "epoch_s", "steps",
                                "residency_before", "cpu_util"};
  for (int i = 0; i < static_cast<int>(std::size(order)); ++i)
    if (key == order[i]) return i;
  return 1000;
}

std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-_./=:,+@%") == std::string::npos)
    return arg;
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
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
  bool cache_achieved = true;
  for (const ExcludedRepetition& x : c.excluded)
    if (x.cache.is_object() && x.cache.value("achieved", true) == false) cache_achieved = false;
  j["cache"] = {{"requested", c.requested_state},
                {"residency_before", c.residency},
                {"achieved", cache_achieved}};
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

// ---------------------------------------------------------------- verdicts

std::string path_of(const CaseView& c) {
  std::string p = c.param("path");
  return p.empty() ? "the" : p;
}

std::vector<std::string> paths_in_order(const std::vector<const CaseView*>& cases) {
  std::vector<std::string> paths;
  for (const auto* c : cases)
    if (std::find(paths.begin(), paths.end(), path_of(*c)) == paths.end()) paths.push_back(path_of(*c));
  return paths;
}

std::string capitalised(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::vector<std::string> verdicts_of(const std::vector<CaseView>& cases) {
  std::vector<const CaseView*> loader, reads;
  for (const auto& c : cases) {
    // Only achieved repetitions count, and a calibration case measures no storage.
    if (!c.measured() || c.calibration) continue;
    if (c.family == "loader") {
      if (c.counter("au")) loader.push_back(&c);
    } else if (c.counter("bytes_per_second")) {
      reads.push_back(&c);
    }
  }
  std::vector<std::string> out;
  if (!loader.empty()) {
    std::set<double> accelerators;
    for (const auto* c : loader)
      if (const json* a = at(c->params, {"accelerators"}); a && a->is_number()) accelerators.insert(a->get<double>());
    double target = loader.front()->target_au();
    std::string target_text = "AU ≥ " + fmt("%.0f", target * 100) + "%";
    if (accelerators.size() > 1) {
      // The largest K at which some configuration keeps every trainer at the target.
      std::string sentence;
      bool first = true;
      for (const auto& path : paths_in_order(loader)) {
        double best = 0;
        for (const auto* c : loader) {
          const json* a = at(c->params, {"accelerators"});
          if (path_of(*c) == path && a && a->is_number() && c->worst_au().value_or(0) >= c->target_au())
            best = std::max(best, a->get<double>());
        }
        std::string n = best > 0 ? fmt("%.0f", best) : "none";
        if (first) {
          sentence = path + " path keeps " + n + (best == 1 ? " simulated accelerator" : " simulated accelerators") +
                     " at " + target_text;
          first = false;
        } else {
          sentence += "; " + path + " path keeps " + n;
        }
      }
      out.push_back(capitalised(sentence) + ".");
    } else {
      for (const auto& path : paths_in_order(loader)) {
        const CaseView* best = nullptr;
        for (const auto* c : loader)
          if (path_of(*c) == path && (!best || *c->counter("au") > *best->counter("au"))) best = c;
        double au = *best->counter("au");
        std::string verdict = text_at(best->extra, {"verdict"});
        if (verdict.empty())
          verdict = "AU " + fmt("%.1f", au * 100) + "% — " +
                    (au >= best->target_au() ? "meets the " : "below the ") +
                    fmt("%.0f", best->target_au() * 100) + "% target";
        std::string w = best->param("workers");
        std::string where = w.empty() ? "" : " with " + w + (w == "1" ? " worker" : " workers");
        out.push_back(capitalised(path) + " path, best loader case" + where + ": " + verdict + ".");
      }
    }
  }
  if (!reads.empty()) {
    for (const auto& path : paths_in_order(reads)) {
      std::vector<std::string> parts;
      for (const char* state : {"cold", "warm", "direct"}) {
        const CaseView* best = nullptr;
        for (const auto* c : reads)
          if (path_of(*c) == path && c->requested_state == state &&
              (!best || *c->counter("bytes_per_second") > *best->counter("bytes_per_second")))
            best = c;
        if (!best) continue;
        std::string part = human_rate(*best->counter("bytes_per_second")) + " " + state;
        std::string w = best->param("workers");
        if (!w.empty()) part += " (" + w + (w == "1" ? " worker, " : " workers, ") + best->param("pattern") + ")";
        parts.push_back(part);
      }
      if (parts.empty()) continue;
      std::string sentence = capitalised(path) + " path reads at best ";
      for (std::size_t i = 0; i < parts.size(); ++i)
        sentence += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
      out.push_back(sentence + ".");
    }
  }
  if (out.empty()) out.push_back("No case completed, so there is nothing to judge: see the errors below.");
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
  for (const auto& c : cells) r += code ? "<td><code>" + escape_html(c) + "</code></td>" : "<td>" + escape_html(c) + "</td>";
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

void render_environment(Page& p, const std::vector<ResultDocument>& docs, const std::vector<std::string>& names) {
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
    return m && m->is_number() ? human_bytes(m->get<double>()) : text_of(m);
  });
  host_row("GPU", [](const ResultDocument& d) {
    const json* g = at(d.environment, {"host", "gpus"});
    if (!g || !g->is_array() || g->empty()) return std::string("none detected");
    std::map<std::string, int> count;
    std::vector<std::string> order;
    for (const auto& gpu : *g) {
      std::string s = text_at(gpu, {"name"});
      std::string mem = text_at(gpu, {"memory"}), drv = text_at(gpu, {"driver"});
      if (!mem.empty()) s += " " + mem;
      if (!drv.empty()) s += ", driver " + drv;
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
    std::string s = text_at(d.tool, {"version"});
    std::string commit = text_at(d.tool, {"git_commit"});
    if (!commit.empty()) s += " (" + commit.substr(0, 12) + (text_at(d.tool, {"git_dirty"}) == "yes" ? ", modified tree" : "") + ")";
    std::string gb = text_at(d.tool, {"benchmark_version"});
    if (!gb.empty()) s += ", Google Benchmark " + gb;
    return s;
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

void render_paths_and_data(Page& p, const std::vector<ResultDocument>& docs, const std::vector<std::string>& names) {
  p << "<section id=\"paths\"><h2>Paths and data set</h2>\n";
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const ResultDocument& d = docs[i];
    if (docs.size() > 1) p << "<h3>" << escape_html(names[i]) << "</h3>\n";
    const json* paths = at(d.environment, {"paths"});
    std::string warning = same_device_warning(paths);
    if (!warning.empty()) p << "<p class=\"warning\" role=\"alert\"><strong>Same device.</strong> " << escape_html(warning) << "</p>\n";
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
    role_row("Path", [](const json& info, const json& data) {
      std::string s = text_at(info, {"resolved"});
      return s.empty() ? text_at(data, {"root"}) : s;
    }, true);
    role_row("File system", [](const json& info, const json&) { return text_at(info, {"fs_type"}); });
    role_row("Mount", [](const json& info, const json&) {
      std::string m = text_at(info, {"mount_point"}), src = text_at(info, {"mount_source"});
      return src.empty() ? m : m + " from " + src;
    }, true);
    role_row("Device", [](const json& info, const json&) {
      std::string s = text_at(info, {"device"});
      if (s.empty() && !text_at(info, {"fs_type"}).empty()) s = "no local block device";
      std::string model = text_at(info, {"device_info", "model"});
      if (!model.empty()) s += (s.empty() ? "" : ", ") + model;
      const json* rot = at(info, {"device_info", "rotational"});
      if (rot && (rot->is_boolean() || rot->is_number()))
        s += (rot->is_boolean() ? rot->get<bool>() : rot->get<double>() != 0) ? ", rotational" : ", non-rotational";
      std::string ra = text_at(info, {"device_info", "read_ahead_kb"});
      if (!ra.empty()) s += ", read-ahead " + ra + " KiB";
      std::string sched = text_at(info, {"device_info", "scheduler"});
      if (!sched.empty()) s += ", scheduler " + sched;
      return s;
    });
    role_row("Files", [](const json&, const json& data) { return text_at(data, {"files"}); });
    role_row("Bytes", [](const json&, const json& data) {
      const json* b = at(data, {"bytes"});
      return b && b->is_number() ? human_bytes(b->get<double>()) + " (" + b->dump() + " B)" : text_of(b);
    });
    role_row("Fingerprint", [](const json&, const json& data) { return text_at(data, {"fingerprint"}); }, true);
    role_row("Cache manifest", [](const json&, const json& data) {
      std::string label = text_at(data, {"manifest", "label"});
      std::string ver = text_at(data, {"manifest", "version"});
      return ver.empty() || label.empty() ? label : label + " (manifest " + ver + ")";
    });
    p << "</table></div>\n";
  }
  p << "</section>\n";
}

void render_reproduce(Page& p, const std::vector<ResultDocument>& docs, const std::vector<std::string>& names) {
  p << "<section id=\"reproduce\"><h2>Rerun it</h2>\n";
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const ResultDocument& d = docs[i];
    if (docs.size() > 1) p << "<h3>" << escape_html(names[i]) << "</h3>\n";
    p << "<p>Command line:</p><pre class=\"command\">" << escape_html(command_text(d.command_line)) << "</pre>\n";
    if (!d.environment_variables.empty()) {
      std::string env;
      for (const auto& [k, v] : d.environment_variables) env += k + "=" + shell_quote(v) + "\n";
      p << "<p>With these environment variables set:</p><pre class=\"command\">" << escape_html(env) << "</pre>\n";
    }
    // The config's ${VAR:-default} fallbacks: not the user's settings, so not shown as such.
    if (const json* defaults = at(d.config, {"defaults_used"}); defaults && defaults->is_object() && !defaults->empty()) {
      std::string list;
      for (const auto& [k, v] : defaults->items()) list += k + " unset: the config's default " + shell_quote(text_of(&v)) + " applied\n";
      p << "<p>Defaults the config applied (these variables were <em>not</em> set):</p><pre class=\"defaults\">"
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

void render_case_tables(Page& p, const std::vector<std::vector<CaseView>>& all, const std::vector<std::string>& names) {
  p << "<section id=\"cases\"><h2>Every case</h2>\n<p class=\"muted\">Median of the achieved repetitions "
       "(reps: achieved of all that ran). A round whose page-cache state was not the one asked for "
       "(<em>not cold</em>, <em>not warm</em>) or that read less than planned (<em>short round</em>) is "
       "excluded from every figure on this page, and named in the notes. A calibration case (samples from "
       "memory) measures the harness, not storage, and is in no headline.</p>\n";
  for (std::size_t f = 0; f < all.size(); ++f) {
    std::vector<std::string> families;
    for (const auto& c : all[f])
      if (std::find(families.begin(), families.end(), c.family) == families.end()) families.push_back(c.family);
    for (const auto& family : families) {
      std::vector<const CaseView*> cases;
      for (const auto& c : all[f])
        if (c.family == family) cases.push_back(&c);
      std::vector<std::string> keys;  // params, first-seen order
      std::set<std::string> counters_seen;
      for (const auto* c : cases) {
        for (const auto& [k, v] : c->params.items())
          if (k != "family" && std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
        for (const auto& [k, v] : c->counters) counters_seen.insert(k);
      }
      std::vector<std::string> counters(counters_seen.begin(), counters_seen.end());
      std::stable_sort(counters.begin(), counters.end(),
                       [](const std::string& a, const std::string& b) { return counter_rank(a) < counter_rank(b); });
      p << "<h3>" << escape_html(family) << (all.size() > 1 ? " — " + escape_html(names[f]) : "") << "</h3>\n";
      p << "<div class=\"scroll\"><table class=\"cases\"><thead><tr>";
      for (const auto& k : keys) p << "<th scope=\"col\">" << escape_html(k) << "</th>";
      p << "<th scope=\"col\" class=\"num\">reps</th>";
      for (const auto& k : counters) p << "<th scope=\"col\" class=\"num\">" << escape_html(counter_header(k)) << "</th>";
      p << "<th scope=\"col\">notes</th></tr></thead>\n<tbody>\n";
      for (const auto* c : cases) {
        p << "<tr" << (c->errors.empty() ? "" : " class=\"failed\"") << " title=\"" << escape_html(c->name) << "\">";
        for (const auto& k : keys) {
          const json* v = at(c->params, {k.c_str()});
          bool size = v && v->is_number() && (k == "block_size" || k == "record_size");
          p << "<td>" << escape_html(size ? human_bytes(v->get<double>()) : text_of(v)) << "</td>";
        }
        // The figures are the median of the achieved repetitions, out of all that ran.
        p << "<td class=\"num\">" << c->achieved
          << (c->achieved == c->repetitions() ? "" : " of " + std::to_string(c->repetitions())) << "</td>";
        for (const auto& k : counters) {
          auto v = c->counter(k);
          p << "<td class=\"num\">" << (v ? escape_html(format_counter(k, *v)) : "") << "</td>";
        }
        std::string notes;
        if (c->calibration) notes += "<span class=\"flag\">calibration</span> no storage figure ";
        for (const auto& x : c->excluded) {
          const bool cache_missed = x.cache.is_object() && x.cache.value("achieved", true) == false;
          notes += "<span class=\"flag\">" +
                   escape_html(cache_missed ? "not " + c->requested_state : std::string("short round")) +
                   "</span> repetition " + std::to_string(x.repetition_index) + " excluded: " +
                   escape_html(x.reason) + " ";
        }
        for (const auto& e : c->errors) notes += "<span class=\"error\">" + escape_html(e) + "</span> ";
        std::string verdict = text_at(c->extra, {"verdict"});
        if (!verdict.empty()) notes += escape_html(verdict);
        p << "<td class=\"notes\">" << notes << "</td></tr>\n";
      }
      p << "</tbody></table></div>\n";
    }
  }
  p << "</section>\n";
}

// The figure compared across files: throughput where the family has one.
std::optional<std::pair<std::string, double>> primary_metric(const CaseView& c) {
  for (const char* k : {"samples_per_second", "bytes_per_second", "items_per_second"})
    if (auto v = c.counter(k)) return std::make_pair(std::string(k), *v);
  return std::nullopt;
}

void render_ratio_table(Page& p, const std::vector<std::vector<CaseView>>& all, const std::vector<std::string>& names) {
  if (all.size() < 2) return;
  p << "<section id=\"ratios\"><h2>Ratios between files</h2>\n<p class=\"muted\">Each case's throughput "
       "(MiB/s for reads, samples/s for the loader) in every file, and its ratio to <strong>"
    << escape_html(names[0]) << "</strong>. Above 1: faster than the first file.</p>\n";
  p << "<div class=\"scroll\"><table class=\"cases\"><thead><tr><th scope=\"col\">case</th>";
  for (const auto& n : names) p << "<th scope=\"col\" class=\"num\">" << escape_html(n) << "</th>";
  for (std::size_t f = 1; f < names.size(); ++f)
    p << "<th scope=\"col\" class=\"num\">" << escape_html(names[f]) << " / " << escape_html(names[0]) << "</th>";
  p << "</tr></thead><tbody>\n";
  for (const auto& base : all[0]) {
    auto b = primary_metric(base);
    if (!b) continue;
    std::vector<std::optional<double>> values{b->second};
    bool any = false;
    for (std::size_t f = 1; f < all.size(); ++f) {
      std::optional<double> v;
      for (const auto& c : all[f])
        if (c.name == base.name)
          if (auto m = c.counter(b->first)) v = *m;
      any = any || v.has_value();
      values.push_back(v);
    }
    if (!any) continue;
    p << "<tr><td><code>" << escape_html(base.name) << "</code></td>";
    for (const auto& v : values) p << "<td class=\"num\">" << (v ? escape_html(format_counter(b->first, *v)) : "—") << "</td>";
    for (std::size_t f = 1; f < values.size(); ++f) {
      if (!values[f] || b->second == 0) {
        p << "<td class=\"num\">—</td>";
        continue;
      }
      double r = *values[f] / b->second;
      const char* cls = r >= 1.05 ? "better" : r <= 0.95 ? "worse" : "same";
      p << "<td class=\"num " << cls << "\">" << fmt("%.2f", r) << "×</td>";
    }
    p << "</tr>\n";
  }
  p << "</tbody></table></div></section>\n";
}

const char* kStyle = R"css(
:root { --ink:#1d2330; --muted:#5b6472; --line:#d9dee6; --bg:#fbfcfd; --accent:#1f5fae; --warn:#8a5a00; --warnbg:#fff6df; --bad:#b3261e; --good:#1b7a3a; }
* { box-sizing: border-box; }
html { font-size: 16px; }
body { margin: 0; color: var(--ink); background: var(--bg); font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 1.5rem 2rem 4rem; }
h1 { font-size: 1.75rem; line-height: 1.25; margin: 0 0 .25rem; }
h2 { font-size: 1.3rem; margin: 2.25rem 0 .75rem; padding-bottom: .3rem; border-bottom: 2px solid var(--line); }
h3 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .88em; }
pre { background: #f1f3f6; border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
pre.json { max-height: 32rem; overflow: auto; white-space: pre; word-break: normal; }
.subtitle, .muted { color: var(--muted); }
.verdict { background: #eef4fc; border-left: 5px solid var(--accent); border-radius: 6px; padding: .8rem 1.1rem; margin: 1rem 0; }
.verdict h3 { margin: .2rem 0 .3rem; font-size: .95rem; color: var(--muted); }
.verdict ul { margin: 0; padding-left: 1.2rem; }
.verdict li { font-size: 1.12rem; font-weight: 600; margin: .2rem 0; }
.warning { background: var(--warnbg); border-left: 5px solid #e0a100; color: var(--warn); padding: .6rem .9rem; border-radius: 6px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .9rem; margin: .25rem 0 1rem; }
th, td { padding: .3rem .6rem; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
thead th { background: #eef1f5; position: sticky; top: 0; white-space: nowrap; }
table.facts code { word-break: break-all; }
table.facts th[scope=row] { color: var(--muted); font-weight: 600; white-space: nowrap; }
table.cases tbody tr:nth-child(even) { background: #f6f8fa; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.notes { min-width: 14rem; }
tr.failed td { color: var(--bad); }
.flag { display: inline-block; background: var(--warnbg); color: var(--warn); border: 1px solid #e0a100; border-radius: 4px; padding: 0 .35rem; font-size: .8rem; font-weight: 600; }
.error { color: var(--bad); }
.better { color: var(--good); font-weight: 600; }
.worse { color: var(--bad); font-weight: 600; }
details { margin: .5rem 0; }
summary { cursor: pointer; color: var(--accent); }
nav.toc { font-size: .92rem; color: var(--muted); }
nav.toc a { color: var(--accent); text-decoration: none; margin-right: 1rem; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 1.25rem; }
figure { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: .75rem .9rem .5rem; break-inside: avoid; }
figure .box { position: relative; height: 380px; }
figcaption { color: var(--muted); font-size: .85rem; margin-top: .4rem; }
footer { margin-top: 3rem; color: var(--muted); font-size: .85rem; }
@media (max-width: 700px) { main { padding: 1rem; } .charts { grid-template-columns: 1fr; } }
@media print {
  body { background: #fff; font-size: 11pt; }
  main { max-width: none; padding: 0; }
  .charts { display: block; }
  figure { margin-bottom: 1rem; page-break-inside: avoid; }
  figure .box { height: 300px; }
  h2 { page-break-after: avoid; }
  thead th { position: static; }
  nav.toc { display: none; }
  .scroll { overflow: visible; }
}
)css";

// Draws every chart from the embedded data, then records on <html data-report-status> either
// "ok N charts" (each canvas checked for drawn pixels) or "error: ..." (read by the tests).
const char* kScript = R"js(
(function () {
  'use strict';
  const root = document.documentElement;
  const fail = (msg) => { root.dataset.reportStatus = 'error: ' + msg; };
  window.addEventListener('error', (e) => fail(e.message || 'script error'));
  if (typeof Chart === 'undefined') { fail('Chart.js did not load'); return; }
  const D = JSON.parse(document.getElementById('feedbench-data').textContent);
  const multi = D.files.length > 1;
  Chart.defaults.animation = false;
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.font.size = 13;
  Chart.defaults.color = '#2d3440';
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.plugins.legend.labels.usePointStyle = true;
  Chart.defaults.plugins.legend.labels.boxWidth = 9;
  Chart.defaults.plugins.legend.labels.boxHeight = 9;
  Chart.defaults.plugins.title.font = { size: 15, weight: '600' };
  // Lines: one colour per path (and file). Bars: one colour per page-cache state, so the two
  // encodings never share a colour.
  const palette = ['#0f7b6c', '#7b4fb6', '#e08a00', '#c2399b', '#00a3b4', '#8c6239', '#5b6472', '#9bb31a', '#3d5a80', '#b5651d'];
  const stateColours = { cold: '#2c6fbb', warm: '#d1495b', direct: '#7a828f' };
  const alpha = (hex, a) => hex + Math.round(a * 255).toString(16).padStart(2, '0');
  const dashes = { cold: [], warm: [7, 4], direct: [2, 3] };
  const points = { cold: 'circle', warm: 'rectRot', direct: 'triangle' };
  const charts = [];

  const section = (id, title, intro) => {
    const s = document.createElement('section');
    s.id = id;
    s.innerHTML = '<h2></h2>' + (intro ? '<p class="muted"></p>' : '') + '<div class="charts"></div>';
    s.querySelector('h2').textContent = title;
    if (intro) s.querySelector('p').textContent = intro;
    document.getElementById('charts').appendChild(s);
    return s.querySelector('.charts');
  };
  const figure = (into, caption) => {
    const f = document.createElement('figure');
    f.innerHTML = '<div class="box"><canvas role="img"></canvas></div><figcaption></figcaption>';
    f.querySelector('figcaption').textContent = caption || '';
    into.appendChild(f);
    const canvas = f.querySelector('canvas');
    canvas.setAttribute('aria-label', caption || '');
    return canvas;
  };
  // The series names stay on the canvas (data-series) so a test can read them from the DOM.
  const draw = (canvas, config) => {
    canvas.dataset.series = config.data.datasets.map((d) => d.label).join(' | ');
    charts.push(new Chart(canvas, config));
  };

  // Every successful case of a family, with its file.
  const casesOf = (family) => {
    const out = [];
    D.files.forEach((f, fi) => f.cases.forEach((c) => {
      if (c.family === family && Object.keys(c.counters).length) out.push({ file: fi, c });
    }));
    return out;
  };
  const p = (x, k) => (x.c.params[k] === undefined ? '' : String(x.c.params[k]));
  const state = (x) => x.c.cache.requested || p(x, 'cache_state');
  // Parameters that differ between cases of a list (beyond those excluded) name the series.
  const varying = (list, exclude) => {
    const keys = new Set();
    list.forEach((x) => Object.keys(x.c.params).forEach((k) => keys.add(k)));
    return [...keys].filter((k) => !exclude.includes(k) && new Set(list.map((x) => p(x, k))).size > 1);
  };
  const short = { cache_state: '', path: '', block_size: 'bs ', queue_depth: 'qd ', engine: '', batch_size: 'batch ', accelerators: 'acc ', workers: 'w ' };
  const seriesName = (x, keys) => {
    const parts = [];
    if (multi) parts.push(D.files[x.file].name);
    keys.forEach((k) => parts.push((k in short ? short[k] : k + ' ') + p(x, k)));
    return parts.join(' · ') || 'all';
  };
  const groupBy = (list, keyOf) => {
    const m = new Map();
    list.forEach((x) => { const k = keyOf(x); if (!m.has(k)) m.set(k, []); m.get(k).push(x); });
    return m;
  };
  const mib = (b) => b / 1048576;
  // Colour says which path (and file), line style and point shape which page-cache state.
  const styleFor = (i, st) => ({
    borderColor: palette[i % palette.length], backgroundColor: palette[i % palette.length],
    borderDash: dashes[st] || [], pointStyle: points[st] || 'circle', pointRadius: 4, borderWidth: 2, clip: 6,
  });
  const colourIndex = () => { const m = new Map(); return (key) => { if (!m.has(key)) m.set(key, m.size); return m.get(key); }; };
  // A log axis where values span more than 30x (warm rounds dwarf cold ones on a linear one).
  const spanScale = (values, title) => {
    const v = values.filter((x) => x > 0);
    return v.length && Math.max(...v) / Math.min(...v) > 30
      ? { type: 'logarithmic', beginAtZero: false, ticks: logTicks, title: { display: true, text: title.replace(')', ', log scale)'), font: { weight: '600' } } }
      : {};
  };
  const axis = (title, extra) => Object.assign({ title: { display: true, text: title, font: { weight: '600' } }, grid: { color: '#e6e9ee' } }, extra || {});
  // Log axes: decades only when the axis spans more than 2.5 of them, else 1-2-5; 1k, 10k...
  const logTicks = { maxRotation: 0, autoSkip: false, callback: (v, i, ticks) => {
    const span = Math.log10(ticks[ticks.length - 1].value / ticks[0].value);
    const m = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
    if (![1, 2, 5].slice(0, span > 2.5 ? 1 : 3).some((k) => Math.abs(m - k) < 1e-6)) return '';
    return v >= 1e6 ? v / 1e6 + 'M' : v >= 1e3 ? v / 1e3 + 'k' : String(Number(v.toPrecision(3)));
  } };

  // Lines of a y counter against a numeric x parameter, one per series.
  const lineChart = (canvas, list, xKey, yOf, title, xTitle, yTitle, extraDatasets, yScale) => {
    const keys = varying(list, ['family', xKey, 'pattern']);
    const groups = groupBy(list, (x) => seriesName(x, keys));
    const colour = colourIndex();
    const datasets = [];
    [...groups.entries()].forEach(([name, xs]) => {
      const pts = xs.map((x) => ({ x: Number(x.c.params[xKey]), y: yOf(x) })).filter((q) => isFinite(q.x) && isFinite(q.y));
      pts.sort((a, b) => a.x - b.x);
      const i = colour(seriesName(xs[0], keys.filter((k) => k !== 'cache_state')));
      datasets.push(Object.assign({ label: name, data: pts }, styleFor(i, state(xs[0]))));
    });
    const xs = new Set(list.map((x) => Number(x.c.params[xKey])));
    draw(canvas, {
      type: 'line',
      data: { datasets: datasets.concat(extraDatasets || []) },
      options: {
        parsing: true,
        plugins: { title: { display: true, text: title }, legend: { position: 'bottom' },
                   tooltip: { callbacks: { label: (c) => c.dataset.label + ': ' + Number(c.parsed.y).toFixed(1) + ' at ' + xTitle.split(' (')[0].toLowerCase() + ' ' + c.parsed.x } } },
        scales: {
          x: axis(xTitle, { type: 'linear', ticks: { precision: 0 }, afterBuildTicks: (s) => { if (xs.size && xs.size < 12) s.ticks = [...xs].sort((a, b) => a - b).map((v) => ({ value: v })); } }),
          y: axis(yTitle, Object.assign({ beginAtZero: true }, yScale === 'span' ? spanScale(list.map(yOf), yTitle) : yScale || {})),
        },
      },
    });
  };

  // ---- reads: throughput vs workers, per pattern
  const reads = casesOf('file_read').filter((x) => x.c.counters.bytes_per_second !== undefined);
  if (reads.length) {
    const into = section('throughput', 'Read throughput', 'Median of the achieved repetitions. One line per path and page-cache state' + (multi ? ' and result file' : '') + '; solid = cold, dashed = warm, dotted = direct (O_DIRECT).');
    groupBy(reads, (x) => p(x, 'pattern') || 'reads').forEach((list, pattern) => {
      const c = figure(into, 'Throughput of ' + pattern + ' reads as workers are added. A line that flattens early means the device (or the CPU), not the worker count, limits reads.');
      lineChart(c, list, 'workers', (x) => mib(x.c.counters.bytes_per_second), 'Throughput vs workers — ' + pattern, 'Workers (threads)', 'Throughput (MiB/s)', [], 'span');
    });

    // Cold vs warm, source vs cache: best case of each.
    const states = ['cold', 'warm', 'direct'].filter((s) => reads.some((x) => state(x) === s));
    const cats = [];
    reads.forEach((x) => { const k = (p(x, 'pattern') ? p(x, 'pattern') + ' · ' : '') + (p(x, 'path') || 'path'); if (!cats.includes(k)) cats.push(k); });
    const datasets = [];
    D.files.forEach((f, fi) => states.forEach((s) => {
      const data = cats.map((cat) => {
        let best = null;
        reads.forEach((x) => {
          const k = (p(x, 'pattern') ? p(x, 'pattern') + ' · ' : '') + (p(x, 'path') || 'path');
          if (x.file === fi && state(x) === s && k === cat) best = Math.max(best === null ? 0 : best, mib(x.c.counters.bytes_per_second));
        });
        return best;
      });
      if (data.every((v) => v === null)) return;
      const colour = stateColours[s] || palette[datasets.length % palette.length];
      datasets.push({ label: (multi ? f.name + ' · ' : '') + s, data, backgroundColor: alpha(colour, [1, 0.5, 0.25][fi % 3]), borderColor: colour, borderWidth: 1.5 });
    }));
    const c = figure(into, 'Best throughput of each pattern and path (over the worker counts and other parameters), by page-cache state. Warm far above cold: the page cache, not the device, served the second round.');
    draw(c, {
      type: 'bar',
      data: { labels: cats.map((c) => c.split(' · ')), datasets },
      options: {
        plugins: { title: { display: true, text: 'Cold vs warm, source vs cache (best case)' }, legend: { position: 'bottom' } },
        scales: { x: axis('Pattern · path', { ticks: { maxRotation: 0, autoSkip: false } }),
                  y: axis('Throughput (MiB/s)', Object.assign({ beginAtZero: true }, spanScale([].concat(...datasets.map((d) => d.data)), 'Throughput (MiB/s)'))) },
      },
    });

    // Latency CDF per pattern, at the smallest worker count (the device's own latency).
    const withLat = reads.filter((x) => x.c.latency && x.c.latency.cdf.length);
    if (withLat.length) {
      const lat = section('latency', 'Read latency', 'Cumulative distribution of per-read latency from the recorded histograms (within 1%). Further left is faster; a long flat tail at the top means rare slow reads.');
      groupBy(withLat, (x) => p(x, 'pattern') || 'reads').forEach((list, pattern) => {
        const w = Math.min(...list.map((x) => Number(x.c.params.workers)).filter(isFinite));
        const sel = isFinite(w) ? list.filter((x) => Number(x.c.params.workers) === w) : list;
        const keys = varying(sel, ['family', 'pattern', 'workers']);
        const colour = colourIndex();
        const datasets = sel.map((x) => Object.assign({ label: seriesName(x, keys), data: x.c.latency.cdf.map((q) => ({ x: q[0], y: q[1] * 100 })), stepped: false, tension: 0 },
                                                     styleFor(colour(seriesName(x, keys.filter((k) => k !== 'cache_state'))), state(x)), { pointRadius: 0 }));
        const c = figure(lat, 'Latency CDF of ' + pattern + ' reads' + (isFinite(w) ? ' at ' + w + (w === 1 ? ' worker' : ' workers') : '') + ', per path and page-cache state.');
        draw(c, {
          type: 'line',
          data: { datasets },
          options: {
            plugins: { title: { display: true, text: 'Read latency CDF — ' + pattern + (isFinite(w) ? ', ' + w + ' worker' + (w === 1 ? '' : 's') : '') }, legend: { position: 'bottom' },
                       tooltip: { callbacks: { label: (c) => c.dataset.label + ': ' + c.parsed.y.toFixed(1) + '% ≤ ' + Number(c.parsed.x).toPrecision(3) + ' µs' } } },
            scales: { x: axis('Read latency (µs, log scale)', { type: 'logarithmic', ticks: logTicks }), y: axis('Reads completed (%)', { min: 0, max: 100 }) },
          },
        });
      });
    }
  }

  // ---- loader: AU vs workers (and vs accelerators when swept), with the target line.
  const loader = casesOf('loader').filter((x) => x.c.counters.au !== undefined && !x.c.calibration);  // calibration: no storage
  if (loader.length) {
    const into = section('loader', 'Simulated training loop', 'Accelerator utilisation (AU): the share of each training step the simulated accelerator computes rather than waits for data. The dashed grey line is the target.');
    const target = 100 * (Number(loader[0].c.params.target_au) || Number(loader[0].c.extra.target_au) || 0.9);
    const targetLine = (list, key) => {
      const xs = list.map((x) => Number(x.c.params[key])).filter(isFinite);
      return [{ label: 'target ' + target.toFixed(0) + '%', data: [{ x: Math.min(...xs), y: target }, { x: Math.max(...xs), y: target }],
                borderColor: '#7a828f', borderDash: [6, 4], borderWidth: 1.5, pointRadius: 0, backgroundColor: '#7a828f' }];
    };
    const auScale = { min: 0, max: 100 };
    if (new Set(loader.map((x) => p(x, 'workers'))).size > 0) {
      const c = figure(into, 'AU as loader workers are added. The first point at or above the target is the smallest worker count that keeps the accelerator fed.');
      lineChart(c, loader, 'workers', (x) => 100 * x.c.counters.au, 'AU vs loader workers', 'Loader workers (threads per trainer)', 'Accelerator utilisation (%)', targetLine(loader, 'workers'), auScale);
    }
    if (new Set(loader.map((x) => p(x, 'accelerators'))).size > 1) {
      const c = figure(into, 'AU as simulated accelerators (trainers, each with its own workers) share the storage. The last point above the target is how many accelerators this storage feeds.');
      lineChart(c, loader, 'accelerators', (x) => 100 * x.c.counters.au, 'AU vs simulated accelerators', 'Simulated accelerators', 'Accelerator utilisation (%)', targetLine(loader, 'accelerators'), auScale);
    }
  }

  // Chart.js does not follow the page into print layout by itself.
  window.addEventListener('beforeprint', () => charts.forEach((ch) => ch.resize()));
  window.addEventListener('afterprint', () => charts.forEach((ch) => ch.resize()));
  if (!charts.length) {
    document.getElementById('charts').innerHTML = '<p class="muted">No successful case to chart: see the tables below.</p>';
  }
  // Each canvas must hold drawn pixels.
  let drawn = 0;
  charts.forEach((ch) => {
    const cv = ch.canvas;
    const px = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
    for (let i = 3; i < px.length; i += 4) if (px[i]) { drawn++; break; }
  });
  if (root.dataset.reportStatus) return;  // an error was already recorded
  root.dataset.reportStatus = drawn === charts.length ? 'ok ' + drawn + ' charts' : 'error: ' + (charts.length - drawn) + ' of ' + charts.length + ' charts empty';
})();
)js";

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

nlohmann::json html_report_data(const std::vector<ResultDocument>& docs, const std::vector<std::string>& names) {
  FB_CHECK(docs.size() == names.size(), "one name per result document");
  json files = json::array();
  for (std::size_t i = 0; i < docs.size(); ++i) {
    json cases = json::array();
    for (const auto& c : fold_cases(docs[i])) cases.push_back(case_json(c));
    files.push_back({{"name", names[i]}, {"config", text_at(docs[i].config, {"name"})}, {"cases", cases}});
  }
  return {{"files", files}};
}

std::vector<std::string> html_report_verdicts(const ResultDocument& doc) { return verdicts_of(fold_cases(doc)); }

std::string render_html_report(const std::vector<ResultDocument>& docs, const std::vector<std::string>& names,
                               const std::string& title_in) {
  FB_CHECK(!docs.empty() && docs.size() == names.size(), "one name per result document, at least one");
  std::string title = title_in.empty() ? default_title(docs, names) : title_in;
  std::vector<std::vector<CaseView>> all;
  for (const auto& d : docs) all.push_back(fold_cases(d));

  Page p;
  p << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
       "<meta name=\"generator\" content=\"feedbench report\">\n<title>"
    << escape_html(title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<main>\n";
  p << "<header><h1>" << escape_html(title) << "</h1>\n<p class=\"subtitle\">";
  for (std::size_t i = 0; i < docs.size(); ++i) {
    std::string date = text_at(docs[i].context, {"date"});
    std::string host = text_at(docs[i].environment, {"host", "instance_type"});
    if (host.empty()) host = text_at(docs[i].environment, {"host", "hostname"});
    // The data version the cache holds: a run on another version is not the same experiment.
    std::string label = text_at(docs[i].dataset, {"cache", "manifest", "label"});
    p << (i ? "<br>" : "") << "<code>" << escape_html(names[i]) << "</code>"
      << escape_html((host.empty() ? "" : " — " + host) + (date.empty() ? "" : ", " + date) +
                     (label.empty() ? "" : ", cache label " + label));
  }
  p << "</p>\n";
  for (std::size_t i = 0; i < docs.size(); ++i) {
    p << "<div class=\"verdict\">";
    if (docs.size() > 1) p << "<h3>" << escape_html(names[i]) << "</h3>";
    p << "<ul>";
    for (const auto& v : verdicts_of(all[i])) p << "<li>" << escape_html(v) << "</li>";
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
    << (docs.size() > 1 ? "<a href=\"#ratios\">Ratios</a>" : "") << "<a href=\"#cases\">Every case</a></nav>\n</header>\n";
  render_environment(p, docs, names);
  render_paths_and_data(p, docs, names);
  render_reproduce(p, docs, names);
  p << "<div id=\"charts\"><noscript><p class=\"muted\">The charts need JavaScript; the tables below hold every "
       "number.</p></noscript></div>\n";
  render_ratio_table(p, all, names);
  render_case_tables(p, all, names);
  p << "<footer>Written by <code>feedbench report</code>. Charts drawn by Chart.js (MIT licence), inlined: this "
       "page makes no network request.</footer>\n</main>\n";
  p << "<script id=\"feedbench-data\" type=\"application/json\">" << script_safe_json(html_report_data(docs, names))
    << "</script>\n";
  p << "<script>" << script_safe_js(embedded::kChartJs) << "</script>\n";
  p << "<script>" << kScript << "</script>\n</body>\n</html>\n";
  return p.html.str();
}

void write_html_report(const std::vector<ResultDocument>& docs, const std::vector<std::string>& names,
                       const std::string& out_path, const std::string& title) {
  write_file_atomically(out_path, render_html_report(docs, names, title));
}

}  // namespace feedbench
