// Residency, eviction and warming on real files under /var/tmp (disk-backed: eviction and
// O_DIRECT mean nothing on tmpfs).
#include "feedbench/io/page_cache.h"
#include "feedbench/base/file_system.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <vector>

#include "feedbench/base/error.h"
#include "feedbench/dataset/generator.h"
#include "test_util.h"

namespace feedbench {
namespace {

using testing::on_tmpfs;
using testing::TempDir;

// Writes `files` files of `size` bytes with the generator and scans them.
FileSet make_files(const TempDir& dir, std::uint64_t files, std::uint64_t size) {
  GenOptions o;
  o.out = dir / "data";
  o.files = files;
  o.min_size = o.max_size = size;
  o.layout = GenLayout::kFlat;
  generate_dataset(o);
  return scan_dataset(o.out);
}

TEST(PageCacheTest, EvictThenWarmThenEvict) {
  TempDir dir;
  if (on_tmpfs(dir.path())) GTEST_SKIP() << "TMPDIR is tmpfs: files cannot be evicted there";
  FileSet files = make_files(dir, 40, 256 * 1024 + 100);  // a partial last page too

  Residency cold = evict(files);  // also writes back the freshly generated (dirty) pages
  EXPECT_EQ(cold.total_bytes, files.total_bytes());
  EXPECT_LE(cold.fraction(), 0.01) << cold.resident_bytes;
  EXPECT_TRUE(cold.method == "cachestat" || cold.method == "mincore") << cold.method;

  Residency hot = warm(files);
  EXPECT_GE(hot.fraction(), 0.99) << hot.resident_bytes;
  EXPECT_LE(hot.resident_bytes, hot.total_bytes);

  Residency again = evict(files);
  EXPECT_LE(again.fraction(), 0.01) << again.resident_bytes;
}

// RETURNS: resident bytes of `path` per util-linux fincore (an independent witness), or -1.
long long fincore_bytes(const std::string& path) {
  std::string cmd = "fincore --bytes --noheadings --output RES '" + path + "' 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return -1;
  long long v = -1;
  if (std::fscanf(p, " %lld", &v) != 1) v = -1;
  if (::pclose(p) != 0) return -1;
  return v;
}

TEST(PageCacheTest, FincoreAgreesAfterEvictAndWarm) {
  TempDir dir;
  if (on_tmpfs(dir.path())) GTEST_SKIP() << "TMPDIR is tmpfs";
  FileSet files = make_files(dir, 3, 300 * 1024);
  evict(files);
  long long cold = fincore_bytes(files.absolute_path(1));
  if (cold < 0) GTEST_SKIP() << "fincore (util-linux) not available";
  EXPECT_EQ(cold, 0);
  warm(files);
  EXPECT_EQ(fincore_bytes(files.absolute_path(1)), 300 * 1024);
}

TEST(PageCacheTest, MeasuringDoesNotChangeResidency) {
  TempDir dir;
  if (on_tmpfs(dir.path())) GTEST_SKIP() << "TMPDIR is tmpfs";
  FileSet files = make_files(dir, 8, 128 * 1024);
  ASSERT_LE(evict(files).fraction(), 0.01);
  for (int i = 0; i < 3; ++i) EXPECT_LE(measure_residency(files).fraction(), 0.01);
  warm(files);
  for (int i = 0; i < 3; ++i) EXPECT_GE(measure_residency(files).fraction(), 0.99);
}

TEST(PageCacheTest, PartialResidencyIsMeasured) {
  TempDir dir;
  if (on_tmpfs(dir.path())) GTEST_SKIP() << "TMPDIR is tmpfs";
  FileSet files = make_files(dir, 4, 64 * 1024);
  ASSERT_LE(evict(files).fraction(), 0.01);
  // Warm half of the files: residency must say about a half.
  FileSet half(files.root());
  half.add(files.relative_path(0), files.file_size(0), files.mtime_ns(0));
  half.add(files.relative_path(1), files.file_size(1), files.mtime_ns(1));
  warm(half);
  double f = measure_residency(files).fraction();
  EXPECT_GE(f, 0.49);
  EXPECT_LE(f, 0.51);
}

// Runs `fn` with residency measured by mincore(2) (the fallback for kernels before 6.5).
template <class Fn>
void with_mincore(Fn fn) {
  ::setenv("FEEDBENCH_RESIDENCY_METHOD", "mincore", 1);
  fn();
  ::unsetenv("FEEDBENCH_RESIDENCY_METHOD");
}

TEST(PageCacheTest, MincoreFallbackAgreesWithCachestat) {
  TempDir dir;
  if (on_tmpfs(dir.path())) GTEST_SKIP() << "TMPDIR is tmpfs";
  FileSet files = make_files(dir, 6, 100 * 1024 + 1);
  with_mincore([&] {
    Residency r = evict(files);
    EXPECT_EQ(r.method, "mincore");
    EXPECT_LE(r.fraction(), 0.01);
  });
  Residency cold = measure_residency(files);
  EXPECT_LE(cold.fraction(), 0.01);
  with_mincore([&] {
    Residency r = warm(files);
    EXPECT_EQ(r.method, "mincore");
    EXPECT_GE(r.fraction(), 0.99);
  });
  Residency hot = measure_residency(files);
  EXPECT_GE(hot.fraction(), 0.99) << hot.method;
  RecordProperty("default_method", hot.method);
}

TEST(PageCacheTest, ResidencyOfARangeCountsThatRangeOnly) {
  TempDir dir;
  if (on_tmpfs(dir.path())) GTEST_SKIP() << "TMPDIR is tmpfs";
  FileSet files = make_files(dir, 1, 256 * 1024);
  ASSERT_LE(evict(files).fraction(), 0.01);
  const int fd = ::open(files.absolute_path(0).c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);  // no read-ahead past the range read
  std::vector<char> buffer(64 * 1024);
  ASSERT_EQ(::pread(fd, buffer.data(), buffer.size(), 64 * 1024), ssize_t(buffer.size()));
  auto check = [&] {
    EXPECT_EQ(resident_bytes_in(fd, 64 * 1024, 64 * 1024), 64u * 1024);
    EXPECT_EQ(resident_bytes_in(fd, 0, 64 * 1024), 0u);
    EXPECT_EQ(resident_bytes_in(fd, 192 * 1024, 64 * 1024), 0u);
    // Part of a page, and a range across the read one's end: only its resident part.
    EXPECT_EQ(resident_bytes_in(fd, 64 * 1024 + 100, 100), 100u);
    EXPECT_EQ(resident_bytes_in(fd, 120 * 1024, 16 * 1024), 8u * 1024);
    EXPECT_EQ(resident_bytes_in(fd, 0, 0), 0u);
  };
  check();
  with_mincore(check);
  ::close(fd);
}

TEST(PageCacheTest, ProgressReachesTotalFromOneThread) {
  TempDir dir;
  FileSet files = make_files(dir, 3000, 16);
  std::mutex m;
  std::size_t last = 0, calls = 0;
  bool monotonic = true;
  Residency r = measure_residency(files, [&](std::size_t done, std::size_t total) {
    std::lock_guard<std::mutex> lock(m);
    EXPECT_EQ(total, files.size());
    if (done < last) monotonic = false;
    last = done;
    ++calls;
  });
  EXPECT_TRUE(monotonic);
  EXPECT_EQ(last, files.size());
  EXPECT_GE(calls, 2u);
  EXPECT_EQ(r.total_bytes, 3000u * 16u);
}

TEST(PageCacheTest, EmptySetAndEmptyFiles) {
  TempDir dir;
  FileSet none(dir.path());
  EXPECT_EQ(measure_residency(none).total_bytes, 0u);
  EXPECT_EQ(evict(none).fraction(), 0.0);
  testing::write_file(dir / "e/empty.bin", "");
  FileSet empty = scan_dataset(dir / "e");
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(warm(empty).resident_bytes, 0u);
}

TEST(PageCacheTest, MissingFileIsRunErrorNamingIt) {
  TempDir dir;
  FileSet files(dir.path());
  files.add("gone.bin", 10, 0);
  try {
    measure_residency(files);
    FAIL() << "expected RunError";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("gone.bin"), std::string::npos) << e.what();
  }
}

TEST(PageCacheTest, DirectIoProbe) {
  TempDir dir;
  FileSet files = make_files(dir, 2, 8192);
  std::string reason = probe_direct_io(dir / "data");
  if (on_tmpfs(dir.path())) {
    SUCCEED() << "tmpfs: " << reason;
  } else {
    EXPECT_EQ(reason, "");  // ext4/xfs under /var/tmp take O_DIRECT
  }
  EXPECT_EQ(probe_direct_io(files.absolute_path(0)), reason);
  std::string none = probe_direct_io(dir / "missing");
  EXPECT_NE(none.find("missing"), std::string::npos) << none;
}

TEST(PageCacheTest, AvailableMemoryIsPlausible) {
  std::uint64_t bytes = available_memory_bytes();
  EXPECT_GT(bytes, 16ull << 20);
  EXPECT_LT(bytes, 1ull << 50);
}

}  // namespace
}  // namespace feedbench
