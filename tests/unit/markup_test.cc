// Escaping for the markup the reporters write: HTML/XML entities, and Markdown table cells
// (one home for each, used by the page, JUnit, --markdown and diff's Markdown).
#include "reporters/markup.h"

#include <gtest/gtest.h>

#include "feedbench/results/result.h"
#include "reporters/markdown_writer.h"

namespace feedbench {
namespace {

TEST(MarkupTest, EntitiesForHtmlAndXml) {
  EXPECT_EQ(escape_markup("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(escape_markup("plain"), "plain");
}

TEST(MarkupTest, AMarkdownCellKeepsItsRowWhole) {
  EXPECT_EQ(escape_markdown_cell("a|b\nc"), "a\\|b c");
  EXPECT_EQ(escape_markdown_cell("plain"), "plain");
}

TEST(MarkupTest, TheMarkdownWriterEscapesItsCells) {
  ResultDocument doc;
  BenchmarkEntry e;
  e.case_name = e.name = e.run_name = "file_read/odd|name";
  e.run_type = "iteration";
  e.params = {{"family", "file_read"}};
  e.counters = {{"bytes_per_second", 1e6}};
  doc.benchmarks.push_back(e);
  const std::string md = format_markdown(doc);
  EXPECT_NE(md.find("| `file_read/odd\\|name` |"), std::string::npos) << md;
}

}  // namespace
}  // namespace feedbench
