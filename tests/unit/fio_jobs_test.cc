#include "feedbench/plan/fio_jobs.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "feedbench/base/text.h"
#include "feedbench/plan/config.h"
#include "test_util.h"

namespace feedbench {
namespace {

using json = nlohmann::json;
using testing::TempDir;

class FioJobsTest : public ::testing::Test {
 protected:
  TempDir dir;  // both roots of the config; the FileSets below are made up
  Plan plan_of(const json& families) {
    const json doc = {
        {"name", "t"}, {"dataset", {{"source", dir.path()}, {"cache", dir.path()}}}, {"families", families}};
    return expand_plan(parse_config(doc.dump(), "p.json"));
  }
  // Names fio's job syntax treats specially: it separates names with ':', strips a value's
  // leading and trailing blanks, reads a '\\' before a ':' as an escape, cuts a line at ';' or
  // '#', expands ${VAR} and its keywords ($ncpus, ...), and reads a new line as a new option
  // (here one that would run a command).
  static FileSet awkward_files_at(const std::string& root) {
    FileSet files(root);
    for (const char* name :
         {"plain.bin", "a:b.bin", "colon:", "back\\:slash", "ends\\", " lead", "trail ", "mid dle",
          "[section", "tab\tin", "=eq", "sub/ lead", "x\nexec_prerun=touch PWNED\n#", "semi;colon",
          "hash#tag", "${HOME}", "n$ncpus", "sub/$pagesize"})
      files.add(name, 4096, 1);
    files.sort();
    return files;
  }
  static FileSet files_at(const std::string& root) {
    FileSet files(root);
    files.add("a:b.bin", 8192, 1);
    files.add("c.bin", 8192, 2);
    files.sort();
    return files;
  }
};

TEST_F(FioJobsTest, JobReadsTheCaseFilesTheWayTheCaseDoes) {
  const Plan plan = plan_of(json::array({{{"family", "file_read"},
                                          {"pattern", "random"},
                                          {"block_size", 4096},
                                          {"workers", 2},
                                          {"cache_state", "cold"},
                                          {"path", "source"}}}));
  ASSERT_EQ(plan.cases.size(), 1u);
  const std::string job = fio_job_for(plan.cases[0], files_at(dir / "source"));
  EXPECT_NE(job.find("rw=randread\n"), std::string::npos) << job;
  EXPECT_NE(job.find("bs=4096\n"), std::string::npos) << job;
  EXPECT_NE(job.find("numjobs=2\n"), std::string::npos) << job;
  EXPECT_NE(job.find("invalidate=1\n"), std::string::npos) << job;
  EXPECT_NE(job.find("io_size=8192\n"), std::string::npos) << job;  // 16 KiB over two workers
  // fio separates names with ':', so a colon in a name is escaped.
  EXPECT_NE(job.find("filename=a\\:b.bin:c.bin\n"), std::string::npos) << job;
}

TEST_F(FioJobsTest, WritesOneJobPerFileReadCaseOfAPathThatHasFiles) {
  const Plan plan =
      plan_of(json::array({{{"family", "file_read"}, {"path", json::array({"source", "cache"})}}}));
  ASSERT_EQ(plan.cases.size(), 2u);
  const FileSet source = files_at(dir / "source");
  const std::string out = dir / "jobs";
  // No cache FileSet: its case has nothing to read and gets no job.
  EXPECT_EQ(write_fio_jobs(plan, &source, nullptr, out).jobs, 1u);
  std::size_t written = 0;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    ++written;
    EXPECT_EQ(entry.path().extension(), ".fio");
    EXPECT_NE(entry.path().filename().string().find("path_source"), std::string::npos) << entry.path();
  }
  EXPECT_EQ(written, 1u);
  const FileSet cache = files_at(dir / "cache");
  EXPECT_EQ(write_fio_jobs(plan, &source, &cache, dir / "jobs2").jobs, 2u);
}

// RETURNS: the files fio reads for `job`, as fio parses it (`--parse-only --debug=file` prints
// each file it adds), the job's folder prefix removed; nullopt where fio is not installed.
std::optional<std::multiset<std::string>> files_fio_reads(const std::string& job, const std::string& root) {
  if (std::system("command -v fio >/dev/null 2>&1") != 0) return std::nullopt;
  const std::string cmd = "fio --parse-only --debug=file " + shell_quote(job) + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return std::nullopt;
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  std::multiset<std::string> files;
  const std::regex added("file 0x[0-9a-f]+ \"(.*)\" added at [0-9]+");
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, added)) continue;
    std::string path = m[1];
    EXPECT_EQ(path.rfind(root + "/", 0), 0u) << path << "\n" << out;
    path.erase(0, root.size() + 1);
    for (std::size_t at; (at = path.find("/./")) != std::string::npos;) path.erase(at, 2);
    if (path.rfind("./", 0) == 0) path.erase(0, 2);
    files.insert(path);
  }
  return files;
}

// The options a job of fio_job_for may set: any other (exec_prerun=, include) came from a name.
bool is_job_option(const std::string& line) {
  static const std::set<std::string> keys = {
      "directory",         "rw",          "bs",         "ioengine", "iodepth",   "direct",
      "fadvise_hint",      "mem_align",   "invalidate", "pre_read", "fixedbufs", "registerfiles",
      "file_service_type", "norandommap", "randrepeat", "randseed", "io_size",   "numjobs",
      "openfiles",         "filename"};
  if (line == "thread" || line == "group_reporting") return true;
  if (line.size() > 2 && line.front() == '[' && line.back() == ']') return true;
  const auto eq = line.find('=');
  return eq != std::string::npos && keys.count(line.substr(0, eq)) == 1;
}

TEST_F(FioJobsTest, FioReadsBackTheNamesItCanHoldAndNoOptionComesFromAName) {
  const Plan plan = plan_of(json::array({{{"family", "file_read"},
                                          {"pattern", json::array({"sequential", "random"})},
                                          {"block_size", 4096},
                                          {"cache_state", "warm"},
                                          {"path", "source"}}}));
  ASSERT_EQ(plan.cases.size(), 2u);
  // The folder is quoted too: ':' separates directory= entries, and a blank at its end is
  // stripped.
  for (const std::string& root : {dir / "data", dir / "da:ta "}) {
    const FileSet files = awkward_files_at(root);
    // What fio cannot hold: a new line, ';' and '#' (comments), ${...} and $keywords (expanded).
    std::multiset<std::string> held;
    for (std::size_t i = 0; i < files.size(); ++i) {
      const std::string name(files.relative_path(i));
      if (name.find_first_of("\n;#$") == std::string::npos) held.insert(name);
    }
    ASSERT_EQ(held.size(), files.size() - 6);
    for (const Case& c : plan.cases) {
      const std::string job = fio_job_for(c, files);
      std::istringstream lines(job);
      for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line[0] != '#') {
          EXPECT_TRUE(is_job_option(line)) << line << "\n" << job;
        }
      }
      EXPECT_NE(job.find("# left out: 6 of 18 files"), std::string::npos) << job;
      EXPECT_NE(job.find("\"x\\nexec_prerun=touch PWNED\\n#\""), std::string::npos) << job;
      if (c.file_read().pattern.pattern == Pattern::random) {  // one pass over the files it reads
        EXPECT_NE(job.find("io_size=" + std::to_string(held.size() * 4096) + "\n"), std::string::npos) << job;
      }
      const std::string path = dir / (c.params.at("pattern").get<std::string>() + ".fio");
      testing::write_file(path, job);
      const auto read = files_fio_reads(path, root);
      if (!read) {
        GTEST_SKIP() << "fio is not installed";
      }
      EXPECT_EQ(*read, held) << job;
    }
  }
}

// The data set's own folder is written into the job too (directory=, and a comment): a folder
// fio cannot hold leaves every file out, and no job is written (fio would make up files of its
// own for a job without names, and write them).
TEST_F(FioJobsTest, AFolderFioCannotHoldGetsNoJob) {
  const Plan plan = plan_of(json::array({{{"family", "file_read"}, {"path", "source"}}}));
  ASSERT_EQ(plan.cases.size(), 1u);
  const FileSet files = files_at(dir / "d\n[pwn]\nexec_prerun=touch PWNED\n#");
  EXPECT_EQ(fio_job_for(plan.cases[0], files), "");
  const FioJobsWritten written = write_fio_jobs(plan, &files, nullptr, dir / "jobs");
  EXPECT_EQ(written.jobs, 0u);
  EXPECT_EQ(written.files_left_out, 2u);
  EXPECT_TRUE(std::filesystem::is_empty(dir / "jobs"));
  // The warning escapes what it names: a new line in a name cannot start a line of its own.
  const std::string warning = fio_left_out_warning(written);
  EXPECT_EQ(warning.find('\n'), std::string::npos) << warning;
  EXPECT_NE(warning.find("2 files left out"), std::string::npos) << warning;
  EXPECT_NE(warning.find("\"a:b.bin\": a new line"), std::string::npos) << warning;
}

}  // namespace
}  // namespace feedbench
