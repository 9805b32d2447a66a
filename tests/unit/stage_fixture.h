// A small source for the tests of staging and of its phases: three files (one of 300000 bytes,
// two of three), two of them under val/, and a cache folder beside it that does not exist yet.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "feedbench/cache/stager.h"
#include "test_util.h"

namespace feedbench::testing {

struct StageFixture {
  TempDir dir;
  std::string src = dir / "src";
  std::string cache = dir / "cache";
  StageFixture() {
    write_file(src + "/val/a.bin", std::string(300000, 'a'));
    write_file(src + "/val/sub/b.bin", "bee");
    write_file(src + "/train/c.bin", "sea");
  }
  // RETURNS: options staging `include` of src into cache with 2 workers, quietly.
  StageOptions options(std::vector<std::string> include = {}) const {
    StageOptions o;
    o.source_root = src;
    o.cache_root = cache;
    o.include = std::move(include);
    o.workers = 2;
    o.quiet = true;
    return o;
  }
  // Stages every file, then changes the source under the cache: val/sub/b.bin rewritten,
  // train/c.bin removed, new.bin added (a resume then keeps 1 file, copies 2, removes 1).
  // RETURNS: the stage's exit code.
  int stage_then_change_source() const {
    const int code = stage(options()).exit_code();
    write_file(src + "/val/sub/b.bin", "bee, changed");
    std::filesystem::remove(src + "/train/c.bin");
    write_file(src + "/new.bin", "new");
    return code;
  }
};

}  // namespace feedbench::testing
