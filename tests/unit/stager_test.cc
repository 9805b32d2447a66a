#include "feedbench/stager.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <sys/stat.h>

#include "feedbench/error.h"
#include "feedbench/manifest.h"
#include "feedbench/sha256.h"
#include "test_util.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::read_file;
using testing::write_file;

struct Fixture {
  TempDir dir;
  std::string src = dir / "src";
  std::string cache = dir / "cache";
  Fixture() {
    write_file(src + "/val/a.bin", std::string(300000, 'a'));
    write_file(src + "/val/sub/b.bin", "bee");
    write_file(src + "/train/c.bin", "sea");
  }
  StageOptions options(std::vector<std::string> include = {}) const {
    StageOptions o;
    o.source_root = src;
    o.cache_root = cache;
    o.include = std::move(include);
    o.workers = 2;
    o.quiet = true;
    return o;
  }
};

TEST(StagerTest, StagesSelectionWithManifestLast) {
  Fixture f;
  StageResult r = stage(f.options({"val/**"}));
  ASSERT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(r.files_selected, 2u);
  EXPECT_EQ(r.files_copied, 2u);
  EXPECT_EQ(read_file(f.cache + "/val/sub/b.bin"), "bee");
  EXPECT_FALSE(fs::exists(f.cache + "/train"));
  EXPECT_FALSE(fs::exists(f.cache + "/" + kStageJournalName));
  std::optional<Manifest> m = read_manifest(f.cache);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->files.size(), 2u);
  EXPECT_EQ(m->files[1].path, "val/sub/b.bin");
  EXPECT_EQ(m->files[1].sha256, sha256_hex("bee"));
  EXPECT_EQ(m->source_fingerprint, scan_dataset(f.src, {"val/**"}).fingerprint());
  EXPECT_EQ(m->label.rfind("fp-", 0), 0u);
  struct stat a {}, b {};
  ASSERT_EQ(::stat((f.src + "/val/a.bin").c_str(), &a), 0);
  ASSERT_EQ(::stat((f.cache + "/val/a.bin").c_str(), &b), 0);
  EXPECT_EQ(a.st_mtim.tv_sec, b.st_mtim.tv_sec);
  EXPECT_EQ(a.st_mtim.tv_nsec, b.st_mtim.tv_nsec);
}

TEST(StagerTest, CheckCacheComparesFingerprints) {
  Fixture f;
  FileSet sel = scan_dataset(f.src, {"val/**"});
  std::string why = check_cache(f.cache, sel);
  EXPECT_NE(why.find("no complete manifest"), std::string::npos) << why;
  EXPECT_NE(why.find("feedbench stage --from"), std::string::npos) << why;
  EXPECT_FALSE(read_manifest_json(f.cache));
  StageOptions o = f.options({"val/**"});
  o.label = "v7";
  ASSERT_EQ(stage(o).exit_code(), 0);
  EXPECT_EQ(check_cache(f.cache, sel), "");
  auto j = read_manifest_json(f.cache);
  ASSERT_TRUE(j);
  EXPECT_EQ((*j)["label"], "v7");
  // Another selection of the same source is not this cache.
  why = check_cache(f.cache, scan_dataset(f.src));
  EXPECT_NE(why.find("does not match"), std::string::npos) << why;
  EXPECT_NE(why.find("--include 'val/**'"), std::string::npos) << why;
}

TEST(StagerTest, ResumeSkipsCopiesChangesAndRemoves) {
  Fixture f;
  ASSERT_EQ(stage(f.options()).exit_code(), 0);
  write_file(f.src + "/val/sub/b.bin", "bee, changed");
  fs::remove(f.src + "/train/c.bin");
  write_file(f.src + "/new.bin", "new");
  StageResult r = stage(f.options());
  ASSERT_EQ(r.exit_code(), 0) << (r.errors.empty() ? "" : r.errors.front());
  EXPECT_EQ(r.files_skipped, 1u);
  EXPECT_EQ(r.files_copied, 2u);
  EXPECT_EQ(r.files_removed, 1u);
  ASSERT_EQ(r.removed.size(), 1u);
  EXPECT_EQ(r.removed[0], "train/c.bin");
  EXPECT_FALSE(fs::exists(f.cache + "/train"));  // emptied folders go too
  EXPECT_EQ(read_file(f.cache + "/val/sub/b.bin"), "bee, changed");
  VerifyOptions v;
  v.cache_root = f.cache;
  v.source_root = f.src;
  VerifyResult vr = verify_cache(v);
  EXPECT_TRUE(vr.ok());
  EXPECT_EQ(vr.files_checked, 3u);
}

TEST(StagerTest, VerifyFindsMissingChangedExtraAndSourceDrift) {
  Fixture f;
  ASSERT_EQ(stage(f.options()).exit_code(), 0);
  write_file(f.cache + "/val/sub/b.bin", "BEE");  // same size, other content
  fs::remove(f.cache + "/train/c.bin");
  write_file(f.cache + "/stray", "x");
  write_file(f.src + "/val/added.bin", "+");
  VerifyOptions v;
  v.cache_root = f.cache;
  v.source_root = f.src;
  v.workers = 3;
  VerifyResult r = verify_cache(v);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.changed, std::vector<std::string>{"val/sub/b.bin"});
  EXPECT_EQ(r.missing, std::vector<std::string>{"train/c.bin"});
  EXPECT_EQ(r.extra, std::vector<std::string>{"stray"});
  EXPECT_FALSE(r.source_matches);
  EXPECT_NE(std::find(r.source_differences.begin(), r.source_differences.end(),
                      "added to the source: val/added.bin"),
            r.source_differences.end());
}

TEST(StagerTest, VerifyWithoutManifestIsBadInput) {
  Fixture f;
  fs::create_directories(f.cache);
  VerifyOptions v;
  v.cache_root = f.cache;
  EXPECT_THROW(verify_cache(v), InputError);
}

TEST(StagerTest, RefusesOverlapSymlinkEscapeAndForeignFolders) {
  Fixture f;
  StageOptions inside = f.options();
  inside.cache_root = f.src + "/val/cache";
  EXPECT_THROW(stage(inside), InputError);
  EXPECT_FALSE(fs::exists(f.src + "/val/cache"));
  StageOptions around = f.options();
  around.cache_root = f.dir.path();
  EXPECT_THROW(stage(around), InputError);

  write_file(f.dir / "outside/secret", "s");
  fs::create_symlink(f.dir / "outside/secret", f.src + "/val/link");
  EXPECT_THROW(stage(f.options()), InputError);
  // A link outside the selection does not matter.
  EXPECT_EQ(stage(f.options({"train/**"})).exit_code(), 0);
  fs::remove(f.src + "/val/link");

  write_file(f.dir / "home/notes", "keep me");
  StageOptions foreign = f.options();
  foreign.cache_root = f.dir / "home";
  EXPECT_THROW(stage(foreign), InputError);
  EXPECT_EQ(read_file(f.dir / "home/notes"), "keep me");
}

TEST(StagerTest, StopFlagLeavesNoManifestAndNoTemporaries) {
  Fixture f;
  std::atomic<int> stop{2};  // as if SIGINT arrived before the first file
  StageOptions o = f.options();
  o.stop = &stop;
  StageResult r = stage(o);
  EXPECT_EQ(r.exit_code(), 130);
  EXPECT_FALSE(read_manifest(f.cache));
  // Only the journal stays (it is what the next run resumes from); no data temporaries.
  for (auto& e : fs::recursive_directory_iterator(f.cache)) {
    if (e.path().filename() != kStageJournalName) {
      EXPECT_NE(e.path().extension(), ".fbtmp") << e.path();
    }
  }
  stop = 0;
  EXPECT_EQ(stage(o).exit_code(), 0);
}

TEST(StagerTest, RemovesTemporariesLeftByACrash) {
  Fixture f;
  ASSERT_EQ(stage(f.options()).exit_code(), 0);
  write_file(f.cache + "/val/a.bin.fbtmp", "half a file");
  EXPECT_EQ(stage(f.options()).exit_code(), 0);
  EXPECT_FALSE(fs::exists(f.cache + "/val/a.bin.fbtmp"));
}

TEST(StagerTest, DefaultWorkersIsOneOrFour) {
  TempDir dir;
  int w = default_workers(dir.path());
  EXPECT_TRUE(w == 1 || w == 4) << w;
}

}  // namespace
}  // namespace feedbench
