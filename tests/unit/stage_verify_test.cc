// The verification and record phase of a stage on its own: hashing as the device returns a
// file, and the manifest written last (not rewritten when nothing changed).
#include "stage_verify.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <sys/stat.h>

#include "feedbench/base/sha256.h"
#include "feedbench/cache/manifest.h"
#include "stage_copy.h"
#include "stage_plan.h"
#include "test_util.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_file;

StageOptions options_for(const TempDir& dir) {
  StageOptions o;
  o.source_root = dir / "src";
  o.cache_root = dir / "cache";
  o.workers = 1;
  o.quiet = true;
  o.label = "v1";
  return o;
}

TEST(StageVerifyTest, HashFromDeviceReadsTheWholeFileOrNamesTheError) {
  TempDir dir;
  const std::string content(3 * kStageChunk / 2 + 7, 'x');  // more than one chunk
  write_file(dir / "f", content);
  AlignedBuffer buf(kStageChunk);
  std::atomic<bool> direct_ok{true};
  std::uint64_t bytes = 0;
  int err = 0;
  EXPECT_EQ(hash_from_device(dir / "f", buf, direct_ok, &bytes, &err, nullptr), sha256_hex(content));
  EXPECT_EQ(err, 0);
  EXPECT_EQ(bytes, content.size());
  EXPECT_EQ(hash_from_device(dir / "missing", buf, direct_ok, &bytes, &err, nullptr), "");
  EXPECT_EQ(err, ENOENT);
  const std::atomic<int> stop{2};
  EXPECT_EQ(hash_from_device(dir / "f", buf, direct_ok, &bytes, &err, &stop), "");
  EXPECT_EQ(err, EINTR) << "a stop request ends the read";
}

TEST(StageRecordTest, WritesTheManifestOfThePlanAndDropsTheJournal) {
  TempDir dir;
  write_file(dir / "src/a", "ay");
  write_file(dir / "src/b/c", "sea");
  const StageOptions o = options_for(dir);
  const StagePlan plan = plan_stage(o);
  std::vector<std::string> hashes = plan.hashes;
  StageResult result;
  ASSERT_TRUE(begin_changes(plan, result));
  copy_files(o, plan, hashes, result);
  ASSERT_TRUE(result.errors.empty()) << result.errors.front();
  record_stage(o, plan, hashes, result);
  EXPECT_TRUE(result.manifest_written);
  EXPECT_FALSE(fs::exists(plan.cache + "/" + kStageJournalName));
  std::optional<Manifest> m = read_manifest(plan.cache);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->label, "v1");
  EXPECT_EQ(m->source_fingerprint, plan.source_fingerprint);
  ASSERT_EQ(m->files.size(), 2u);
  EXPECT_EQ(m->files[0].path, "a");
  EXPECT_EQ(m->files[0].sha256, sha256_hex("ay"));
  EXPECT_EQ(m->files[1].path, "b/c");
  EXPECT_EQ(m->files[1].sha256, sha256_hex("sea"));
}

TEST(StageRecordTest, AnUnchangedCacheKeepsItsManifestFile) {
  TempDir dir;
  write_file(dir / "src/a", "ay");
  const StageOptions o = options_for(dir);
  ASSERT_EQ(stage(o).exit_code(), 0);
  struct stat before {
  }, after{};
  ASSERT_EQ(::stat((dir / "cache/" + kManifestSumsName).c_str(), &before), 0);
  {
    const StagePlan plan = plan_stage(o);
    ASSERT_FALSE(plan.changes());
    StageResult result;
    record_stage(o, plan, plan.hashes, result);
    EXPECT_TRUE(result.manifest_written);
  }
  ASSERT_EQ(::stat((dir / "cache/" + kManifestSumsName).c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino) << "the manifest was rewritten though nothing changed";
  // Another label is a change of the record: a new manifest.
  StageOptions relabelled = o;
  relabelled.label = "v2";
  const StagePlan plan = plan_stage(relabelled);
  StageResult result;
  record_stage(relabelled, plan, plan.hashes, result);
  ASSERT_TRUE(read_manifest(dir / "cache"));
  EXPECT_EQ(read_manifest(dir / "cache")->label, "v2");
}

// verify opens each listed file beneath the cache: a well-formed line through a symlinked folder
// that leads out of the cache is refused (an error naming it), with openat2 and with the walk.
TEST(StageVerifyTest, VerifyReadsNoListedFileThroughALink) {
  for (const char* method : {"auto", "walk"}) {
    testing::ScopedVariable v("FEEDBENCH_OPEN_BENEATH", method);
    TempDir dir;
    write_file(dir / "src/a", "ay");
    ASSERT_EQ(stage(options_for(dir)).exit_code(), 0);
    write_file(dir / "outside/b", "bee");
    fs::create_directory_symlink(dir / "outside", dir / "cache/link");
    fs::create_symlink(dir / "outside/b", dir / "cache/b");
    ASSERT_EQ(::mkfifo((dir / "cache/pipe").c_str(), 0600), 0);
    Manifest m = *read_manifest(dir / "cache");
    for (const char* listed : {"b", "link/b", "pipe"}) m.files.push_back({listed, sha256_hex("bee")});
    write_manifest(dir / "cache", m);  // a hand edit that kept the JSON in step
    VerifyOptions o;
    o.cache_root = dir / "cache";
    o.workers = 1;  // the errors in the manifest's order
    const VerifyResult r = verify_cache(o);
    EXPECT_FALSE(r.ok()) << method;
    const std::string why =
        ": a symbolic link on the way, not followed (a cache's files are read through its "
        "own folders only)";
    EXPECT_EQ(r.errors, (std::vector<std::string>{dir / "cache/b" + why, dir / "cache/link/b" + why}))
        << method;
    EXPECT_EQ(r.missing, std::vector<std::string>{"pipe"}) << "not a regular file: as before, missing";
    EXPECT_TRUE(r.changed.empty());
  }
}

}  // namespace
}  // namespace feedbench
