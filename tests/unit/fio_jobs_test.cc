#include "feedbench/plan/fio_jobs.h"

#include <filesystem>

#include <gtest/gtest.h>

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
  EXPECT_EQ(write_fio_jobs(plan, &source, nullptr, out), 1u);
  std::size_t written = 0;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    ++written;
    EXPECT_EQ(entry.path().extension(), ".fio");
    EXPECT_NE(entry.path().filename().string().find("path_source"), std::string::npos) << entry.path();
  }
  EXPECT_EQ(written, 1u);
  const FileSet cache = files_at(dir / "cache");
  EXPECT_EQ(write_fio_jobs(plan, &source, &cache, dir / "jobs2"), 2u);
}

}  // namespace
}  // namespace feedbench
