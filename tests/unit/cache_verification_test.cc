// The checks `run` makes on a staged cache before measuring it: the cheap listing check
// (manifest listing, count, sizes, mtimes) and the full SHA-256 re-hash.
#include "feedbench/cache/cache_verification.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>

#include "feedbench/cache/stager.h"
#include "test_util.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_file;

struct StagedCache {
  TempDir dir;
  std::string src = dir / "src";
  std::string cache = dir / "cache";
  StagedCache() {
    write_file(src + "/a.bin", std::string(300000, 'a'));
    write_file(src + "/sub/b.bin", "bee");
    write_file(src + "/sub/c.bin", "sea");
    StageOptions o;
    o.source_root = src;
    o.cache_root = cache;
    o.quiet = true;
    if (stage(o).exit_code() != 0) std::abort();
  }
  FileSet source() const { return scan_dataset(src); }
  FileSet cached() const { return scan_dataset(cache); }
};

bool has_problem(const CacheVerification& v, const std::string& text) {
  return std::any_of(v.problems.begin(), v.problems.end(),
                     [&](const std::string& p) { return p.find(text) != std::string::npos; });
}

TEST(CacheVerificationTest, AFreshlyStagedCachePassesBothChecks) {
  StagedCache f;
  CacheVerification v = check_cache_listing(f.cache, f.cached(), f.source());
  EXPECT_TRUE(v.ok) << v.summary();
  EXPECT_EQ(v.method, "listing+sizes+mtimes");
  EXPECT_TRUE(v.problems.empty());
  EXPECT_EQ(v.files_checked, 3u);
  EXPECT_EQ(v.bytes_checked, 300006u);
  CacheVerification full = rehash_cache(f.cache, f.cached(), f.source(), false);
  EXPECT_TRUE(full.ok) << full.summary();
  EXPECT_EQ(full.method, "sha256");
  EXPECT_EQ(full.files_checked, 3u);
  EXPECT_EQ(full.bytes_checked, 300006u);
  const nlohmann::json j = full.to_json();
  EXPECT_EQ(j["method"], "sha256");
  EXPECT_EQ(j["ok"], true);
  EXPECT_TRUE(j["problems"].is_array());
}

// Files deleted, added, resized or rewritten in the cache since staging: the manifest still
// matches the source, so only a look at the folder itself finds them.
TEST(CacheVerificationTest, ListingFindsMissingExtraResizedAndModifiedFiles) {
  StagedCache f;
  fs::remove(f.cache + "/sub/b.bin");
  write_file(f.cache + "/stray.bin", "x");
  write_file(f.cache + "/a.bin", "short now");
  write_file(f.cache + "/sub/c.bin", "SEA");  // same size, new mtime
  ASSERT_EQ(check_cache(f.cache, f.source()), "") << "the manifest alone still says yes";
  CacheVerification v = check_cache_listing(f.cache, f.cached(), f.source());
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(has_problem(v, "missing from the cache: sub/b.bin")) << v.summary();
  EXPECT_TRUE(has_problem(v, "not in the manifest: stray.bin")) << v.summary();
  EXPECT_TRUE(has_problem(v, "size differs from the staged copy: a.bin (9 bytes, staged 300000)"))
      << v.summary();
  EXPECT_TRUE(has_problem(v, "modified since staging: sub/c.bin")) << v.summary();
  EXPECT_TRUE(has_problem(v, "total bytes")) << v.summary();
  EXPECT_NE(v.summary().find("problems"), std::string::npos) << v.summary();
}

// An edit that keeps size and mtime: the listing cannot see it, the re-hash can.
TEST(CacheVerificationTest, Sha256FindsSameSizeEditsTheListingMisses) {
  StagedCache f;
  struct stat st {};
  ASSERT_EQ(::stat((f.cache + "/sub/b.bin").c_str(), &st), 0);
  write_file(f.cache + "/sub/b.bin", "BEE");
  timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, (f.cache + "/sub/b.bin").c_str(), times, 0), 0);
  EXPECT_TRUE(check_cache_listing(f.cache, f.cached(), f.source()).ok);
  CacheVerification full = rehash_cache(f.cache, f.cached(), f.source(), false);
  EXPECT_FALSE(full.ok);
  EXPECT_TRUE(has_problem(full, "content differs from the manifest's SHA-256: sub/b.bin")) << full.summary();
}

TEST(CacheVerificationTest, NoManifestIsAProblemNotACrash) {
  TempDir dir;
  write_file(dir / "src/a.bin", "a");
  write_file(dir / "cache/a.bin", "a");
  CacheVerification v =
      check_cache_listing(dir / "cache", scan_dataset(dir / "cache"), scan_dataset(dir / "src"));
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(has_problem(v, "no complete manifest")) << v.summary();
}

// The check at a run's end: the files verified before the first case, looked at again.
TEST(CacheVerificationTest, RecheckOfAnUnchangedCacheFindsNothing) {
  StagedCache f;
  const FileSet verified = f.cached();
  CacheVerification v = recheck_cache_files(verified);
  EXPECT_TRUE(v.ok) << v.problem_list();
  EXPECT_EQ(v.method, "listing+sizes+mtimes");
  EXPECT_EQ(v.files_checked, 3u);
  EXPECT_EQ(v.bytes_checked, 300006u);
}

// A cache changed under a run (stage --prune, a rewrite): each change named, by its path.
TEST(CacheVerificationTest, RecheckFindsFilesRemovedResizedOrRewrittenSinceTheyWereVerified) {
  StagedCache f;
  const FileSet verified = f.cached();
  fs::remove(f.cache + "/sub/b.bin");
  write_file(f.cache + "/a.bin", "short now");
  struct stat st {};
  ASSERT_EQ(::stat((f.cache + "/sub/c.bin").c_str(), &st), 0);
  timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec += 7;  // same size and bytes, another mtime
  ASSERT_EQ(::utimensat(AT_FDCWD, (f.cache + "/sub/c.bin").c_str(), times, 0), 0);
  write_file(f.cache + "/new.bin", "not verified, not read: not the recheck's business");
  CacheVerification v = recheck_cache_files(verified);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.problems, (std::vector<std::string>{
                            "size changed during the run: a.bin (9 bytes, 300000 before)",
                            "removed during the run: sub/b.bin",
                            "modified during the run: sub/c.bin (its mtime changed)",
                        }));
  EXPECT_EQ(v.files_checked, 3u);
  EXPECT_EQ(v.bytes_checked, 12u);
  EXPECT_EQ(
      v.problem_list(2),
      "3 problems, checked by listing+sizes+mtimes: size changed during the run: a.bin (9 bytes, 300000 "
      "before); removed during the run: sub/b.bin; and 1 more");
}

TEST(CacheVerificationTest, RecheckOfACacheFolderGoneNamesIt) {
  StagedCache f;
  const FileSet verified = f.cached();
  fs::remove_all(f.cache);
  CacheVerification v = recheck_cache_files(verified);
  EXPECT_FALSE(v.ok);
  ASSERT_EQ(v.problems.size(), 1u) << v.problem_list();
  EXPECT_NE(v.problems[0].find("cannot open the cache folder " + verified.root()), std::string::npos)
      << v.problems[0];
}

}  // namespace
}  // namespace feedbench
