// printable(): what a file name, a trace or a job chose reaches a terminal escaped, never as
// control sequences; printable UTF-8 reads as it was written.
#include "feedbench/base/text.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace feedbench {
namespace {

std::string hex_escape(unsigned c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return buf;
}

TEST(PrintableTest, EveryByteAloneIsKeptWhenPrintableAsciiElseEscaped) {
  for (unsigned c = 0; c <= 0xff; ++c) {
    const std::string one(1, char(c));
    const std::string shown = printable(one);
    if (c >= 0x20 && c < 0x7f) EXPECT_EQ(shown, one) << c;
    else EXPECT_EQ(shown, hex_escape(c)) << c;                     // controls, DEL, and no lone byte is UTF-8
    for (char s : shown) EXPECT_TRUE(s >= 0x20 && s < 0x7f) << c;  // nothing a terminal acts on
  }
}

TEST(PrintableTest, TerminalSequencesInANameAreShownNotObeyed) {
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(printable("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
  EXPECT_EQ(printable("ok\r\nALL GOOD"), "ok\\x0d\\x0aALL GOOD");
  EXPECT_EQ(printable_lines("one\ntwo\r\x1b[1A"), "one\ntwo\\x0d\\x1b[1A");
  EXPECT_EQ(printable("tab\there"), "tab\\x09here");
}

TEST(PrintableTest, ValidUtf8IsKeptAndC1ControlsAndReorderingAreEscaped) {
  const std::string kept = "caf\xc3\xa9 \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x93\x81 \xc2\xa0";
  EXPECT_EQ(printable(kept), kept);
  EXPECT_EQ(printable("\xc2\x9b"
                      "2J"),
            "\\u009b2J");                       // CSI as one code point
  EXPECT_EQ(printable("\xc2\x85"), "\\u0085");  // NEL
  EXPECT_EQ(printable("\xc2\x80\xc2\x9f"), "\\u0080\\u009f");
  EXPECT_EQ(printable("a\xe2\x80\xae"
                      "cba"),
            "a\\u202ecba");  // right-to-left override
  EXPECT_EQ(printable("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
  EXPECT_EQ(printable("\xe2\x80\xa8"), "\\u2028");
}

TEST(PrintableTest, InvalidUtf8IsEscapedByteByByte) {
  EXPECT_EQ(printable("lat\xe9"), "lat\\xe9");                       // Latin-1
  EXPECT_EQ(printable("\xc3"), "\\xc3");                             // cut short
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(printable("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");           // overlong, 3 bytes
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(printable("\xe2\x80"
                      "a"),
            "\\xe2\\x80a");                                               // continuation missing
  EXPECT_EQ(printable("\xc3\xa9\xff\xc3\xa9"), "\xc3\xa9\\xff\xc3\xa9");  // one bad byte alone
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
}

TEST(ClausesTest, AVerdictSplitsAtDashesAndSemicolonsOutsideParentheses) {
  EXPECT_EQ(clauses("AU 54% — limit: storage — the device delivered 38 MiB/s; the page cache served 5% "
                    "(31% re-reads; none lost)"),
            (std::vector<std::string>{"AU 54%", "limit: storage", "the device delivered 38 MiB/s",
                                      "the page cache served 5% (31% re-reads; none lost)"}));
  EXPECT_EQ(clauses("fed"), std::vector<std::string>{"fed"});
  EXPECT_TRUE(clauses("").empty());
}
}  // namespace
}  // namespace feedbench
