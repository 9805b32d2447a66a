#include "feedbench/cache/manifest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "feedbench/base/error.h"
#include "feedbench/base/sha256.h"
#include "feedbench/base/text.h"
#include "test_util.h"

namespace feedbench {
namespace {

using testing::input_error_of;
using testing::read_file;
using testing::ScopedVariable;
using testing::TempDir;
using testing::write_file;

Manifest sample() {
  Manifest m;
  m.label = "v1";
  m.source_root = "/data/src";
  m.source_fingerprint = sha256_hex("fp");
  m.include = {"validation/**"};
  m.total_bytes = 6;
  m.created_utc = "2024-01-02T03:04:05Z";
  m.feedbench_version = "0.1.0";
  m.files = {{"validation/a.bin", sha256_hex("abc")}, {"validation/b c.bin", sha256_hex("def")}};
  return m;
}

TEST(ManifestTest, SumsTextIsSha256sumFormat) {
  Manifest m = sample();
  EXPECT_EQ(m.sums_text(),
            sha256_hex("abc") + "  validation/a.bin\n" + sha256_hex("def") + "  validation/b c.bin\n");
}

TEST(ManifestTest, EscapesLikeGnuSha256sum) {
  Manifest m;
  m.files = {{"a\\b\nc", sha256_hex("x")}};
  const std::string text = m.sums_text();
  EXPECT_EQ(text, "\\" + sha256_hex("x") + "  a\\\\b\\nc\n");
  auto back = parse_sums(text, "t");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].path, "a\\b\nc");
}

TEST(ManifestTest, EscapesCarriageReturnLikeGnuCoreutils) {
  Manifest m;
  m.files = {{"a\rb", sha256_hex("x")}, {"plain", sha256_hex("y")}};
  EXPECT_EQ(m.sums_text(), "\\" + sha256_hex("x") + "  a\\rb\n" + sha256_hex("y") + "  plain\n");
  auto back = parse_sums(m.sums_text(), "t");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].path, "a\rb");
}

TEST(ManifestTest, Sha256sumChecksEscapedNames) {
  if (std::system("command -v sha256sum >/dev/null 2>&1") != 0) GTEST_SKIP() << "no sha256sum";
  TempDir dir;
  Manifest m;
  for (std::string name : {"back\\slash", "new\nline", "carriage\rreturn", "ends with\r", "all\\three\n\r"}) {
    write_file(dir / name, name);
    m.files.push_back({name, sha256_hex(name)});
  }
  write_manifest(dir.path(), m);
  EXPECT_EQ(std::system(("cd '" + dir.path() + "' && sha256sum --quiet -c MANIFEST.sha256").c_str()), 0);
  // And sha256sum's own output reads back as the same entries.
  const std::string out = dir / "gnu.txt";
  ASSERT_EQ(
      std::system(
          ("cd '" + dir.path() + "' && sha256sum -- back* new* carriage* ends* all* > gnu.txt").c_str()),
      0);
  auto gnu = parse_sums(read_file(out), out);
  ASSERT_EQ(gnu.size(), 5u);
  std::vector<ManifestEntry> ours = m.files;
  std::sort(ours.begin(), ours.end(), [](auto& a, auto& b) { return a.path < b.path; });
  std::sort(gnu.begin(), gnu.end(), [](auto& a, auto& b) { return a.path < b.path; });
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(gnu[i].path, ours[i].path);
    EXPECT_EQ(gnu[i].sha256, ours[i].sha256);
  }
}

TEST(ManifestTest, ParseAcceptsBinaryMarkerAndRejectsGarbage) {
  auto e = parse_sums(sha256_hex("x") + " *dir/f\n\n", "t");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].path, "dir/f");
  EXPECT_THROW(parse_sums("nothex  f\n", "t"), InputError);
  EXPECT_THROW(parse_sums(sha256_hex("x") + "\n", "t"), InputError);
  try {
    parse_sums(sha256_hex("x") + "  ok\nbad line\n", "M");
    FAIL();
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("M: line 2"), std::string::npos) << err.what();
  }
}

// Issue 30: a line naming '../outside.txt' had verify open and vouch for a file out of the cache.
TEST(ManifestTest, RefusesAPathThatIsNotBeneathTheCacheNamingTheLine) {
  const std::string hex = sha256_hex("x");
  const std::string first = hex + "  ok/a.bin\n";
  for (const auto& [path, problem] :
       {std::pair<std::string, std::string>{"../outside.txt", "has a '..' component"},
        {"ok/../../outside.txt", "has a '..' component"},
        {"/etc/passwd", "is absolute"},
        {"ok//a.bin", "has an empty component"},
        {"ok/", "has an empty component"},
        {"./a.bin", "has a '.' component"}}) {
    EXPECT_EQ(
        input_error_of([&] { parse_sums(first + hex + " *" + path + "\n", "M"); }),
        "M: line 2: the path '" + path + "' " + problem + " (a manifest names files beneath its cache only)");
  }
  // A NUL byte would cut the name short where it is opened; it is shown as \0.
  EXPECT_EQ(
      input_error_of([&] { parse_sums(first + hex + "  " + std::string("a\0../x", 6) + "\n", "M"); }),
      "M: line 2: the path 'a\\0../x' holds a NUL byte (a manifest names files beneath its cache only)");
  // Escaped lines are checked once unescaped, and shown as written.
  EXPECT_EQ(input_error_of([&] { parse_sums("\\" + hex + "  ..\\\\\n", "M"); }),
            "");  // the name ..\ (dots, then a backslash)
  EXPECT_EQ(input_error_of([&] { parse_sums("\\" + hex + "  a\\nb/../c\n", "M"); }),
            "M: line 1: the path 'a\\nb/../c' has a '..' component (a manifest names files beneath its cache "
            "only)");
  // Names that merely look odd are names: dots inside a component, a newline, a backslash.
  const auto fine = parse_sums(hex + "  ..a/b..\n\\" + hex + "  new\\nline\n" + hex + "  a/...\n", "M");
  ASSERT_EQ(fine.size(), 3u);
  EXPECT_EQ(fine[1].path, "new\nline");
}

TEST(ManifestTest, APairNamingAFileOutOfTheCacheIsNoManifest) {
  TempDir dir;
  Manifest m = sample();
  m.files.push_back({"../outside.txt", sha256_hex("outside")});
  std::filesystem::create_directories(dir / "cache");
  write_manifest(dir / "cache", m);  // a hand edit that kept the JSON in step
  std::string why;
  EXPECT_FALSE(read_manifest(dir / "cache", &why));
  EXPECT_EQ(why, dir / "cache/MANIFEST.sha256" +
                     ": line 3: the path '../outside.txt' has a '..' component (a manifest names files "
                     "beneath its cache only)");
}

// The manifest files themselves: a regular file of the cache folder, not a link out of it, and
// a FIFO in their place is refused at once (a plain open would wait for a writer for ever).
TEST(ManifestTest, ReadsItsOwnFilesFromInsideTheCacheOnly) {
  for (const char* method : {"auto", "walk"}) {
    ScopedVariable v("FEEDBENCH_OPEN_BENEATH", method);
    TempDir dir;
    std::filesystem::create_directories(dir / "elsewhere");
    write_manifest(dir / "elsewhere", sample());
    std::filesystem::create_directories(dir / "cache");
    for (const char* name : {kManifestJsonName, kManifestSumsName})
      std::filesystem::create_symlink(dir / ("elsewhere/" + std::string(name)),
                                      dir / ("cache/" + std::string(name)));
    std::string why;
    EXPECT_FALSE(read_manifest(dir / "cache", &why)) << method;
    EXPECT_EQ(why, dir / "cache/feedbench-manifest.json" +
                       " is a symbolic link: a manifest is read from inside its cache, never through a link");

    // The cache folder itself may be reached through a link: it is the folder named.
    std::filesystem::create_directory_symlink(dir / "elsewhere", dir / "alias");
    EXPECT_TRUE(read_manifest(dir / "alias", &why)) << why;

    std::filesystem::remove(dir / "elsewhere/MANIFEST.sha256");
    ASSERT_EQ(::mkfifo((dir / "elsewhere/MANIFEST.sha256").c_str(), 0600), 0);
    EXPECT_FALSE(read_manifest(dir / "elsewhere", &why));
    EXPECT_EQ(why, dir / "elsewhere/MANIFEST.sha256" + " is a FIFO, not a regular file");
  }
}

TEST(ManifestTest, WriteThenReadRoundTrips) {
  TempDir dir;
  Manifest m = sample();
  write_manifest(dir.path(), m);
  auto j = nlohmann::json::parse(read_file(dir / kManifestJsonName));
  EXPECT_EQ(j["schema"], "feedbench-manifest/1");
  EXPECT_EQ(j["files"], 2);
  EXPECT_EQ(j["label"], "v1");
  EXPECT_EQ(j["include"][0], "validation/**");
  std::string why;
  auto back = read_manifest(dir.path(), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->source_fingerprint, m.source_fingerprint);
  EXPECT_EQ(back->total_bytes, 6u);
  ASSERT_EQ(back->files.size(), 2u);
  EXPECT_EQ(back->files[1].path, "validation/b c.bin");
  // No temporary names left behind.
  for (auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().extension(), e.path().filename() == kManifestSumsName ? ".sha256" : ".json");
}

TEST(ManifestTest, ParsesAPairFromText) {
  Manifest m = sample();
  std::string why;
  auto back = parse_manifest(m.to_json().dump(2), m.sums_text(), "m.json", "m.sha256", &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->label, "v1");
  ASSERT_EQ(back->files.size(), 2u);
  EXPECT_EQ(back->files[0].path, "validation/a.bin");

  // The reason names the file it is about, as read_manifest's does.
  EXPECT_FALSE(parse_manifest(m.to_json().dump(), "", "m.json", "m.sha256", &why));
  EXPECT_NE(why.find("m.sha256 does not match m.json"), std::string::npos) << why;
  EXPECT_FALSE(parse_manifest("[1]", m.sums_text(), "m.json", "m.sha256", &why));
  EXPECT_NE(why.find("m.json is not valid JSON"), std::string::npos) << why;
}

// A count or size that is a float past uint64's range, or negative, is refused by name: it was
// cast (undefined behaviour) before.
TEST(ManifestTest, ACountThatIsNotANonNegativeIntegerIsRefusedByPointer) {
  const Manifest m = sample();
  for (const auto& [pointer, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"/total_bytes", 6.47528e+84}, {"/files", -1}, {"/files", 2.5}, {"/hot_set/seed", "7"}}) {
    nlohmann::json j = m.to_json();
    if (pointer == "/hot_set/seed") j["hot_set"] = {{"share", "10%"}, {"seed", 7}, {"of", {"a"}}};
    j[nlohmann::json::json_pointer(pointer)] = value;
    std::string why;
    EXPECT_FALSE(parse_manifest(j.dump(), m.sums_text(), "m.json", "m.sha256", &why)) << pointer;
    EXPECT_NE(why.find("m.json: " + pointer + ": expected a non-negative integer, got " +
                       (value.is_number() ? value.dump() : std::string(value.type_name()))),
              std::string::npos)
        << why;
  }
}

TEST(ManifestTest, IncompleteOrMismatchedIsNotAManifest) {
  TempDir dir;
  std::string why;
  EXPECT_FALSE(read_manifest(dir.path(), &why));
  EXPECT_NE(why.find("missing"), std::string::npos);

  write_manifest(dir.path(), sample());
  // A sums file that no longer belongs to the JSON (e.g. a stage interrupted between the two).
  write_file(dir / kManifestSumsName, sha256_hex("zzz") + "  other\n");
  EXPECT_FALSE(read_manifest(dir.path(), &why));
  EXPECT_NE(why.find("does not match"), std::string::npos) << why;

  write_manifest(dir.path(), sample());
  remove_manifest(dir.path());
  EXPECT_FALSE(std::filesystem::exists(dir / kManifestJsonName));
  EXPECT_FALSE(std::filesystem::exists(dir / kManifestSumsName));
  remove_manifest(dir.path());  // nothing there: fine

  write_file(dir / kManifestSumsName, "");
  write_file(dir / kManifestJsonName, "{not json");
  EXPECT_FALSE(read_manifest(dir.path(), &why));
  EXPECT_NE(why.find("not valid JSON"), std::string::npos);
}

TEST(ManifestTest, Sha256sumAcceptsIt) {
  if (std::system("command -v sha256sum >/dev/null 2>&1") != 0) GTEST_SKIP() << "no sha256sum";
  TempDir dir;
  write_file(dir / "d/x.bin", "hello");
  write_file(dir / "y", "world");
  Manifest m;
  m.files = {{"d/x.bin", sha256_hex("hello")}, {"y", sha256_hex("world")}};
  write_manifest(dir.path(), m);
  std::string cmd = "cd '" + dir.path() + "' && sha256sum --quiet -c MANIFEST.sha256";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  write_file(dir / "y", "World");
  EXPECT_NE(std::system((cmd + " 2>/dev/null >/dev/null").c_str()), 0);
}

TEST(ManifestTest, UtcTimestampShape) {
  std::string t = utc_timestamp();
  ASSERT_EQ(t.size(), 20u);
  EXPECT_EQ(t[4], '-');
  EXPECT_EQ(t[10], 'T');
  EXPECT_EQ(t.back(), 'Z');
}

}  // namespace
}  // namespace feedbench
