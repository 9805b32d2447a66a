// The run's progress: a line per case when redirected, a live line rewritten in place on a
// terminal, cleared while other output is printed.
#include "benchmarks/progress.h"

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace feedbench {
namespace {

// Output of a RunProgress into memory.
class Captured {
 public:
  Captured() : file_(::open_memstream(&data_, &size_)) {}
  ~Captured() {
    std::fclose(file_);
    std::free(data_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(data_, size_);
  }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* file_;
};

TEST(ProgressTest, RedirectedALinePerCaseAndNoLiveLine) {
  Captured out;
  {
    RunProgress p(out.file(), /*live=*/false, 2, 4);
    EXPECT_FALSE(p.phase("evicting"));  // nothing to show it in
    p.begin_repetition("file_read/a", 0, 2);
    p.end_repetition(1 << 20, 0.5);
    EXPECT_EQ(out.text(), "");  // not the case's last repetition yet
    p.begin_repetition("file_read/a", 1, 2);
    p.end_repetition(1 << 20, 0.5);
    p.begin_repetition("file_read/b", 0, 2);
    p.end_repetition(0, 0);
    p.begin_repetition("file_read/b", 1, 2);
    p.end_repetition(0, 0);
  }
  const std::string text = out.text();
  EXPECT_NE(text.find("[1/2] file_read/a: 2 repetitions, 2 MiB read at 2 MiB/s; 0:00 elapsed, ~0:00 left\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("[2/2] file_read/b: 2 repetitions, 0 B read at -; "), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_EQ(text.find('\033'), std::string::npos) << text;
}

TEST(ProgressTest, LiveLineIsRewrittenInPlaceAndClearedAroundOtherOutput) {
  Captured out;
  {
    RunProgress p(out.file(), /*live=*/true, 3, 6);
    p.begin_repetition("file_read/a", 0, 2);
    p.phase("evicting")(3, 8);
    p.end_repetition(4 << 20, 2.0);
    p.suspend();
    const std::size_t before = out.text().size();
    EXPECT_EQ(out.text().substr(out.text().size() - 4), "\r\033[K");  // cleared
    p.end_repetition(0, 0);  // while suspended (the table is printing): nothing drawn
    EXPECT_EQ(out.text().size(), before);
    p.resume();
  }
  const std::string text = out.text();
  EXPECT_NE(text.find("\r[1/3 rep 1/2] 0 B read, 0:00 elapsed, ? left  file_read/a\033[K"), std::string::npos)
      << text;
  EXPECT_NE(text.find("evicting 3/8 files  file_read/a"), std::string::npos) << text;
  EXPECT_NE(text.find("\r[1/3 rep 1/2] 4 MiB read, 2 MiB/s, 0:00 elapsed, ~0:00 left  file_read/a"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << "no line of its own: " << text;
  EXPECT_EQ(text.substr(text.size() - 4), "\r\033[K");  // gone when the run ends
}

TEST(ProgressTest, ClockText) {
  EXPECT_EQ(RunProgress::clock_text(0), "0:00");
  EXPECT_EQ(RunProgress::clock_text(61.4), "1:01");
  EXPECT_EQ(RunProgress::clock_text(3 * 3600 + 62), "3:01:02");
  EXPECT_EQ(RunProgress::clock_text(-5), "0:00");
}

}  // namespace
}  // namespace feedbench
