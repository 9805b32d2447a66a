// Escaping text for HTML and XML pages (the report, JUnit output): one function for both, since
// the five entities below mean the same in each.
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

}  // namespace feedbench
