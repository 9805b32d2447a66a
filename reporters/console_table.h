// What `feedbench run` prints while it runs, by default: one line per case, grouped by the
// config's family entries, each group under a header that states once the parameters its
// cases share. A case's line holds its short label (only the parameters that vary within its
// group: "seq 1MiB w2 cold cache"), the median of its primary figure over the achieved
// repetitions and their spread, two or three counters of its family and a short verdict; what
// does not fit (a skip's reason, excluded repetitions, a round's note) follows on indented
// lines. Everything fits kConsoleWidth columns. The figures are case_view.h's fold.
// Google Benchmark's own table stays available (`--display gbench`, --benchmark_format).
#pragma once

#include <cstddef>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "case_view.h"
#include "feedbench/plan/plan.h"
#include "feedbench/results/result.h"

namespace feedbench {

// The widest line feedbench prints on its own (a terminal's classic width plus room).
inline constexpr std::size_t kConsoleWidth = 120;

// RETURNS: whether output to a stream may carry colour: only a terminal, and neither NO_COLOR
// (set, any value but "") nor TERM=dumb asks for none. `no_color` and `term` may be null.
bool colour_wanted(bool terminal, const char* no_color, const char* term);

// RETURNS: `text` with every line longer than `width` broken at spaces; a continuation line is
// indented by the line's own leading spaces plus `hanging`. A word longer than a line breaks
// after a '/' (a path, a case name); one without stays whole on a line of its own.
std::string wrap_text(const std::string& text, std::size_t width = kConsoleWidth, std::size_t hanging = 4);

// RETURNS: a verdict as every console prints one: `head` (its short first line: the verdict and its
// deciding figure) after `indent` spaces, then each clause (text.h: clauses) of `details` but those
// `head` already holds, a line each, `indent` + 4 spaces in, every line wrapped to kConsoleWidth.
// With `head` empty (a result file from before verdicts had one), the first clause of `details`
// is the head. Each line ends in '\n'.
std::string verdict_block(const std::string& head, const std::string& details, std::size_t indent);

// RETURNS: the columns `text` takes on a terminal: UTF-8 code points, ANSI colour sequences
// left out.
std::size_t console_columns(const std::string& text);

// RETURNS: `rows` (the first the titles) as aligned columns of text, each line `indent` spaces in,
// columns two spaces apart, each ending in '\n'; "" for no rows.
std::string text_table(const std::vector<std::vector<std::string>>& rows, std::size_t indent);

// How the cases of a plan are shown.
struct CaseLabels {
  struct Group {
    std::string family;  // "file_read"
    std::string at;      // the config's family entry: "/families/1"
    std::string header;  // "file_read /families/1: sequential, psync, qd 1; 3 repetitions (30 cases)"
    std::vector<std::string> varying;  // parameter keys whose values differ within the group
    std::size_t label_width = 0;       // the longest label of the group
  };
  struct Label {
    std::size_t group = 0;
    std::string label;  // only what varies within the group: "seq 1MiB w2 cold cache"
    std::string brief;  // the family and what varies within it, for progress lines:
                        // "file_read seq 1MiB psync w2 cold cache" (all of it for its only case)
  };
  std::vector<Group> groups;
  std::map<std::string, Label> by_name;  // by canonical case name

  // RETURNS: the label of `name`, or null for a case not in the plan.
  const Label* find(const std::string& name) const;
};

// RETURNS: the labels and group headers of the plan's cases. Cases group by the family entry
// of the config they came from (Case::group), else by family. A group whose cases differ in
// nothing (one case) shows its varying parameters as none and its label as "(one case)".
CaseLabels label_cases(const std::vector<Case>& cases);

// RETURNS: the short text of one parameter value in a label: "seq", "1MiB", "qd8", "w2",
// "cold", "cache", "b8", "acc4", "2 epochs"; the case name's "key:value" for others.
std::string label_part(const std::string& family, const NamePart& part, const nlohmann::json& value);

// RETURNS: the column titles line of a group of `family` ("" before the first).
std::string column_titles(const std::string& family, std::size_t label_width);

// RETURNS: the lines of one case (the first is its figures; the rest, indented, say what the
// figures leave out), each ending in '\n', each at most kConsoleWidth columns of text. With
// `colour`, the verdict is green, yellow or red (ANSI), which the width does not count. Notes
// equal to `notes_above` (the case printed just before) print as one "(the same as above)".
std::string format_case_lines(const CaseView& c, const std::string& label, std::size_t label_width,
                              bool colour, const std::vector<std::string>& notes_above = {});

// Prints the cases of a run as they are reported: a blank line and a group's header when the
// group changes,
// then each case's lines. Cases not in the labels (none, in a run) print under their name.
class CaseTable {
 public:
  // `out` and `labels` must outlive the table.
  CaseTable(std::ostream& out, const CaseLabels& labels, bool colour);

  // Prints one case from the entries Google Benchmark reported for it (its repetitions, or its
  // aggregates where none): folded by case_view.h.
  void add(const std::vector<BenchmarkEntry>& entries);

 private:
  std::ostream& out_;
  const CaseLabels& labels_;
  const bool colour_;
  std::size_t shown_group_ = SIZE_MAX;
  std::vector<std::string> notes_above_;  // of the case printed last, in this group
};

}  // namespace feedbench
