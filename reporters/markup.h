// Escaping text for the markup the reporters write: HTML and XML pages (the report, JUnit
// output), one function for both since the five entities below mean the same in each; and
// Markdown tables (a run's --markdown, diff's markdown format).
#pragma once

#include <string>

namespace feedbench {

// RETURNS: `text` with & < > " ' written as entities, safe in element text and quoted attributes.
inline std::string escape_markup(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// RETURNS: `text` safe in one cell of a Markdown table: '|' escaped (it would end the cell),
// line breaks as spaces (they would end the row).
inline std::string escape_markdown_cell(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

}  // namespace feedbench
