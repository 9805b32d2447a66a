// Every engine reads back exactly the bytes written, buffered and direct, at queue depth 1 and
// 32, including files whose size is not a multiple of the block size.
#include "feedbench/io/engine.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <cstring>
#include <random>
#include <stdexcept>

#include "feedbench/base/error.h"
#include "test_util.h"

namespace feedbench {
namespace {

using testing::TempDir;

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = char(rng() & 0xff);
  return s;
}

// Makes an engine; a refusal by the system (io_uring in a sandbox) skips the test.
#define MAKE_ENGINE_OR_SKIP(var, name, options)            \
  std::unique_ptr<Engine> var;                             \
  try {                                                    \
    var = make_engine(name, options);                      \
  } catch (const RunError& e) {                            \
    GTEST_SKIP() << name << " refused here: " << e.what(); \
  }

// RETURNS: the engine, or null (said on stdout) where the system refuses it (io_uring in a sandbox).
std::unique_ptr<Engine> engine_or_skip(const char* name, const EngineOptions& options) {
  try {
    return make_engine(name, options);
  } catch (const RunError& e) {
    std::printf("skipping %s: %s\n", name, e.what());
    return nullptr;
  }
}

// Reads the whole file through `engine` in block_size pieces with up to queue_depth reads in
// flight, out of order as the engine completes them. RETURNS: the bytes.
std::string read_back(Engine& engine, const std::string& path, std::size_t size) {
  const std::size_t bs = engine.options().block_size;
  const unsigned qd = engine.queue_depth();
  std::string out(size, '\0');
  FileHandle fh = engine.open(path);
  std::vector<std::uint64_t> slot_offset(qd);
  std::vector<std::uint32_t> free_slots;
  for (unsigned s = 0; s < qd; ++s) free_slots.push_back(s);
  std::vector<Completion> done(qd);
  std::uint64_t next = 0, completed_bytes = 0;
  unsigned in_flight = 0;
  // At least one read, so an empty file is read (and returns 0) too.
  const std::uint64_t reads = std::max<std::uint64_t>(1, (size + bs - 1) / bs);
  std::uint64_t submitted = 0, reaped = 0;
  while (reaped < reads) {
    std::vector<ReadOp> ops;
    while (submitted < reads && !free_slots.empty()) {
      std::uint32_t slot = free_slots.back();
      free_slots.pop_back();
      slot_offset[slot] = next;
      ops.push_back(ReadOp{fh, slot, std::uint32_t(bs), next});
      next += bs;
      ++submitted;
    }
    engine.submit(ops);
    in_flight += unsigned(ops.size());
    std::size_t n = engine.reap(done, 1);
    EXPECT_GE(n, 1u);
    for (std::size_t i = 0; i < n; ++i) {
      const Completion& c = done[i];
      EXPECT_GE(c.result, 0) << std::strerror(int(-c.result));
      const std::uint64_t off = slot_offset[c.slot];
      const std::uint64_t want = off >= size ? 0 : std::min<std::uint64_t>(bs, size - off);
      EXPECT_EQ(std::uint64_t(c.result), want) << "at offset " << off;
      if (c.result > 0) std::memcpy(out.data() + off, engine.buffer(c.slot), std::size_t(c.result));
      completed_bytes += std::uint64_t(std::max<std::int64_t>(0, c.result));
      free_slots.push_back(c.slot);
      --in_flight;
      ++reaped;
    }
  }
  EXPECT_EQ(in_flight, 0u);
  EXPECT_EQ(completed_bytes, size);
  engine.close(fh);
  return out;
}

struct EngineCase {
  const char* engine;
  bool direct;
  unsigned queue_depth;
};

class EngineReadBack : public ::testing::TestWithParam<EngineCase> {};

TEST_P(EngineReadBack, ReadsExactlyTheBytesWritten) {
  const EngineCase& p = GetParam();
  TempDir dir;
  const std::vector<std::size_t> sizes = {0, 1, 4095, 4096, 12288, 100001, 300000};
  for (std::size_t bs : {std::size_t(4096), std::size_t(65536)}) {
    EngineOptions options;
    options.direct = p.direct;
    options.queue_depth = p.queue_depth;
    options.block_size = bs;
    MAKE_ENGINE_OR_SKIP(engine, p.engine, options);
    EXPECT_EQ(engine->name(), p.engine);
    EXPECT_EQ(engine->queue_depth(), p.queue_depth);
    for (unsigned s = 0; s < p.queue_depth; ++s)
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(engine->buffer(s)) % 4096, 0u);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const std::string path = dir / ("f" + std::to_string(i) + ".bin");
      const std::string content = random_bytes(sizes[i], unsigned(i + 7));
      testing::write_file(path, content);
      std::string got;
      try {
        got = read_back(*engine, path, sizes[i]);
      } catch (const RunError& e) {
        if (p.direct && std::string(e.what()).find("O_DIRECT not supported") != std::string::npos)
          GTEST_SKIP() << e.what();
        throw;
      }
      ASSERT_EQ(got.size(), content.size());
      EXPECT_TRUE(got == content) << p.engine << " bs " << bs << " size " << sizes[i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllEngines, EngineReadBack,
                         ::testing::Values(EngineCase{"psync", false, 1}, EngineCase{"psync", true, 1},
                                           EngineCase{"mmap", false, 1}, EngineCase{"mmap", false, 4},
                                           EngineCase{"libaio", true, 1}, EngineCase{"libaio", true, 32},
                                           EngineCase{"io_uring", false, 1},
                                           EngineCase{"io_uring", false, 32}, EngineCase{"io_uring", true, 1},
                                           EngineCase{"io_uring", true, 32}),
                         [](const auto& info) {
                           return std::string(info.param.engine) +
                                  (info.param.direct ? "_direct" : "_buffered") + "_qd" +
                                  std::to_string(info.param.queue_depth);
                         });

TEST(EngineTest, NamesListsEveryEngine) {
  EXPECT_EQ(engine_names(), (std::vector<std::string>{"psync", "mmap", "libaio", "io_uring"}));
}

TEST(EngineTest, PsyncRejectsQueueDepthAboveOne) {
  EngineOptions options;
  options.queue_depth = 2;
  try {
    make_engine("psync", options);
    FAIL() << "psync accepted queue_depth 2";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("queue_depth"), std::string::npos) << e.what();
  }
}

TEST(EngineTest, MmapRejectsDirect) {
  EngineOptions options;
  options.direct = true;
  EXPECT_THROW(make_engine("mmap", options), InputError);
}

TEST(EngineTest, UnknownEngineAndBadOptionsAreInputErrors) {
  EXPECT_THROW(make_engine("posixaio", EngineOptions{}), InputError);
  EngineOptions zero;
  zero.queue_depth = 0;
  EXPECT_THROW(make_engine("libaio", zero), InputError);
  EngineOptions odd;
  odd.block_size = 1000;
  EXPECT_THROW(make_engine("libaio", odd), InputError);  // O_DIRECT needs 512-byte multiples
}

TEST(EngineTest, MissingFileIsRunErrorNamingThePath) {
  TempDir dir;
  for (const auto& name : engine_names()) {
    EngineOptions options;
    std::unique_ptr<Engine> engine;
    try {
      engine = make_engine(name, options);
    } catch (const RunError&) {
      continue;  // io_uring refused here
    }
    try {
      engine->open(dir / "missing.bin");
      ADD_FAILURE() << name << " opened a missing file";
    } catch (const RunError& e) {
      EXPECT_NE(std::string(e.what()).find("missing.bin"), std::string::npos) << e.what();
    }
  }
}

TEST(EngineTest, DeepQueueCompletesEveryRead) {
  TempDir dir;
  const std::string path = dir / "data.bin";
  const std::size_t size = 64 * 4096;
  testing::write_file(path, random_bytes(size, 3));
  for (const char* name : {"libaio", "io_uring"}) {
    EngineOptions options;
    options.queue_depth = 32;
    options.direct = true;
    const std::unique_ptr<Engine> engine = engine_or_skip(name, options);
    if (!engine) continue;
    FileHandle fh = engine->open(path);
    // Fill every slot at once, then reap them all: each slot completes exactly once.
    std::vector<ReadOp> ops;
    for (std::uint32_t s = 0; s < 32; ++s) ops.push_back(ReadOp{fh, s, 4096, std::uint64_t(s) * 8192});
    engine->submit(ops);
    std::vector<Completion> done(32);
    std::vector<int> seen(32, 0);
    std::size_t total = 0;
    while (total < 32) {
      std::size_t n = engine->reap(std::span<Completion>(done.data() + total, 32 - total), 1);
      ASSERT_GE(n, 1u);
      total += n;
    }
    for (const Completion& c : done) {
      EXPECT_EQ(c.result, 4096) << name;
      ++seen[c.slot];
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 32) << name;
    EXPECT_EQ(engine->reap(done, 0), 0u) << name << ": nothing left";
    engine->close(fh);
  }
}

// Writes from the caller's memory (a checkpoint's blocks): every writing engine puts exactly
// the bytes at their offsets, up to queue_depth in flight, with no slot buffers of its own; mmap
// has no write and says so.
TEST(EngineTest, WritesFromTheCallersMemory) {
  TempDir dir;
  const std::size_t block = 4096, blocks = 16;
  const std::string bytes = random_bytes(block * blocks, 7);
  AlignedBuffer source(bytes.size(), 4096);  // O_DIRECT needs aligned memory
  std::memcpy(source.get(), bytes.data(), bytes.size());
  for (const char* name : {"psync", "libaio", "io_uring"}) {
    EngineOptions options;
    options.queue_depth = std::string(name) == "psync" ? 1 : 4;
    options.direct = std::string(name) == "libaio";
    options.block_size = block;
    options.slot_buffers = false;
    const std::unique_ptr<Engine> engine = engine_or_skip(name, options);
    if (!engine) continue;
    const std::string path = dir / (std::string(name) + ".bin");
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | (options.direct ? O_DIRECT : 0), 0644);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    std::vector<Completion> done(options.queue_depth);
    std::size_t next = 0, completed = 0;
    unsigned in_flight = 0;
    std::vector<std::uint32_t> free_slots;
    for (std::uint32_t s = 0; s < options.queue_depth; ++s) free_slots.push_back(s);
    while (completed < blocks) {
      std::vector<WriteOp> ops;
      for (; next < blocks && !free_slots.empty(); ++next) {
        ops.push_back(
            WriteOp{fd, free_slots.back(), std::uint32_t(block), next * block, source.get() + next * block});
        free_slots.pop_back();
      }
      in_flight += unsigned(ops.size());
      EXPECT_LE(in_flight, options.queue_depth) << name;
      engine->submit_writes(ops);
      const std::size_t n = engine->reap(done, 1);
      ASSERT_GE(n, 1u) << name;
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(done[i].result, std::int64_t(block)) << name << ": " << std::strerror(int(-done[i].result));
        free_slots.push_back(done[i].slot);
      }
      in_flight -= unsigned(n);
      completed += n;
    }
    ::close(fd);
    EXPECT_EQ(testing::read_file(path), bytes) << name;
  }
  EngineOptions plain;
  plain.slot_buffers = false;
  auto mmap = make_engine("mmap", plain);
  EXPECT_THROW(mmap->submit_writes({}), std::logic_error);
}

// A file truncated after the mapping was made: the pages past the new end raise SIGBUS on
// access. The engine must hand back a short read (what was still there), never die.
TEST(EngineTest, MmapFileTruncatedAfterOpenReadsShortWithoutSigbus) {
  TempDir dir;
  const std::string path = dir / "shrinks.bin";
  const std::string data = random_bytes(64 * 1024, 9);
  testing::write_file(path, data);
  EngineOptions options;
  options.block_size = 16384;
  auto engine = make_engine("mmap", options);
  FileHandle fh = engine->open(path);
  ASSERT_EQ(::truncate(path.c_str(), 8192), 0);
  Completion c;
  // Wholly past the new end: nothing to read.
  engine->submit(std::vector<ReadOp>{ReadOp{fh, 0, 16384, 16384}});
  ASSERT_EQ(engine->reap(std::span<Completion>(&c, 1), 1), 1u);
  EXPECT_EQ(c.result, 0);
  // Straddling the new end: the bytes before it, and they are the file's.
  engine->submit(std::vector<ReadOp>{ReadOp{fh, 0, 16384, 4096}});
  ASSERT_EQ(engine->reap(std::span<Completion>(&c, 1), 1), 1u);
  EXPECT_EQ(c.result, 4096);
  EXPECT_EQ(std::memcmp(engine->buffer(0), data.data() + 4096, 4096), 0);
  // Before it: whole.
  engine->submit(std::vector<ReadOp>{ReadOp{fh, 0, 8192, 0}});
  ASSERT_EQ(engine->reap(std::span<Completion>(&c, 1), 1), 1u);
  EXPECT_EQ(c.result, 8192);
  engine->close(fh);
}

// A file truncated before the mapping is made: the mapping covers what is there now.
TEST(EngineTest, MmapMapsTheFileAsItIsWhenOpened) {
  TempDir dir;
  const std::string path = dir / "empty-now.bin";
  testing::write_file(path, random_bytes(32768, 4));
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  auto engine = make_engine("mmap", EngineOptions{});
  FileHandle fh = engine->open(path);
  Completion c;
  engine->submit(std::vector<ReadOp>{ReadOp{fh, 0, 4096, 0}});
  ASSERT_EQ(engine->reap(std::span<Completion>(&c, 1), 1), 1u);
  EXPECT_EQ(c.result, 0);
  engine->close(fh);
}

// Every engine opens with O_NOATIME where the kernel allows it (the owner, or CAP_FOWNER), so
// a benchmark leaves access times, which tiering and cleanup tools rely on, as they were.
TEST(EngineTest, OpensWithNoatimeAndLeavesTheAccessTime) {
  TempDir dir;
  const std::string path = dir / "atime.bin";
  testing::write_file(path, random_bytes(8192, 5));
  // An access time older than the modification time: relatime would update it on a read.
  timespec times[2] = {{1000000, 0}, {0, UTIME_OMIT}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  for (const auto& name : engine_names()) {
    EngineOptions options;
    options.direct = name == "libaio";
    std::unique_ptr<Engine> engine;
    try {
      engine = make_engine(name, options);
    } catch (const RunError&) {
      continue;  // io_uring refused here
    }
    FileHandle fh;
    try {
      fh = engine->open(path);
    } catch (const RunError& e) {
      std::printf("skipping %s: %s\n", name.c_str(), e.what());  // O_DIRECT refused here
      continue;
    }
    Completion c;
    engine->submit(std::vector<ReadOp>{ReadOp{fh, 0, 4096, 0}});
    ASSERT_EQ(engine->reap(std::span<Completion>(&c, 1), 1), 1u) << name;
    EXPECT_EQ(c.result, 4096) << name;
    engine->close(fh);
    EXPECT_EQ(engine->open_counts().noatime, 1u) << name;
    EXPECT_EQ(engine->open_counts().plain, 0u) << name;
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_atim.tv_sec, 1000000) << name << " changed the access time";
  }
}

// Where the kernel refuses O_NOATIME (EPERM: not the owner), the engine opens without it and
// counts the open as plain. Checked in a child that gives up root, on a file root owns.
TEST(EngineTest, FallsBackWithoutNoatimeWhereTheKernelRefusesIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create a file another user cannot own";
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  const std::string path = dir / "theirs.bin";
  testing::write_file(path, random_bytes(4096, 6));
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) std::_Exit(3);
        auto engine = make_engine("psync", EngineOptions{});
        engine->close(engine->open(path));
        engine->close(engine->open(path));
        const auto counts = engine->open_counts();
        std::_Exit(counts.plain == 2 && counts.noatime == 0 ? 0 : 4);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(EngineTest, DirectOnTmpfsIsRunErrorNamingTheFileSystem) {
  struct statfs s {};
  if (::statfs("/dev/shm", &s) != 0 || s.f_type != 0x01021994) GTEST_SKIP() << "no tmpfs at /dev/shm";
  char tmpl[] = "/dev/shm/feedbench-engine-XXXXXX";
  int fd = ::mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  ::close(fd);
  EngineOptions options;
  options.direct = true;
  auto engine = make_engine("psync", options);
  try {
    FileHandle fh = engine->open(tmpl);
    engine->close(fh);
    ::unlink(tmpl);
    GTEST_SKIP() << "this kernel's tmpfs accepts O_DIRECT (Linux 6.6+)";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("O_DIRECT not supported by tmpfs at"), std::string::npos)
        << e.what();
  }
  ::unlink(tmpl);
}

}  // namespace
}  // namespace feedbench
