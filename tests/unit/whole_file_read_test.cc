// Whole-file reads (Engine::submit_whole_files): io_uring's open -> read -> close chain hands
// back one completion per file, says which step kept a file from being read whole, never
// hangs on a FIFO and never leaves a file behind in a descriptor slot.
#include "feedbench/io/engine.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <stdexcept>
#include <thread>

#include "feedbench/base/error.h"
#include "test_util.h"

namespace feedbench {
namespace {

using testing::TempDir;

constexpr std::size_t kBlock = 4096;

std::string pattern(std::size_t n, char seed) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = char(seed + i % 23);
  return s;
}

// An io_uring engine that reads whole files, or a skip saying why there is none here.
#define CHAIN_ENGINE_OR_SKIP(var, options)                 \
  std::unique_ptr<Engine> var;                             \
  try {                                                    \
    var = make_engine("io_uring", options);                \
  } catch (const RunError& e) {                            \
    GTEST_SKIP() << "io_uring refused here: " << e.what(); \
  }                                                        \
  if (!var->reads_whole_files()) GTEST_SKIP() << "no direct open/close in this kernel"

EngineOptions options(unsigned qd, bool direct = false) {
  EngineOptions o;
  o.queue_depth = qd;
  o.block_size = kBlock;
  o.direct = direct;
  return o;
}

// Reads one file whole through slot `slot`. RETURNS: its completion.
Completion read_whole(Engine& engine, const std::string& path, std::uint32_t expect, std::uint32_t slot = 0) {
  const WholeFileRead r{path, slot, expect};
  engine.submit_whole_files(std::span<const WholeFileRead>(&r, 1));
  Completion c;
  EXPECT_EQ(engine.reap(std::span<Completion>(&c, 1), 1), 1u);
  EXPECT_EQ(c.slot, slot);
  return c;
}

// The same, on a thread: RETURNS: nullopt when it took longer than `limit` (the thread is then
// left behind, blocked, and the test fails).
std::optional<Completion> read_whole_within(Engine& engine, const std::string& path, std::uint32_t expect,
                                            std::chrono::seconds limit) {
  // REQUIRES: on nullopt the caller leaks `engine` (the blocked thread still uses it).
  auto done = std::make_shared<std::promise<Completion>>();
  std::future<Completion> f = done->get_future();
  std::thread([&engine, path, expect, done] { done->set_value(read_whole(engine, path, expect)); }).detach();
  if (f.wait_for(limit) != std::future_status::ready) return std::nullopt;
  return f.get();
}

// Reads `path` whole while `holder` (closed afterwards) keeps it waiting for input: the read
// ends within 10 s, cancelled by the engine's watchdog. On a hang `engine` is leaked (the
// blocked thread still uses it).
void expect_read_cancelled(std::unique_ptr<Engine>& engine, const std::string& path, int holder,
                           const char* what) {
  const auto c = read_whole_within(*engine, path, 100, std::chrono::seconds(10));
  if (!c) (void)engine.release();
  ::close(holder);
  ASSERT_TRUE(c) << "the chain hung on " << what;
  EXPECT_EQ(c->failed_step, ChainStep::read);
  EXPECT_EQ(c->result, -ECANCELED);
}

// Keeps every one of `engine`'s `slots` busy with whole-file reads of files 0..files-1 (file i
// at `path_of(i)`, `expect_of(i)` bytes) until each has come back, and hands each completion to
// `check(file, completion)` with the file its slot held (-1: the slot held none). A fatal
// failure (in `check` too) stops the loop.
void read_every_file(Engine& engine, unsigned slots, int files,
                     const std::function<std::string(int)>& path_of,
                     const std::function<std::uint32_t(int)>& expect_of,
                     const std::function<void(int, const Completion&)>& check) {
  std::vector<int> slot_file(slots, -1);
  std::vector<std::string> paths(slots);  // each in flight's path, alive until it completes
  std::vector<std::uint32_t> free_slots;
  for (unsigned s = 0; s < slots; ++s) free_slots.push_back(s);
  int next = 0, done = 0;
  while (done < files) {
    while (next < files && !free_slots.empty()) {
      const std::uint32_t slot = free_slots.back();
      free_slots.pop_back();
      slot_file[slot] = next;
      paths[slot] = path_of(next);
      const WholeFileRead r{paths[slot], slot, expect_of(next)};
      engine.submit_whole_files(std::span<const WholeFileRead>(&r, 1));
      ++next;
    }
    std::vector<Completion> c(slots);
    const std::size_t got = engine.reap(std::span<Completion>(c), 1);
    ASSERT_GE(got, 1u);
    for (std::size_t i = 0; i < got; ++i) {
      ASSERT_LT(c[i].slot, slots);
      check(slot_file[c[i].slot], c[i]);
      if (::testing::Test::HasFatalFailure()) return;
      slot_file[c[i].slot] = -1;
      free_slots.push_back(c[i].slot);
      ++done;
    }
  }
}

int open_fds() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// RETURNS: the paths of the files every io_uring of this process holds in its registered file
// table (the kernel lists them in the ring's fdinfo, after "UserFiles:").
std::vector<std::string> files_held_by_rings() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fdinfo")) {
    std::ifstream in(e.path());
    std::string line;
    bool in_files = false;
    while (std::getline(in, line)) {
      if (line.starts_with("UserFiles:")) {
        in_files = true;
      } else if (in_files) {
        const auto colon = line.find(": ");
        if (colon == std::string::npos || line.find_first_not_of(" 0123456789") != colon) break;
        out.push_back(line.substr(colon + 2));
      }
    }
  }
  return out;
}

TEST(WholeFileReadTest, ASmallFileIsReadWholeInOneCompletion) {
  CHAIN_ENGINE_OR_SKIP(engine, options(4));
  TempDir dir;
  const std::string content = pattern(1000, 'a');
  testing::write_file(dir / "f", content);
  const auto before = engine->open_counts();
  const Completion c = read_whole(*engine, dir / "f", 1000, 2);
  EXPECT_EQ(c.failed_step, ChainStep::none);
  EXPECT_EQ(c.result, 1000);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(engine->buffer(2)), 1000), content);
  // Counted as open() counts it: the owner may use O_NOATIME.
  EXPECT_EQ(engine->open_counts().noatime, before.noatime + 1);
  EXPECT_EQ(engine->open_counts().plain, before.plain);
}

TEST(WholeFileReadTest, APathRelativeToAnOpenDirectory) {
  CHAIN_ENGINE_OR_SKIP(engine, options(2));
  TempDir dir;
  const std::string content = pattern(700, 'r');
  testing::write_file(dir / "sub/f", content);
  const int root = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(root, 0);
  const WholeFileRead r{"sub/f", 1, 700, root};
  engine->submit_whole_files(std::span<const WholeFileRead>(&r, 1));
  Completion c;
  ASSERT_EQ(engine->reap(std::span<Completion>(&c, 1), 1), 1u);
  EXPECT_EQ(c.failed_step, ChainStep::none);
  EXPECT_EQ(c.result, 700);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(engine->buffer(1)), 700), content);
  // Relative to the directory, not to the working directory.
  const WholeFileRead missing{"sub/g", 1, 700, root};
  engine->submit_whole_files(std::span<const WholeFileRead>(&missing, 1));
  ASSERT_EQ(engine->reap(std::span<Completion>(&c, 1), 1), 1u);
  EXPECT_EQ(c.failed_step, ChainStep::open);
  EXPECT_EQ(c.result, -ENOENT);
  ::close(root);
}

TEST(WholeFileReadTest, AFileOfExactlyTheBlockSizeIsWhole) {
  CHAIN_ENGINE_OR_SKIP(engine, options(1));
  TempDir dir;
  const std::string content = pattern(kBlock, 'k');
  testing::write_file(dir / "f", content);
  const Completion c = read_whole(*engine, dir / "f", kBlock);
  EXPECT_EQ(c.failed_step, ChainStep::none);
  EXPECT_EQ(c.result, std::int64_t(kBlock));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(engine->buffer(0)), kBlock), content);
}

TEST(WholeFileReadTest, AShortReadIsNotWholeAndCountsNoOpen) {
  CHAIN_ENGINE_OR_SKIP(engine, options(1));
  TempDir dir;
  testing::write_file(dir / "f", pattern(1000, 's'));  // the scan saw 3000 bytes
  const auto before = engine->open_counts();
  const Completion c = read_whole(*engine, dir / "f", 3000);
  EXPECT_EQ(c.failed_step, ChainStep::read);
  EXPECT_EQ(c.result, 1000);
  // The caller reads it again through open(), which counts that open: this one is not counted.
  EXPECT_EQ(engine->open_counts().noatime + engine->open_counts().plain, before.noatime + before.plain);
}

TEST(WholeFileReadTest, AFileLargerThanABlockReadsOneBlockAndIsNotWhole) {
  CHAIN_ENGINE_OR_SKIP(engine, options(1));
  TempDir dir;
  testing::write_file(dir / "f", pattern(3 * kBlock + 5, 'g'));  // grew from 3000 since the scan
  const Completion c = read_whole(*engine, dir / "f", 3000);
  EXPECT_EQ(c.failed_step, ChainStep::read);
  EXPECT_EQ(c.result, std::int64_t(kBlock));
}

TEST(WholeFileReadTest, AMissingFileFailsAtTheOpenWithEnoent) {
  CHAIN_ENGINE_OR_SKIP(engine, options(2));
  TempDir dir;
  const Completion c = read_whole(*engine, dir / "gone", 100, 1);
  EXPECT_EQ(c.failed_step, ChainStep::open);
  EXPECT_EQ(c.result, -ENOENT);
}

TEST(WholeFileReadTest, ADirectoryFailsAtTheRead) {
  CHAIN_ENGINE_OR_SKIP(engine, options(1));
  TempDir dir;
  std::filesystem::create_directories(dir / "sub");
  const Completion c = read_whole(*engine, dir / "sub", 100);
  EXPECT_EQ(c.failed_step, ChainStep::read);
  EXPECT_EQ(c.result, -EISDIR);
}

TEST(WholeFileReadTest, AFifoWithoutAWriterDoesNotHangAndIsNotWhole) {
  CHAIN_ENGINE_OR_SKIP(engine, options(1));
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  const auto c = read_whole_within(*engine, dir / "fifo", 100, std::chrono::seconds(10));
  if (!c) (void)engine.release();  // still in use by the blocked thread
  ASSERT_TRUE(c) << "the chain hung on a FIFO";
  EXPECT_NE(c->failed_step, ChainStep::none);
}

TEST(WholeFileReadTest, AFifoWithAnIdleWriterDoesNotHangAndIsNotWhole) {
  CHAIN_ENGINE_OR_SKIP(engine, options(1));
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  // A writer that never writes: a blocking read would wait for it for ever.
  const int writer = ::open((dir / "fifo").c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(writer, 0);
  // io_uring polls a pipe for data rather than fail with EAGAIN: the engine's watchdog cancels the read.
  expect_read_cancelled(engine, dir / "fifo", writer, "a FIFO with a writer");
}

// Not only a FIFO waits for a writer: a terminal with nothing typed does too, and the same
// watchdog ends its read.
TEST(WholeFileReadTest, ATerminalWithNoInputDoesNotHangAndIsNotWhole) {
  CHAIN_ENGINE_OR_SKIP(engine, options(1));
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0)
    GTEST_SKIP() << "no pseudo-terminal here";
  const std::string terminal = ::ptsname(master);
  expect_read_cancelled(engine, terminal, master, "a terminal");
}

// A FIFO stuck in one slot does not stop the others: every other file is read whole while it
// waits, and the engine's watchdog cancels its read no sooner than 2 s after it was sent.
TEST(WholeFileReadTest, AFifoStuckInOneSlotIsCancelledWhileTheOtherSlotsReadOn) {
  constexpr unsigned kQd = 4;
  CHAIN_ENGINE_OR_SKIP(engine, options(kQd));
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  const int writer = ::open((dir / "fifo").c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(writer, 0);
  constexpr int kFiles = 200;  // file 0 is the FIFO
  for (int i = 1; i < kFiles; ++i) testing::write_file(dir / std::to_string(i), pattern(100 + i, 'a'));
  const std::string root = dir.path();
  auto path_of = [root](int f) { return root + "/" + (f == 0 ? std::string("fifo") : std::to_string(f)); };
  // Shared with the reading thread, which outlives the test if the chain hangs.
  struct Seen {
    std::vector<int> order;
    Completion fifo{};
    std::chrono::steady_clock::duration fifo_after{};
  };
  auto seen = std::make_shared<Seen>();
  const auto start = std::chrono::steady_clock::now();
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([e = engine.get(), path_of, seen, start, done] {
    read_every_file(
        *e, kQd, kFiles, path_of, [](int f) { return std::uint32_t(100 + f); },
        [&](int f, const Completion& c) {
          seen->order.push_back(f);
          if (f == 0) {
            seen->fifo = c;
            seen->fifo_after = std::chrono::steady_clock::now() - start;
          } else {
            ASSERT_EQ(c.failed_step, ChainStep::none) << "file " << f << ": " << c.result;
          }
        });
    done->set_value();
  }).detach();
  const bool in_time = finished.wait_for(std::chrono::seconds(15)) == std::future_status::ready;
  ::close(writer);
  if (!in_time) (void)engine.release();  // still in use by the blocked thread
  ASSERT_TRUE(in_time) << "the chain hung on a FIFO with a writer";
  ASSERT_EQ(seen->order.size(), std::size_t(kFiles));
  EXPECT_EQ(seen->order.back(), 0) << "the other slots read every other file while the FIFO waited";
  EXPECT_EQ(seen->fifo.failed_step, ChainStep::read);
  EXPECT_EQ(seen->fifo.result, -ECANCELED);
  EXPECT_GE(seen->fifo_after, std::chrono::milliseconds(1900)) << "a read is cancelled only after 2 s";
  // The engine goes on: the watchdog's own completions are never taken for a file's.
  const std::string after = dir / "after";
  testing::write_file(after, pattern(300, 'z'));
  const Completion c = read_whole(*engine, after, 300);
  EXPECT_EQ(c.failed_step, ChainStep::none);
  EXPECT_EQ(c.result, 300);
}

// The watchdog ticks on after the last chain is in, once: that tick's completion is not a file's.
TEST(WholeFileReadTest, TheWatchdogsTickIsNeverTakenForAFile) {
  CHAIN_ENGINE_OR_SKIP(engine, options(2));
  TempDir dir;
  testing::write_file(dir / "a", pattern(500, 'a'));
  EXPECT_EQ(read_whole(*engine, dir / "a", 500).result, 500);
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));  // past the tick the read armed
  Completion extra[2];
  EXPECT_EQ(engine->reap(std::span<Completion>(extra, 2), 0), 0u);
  const Completion c = read_whole(*engine, dir / "a", 500, 1);
  EXPECT_EQ(c.failed_step, ChainStep::none);
  EXPECT_EQ(c.result, 500);
  EXPECT_EQ(engine->reap(std::span<Completion>(extra, 2), 0), 0u);
}

TEST(WholeFileReadTest, ManyMoreFilesThanSlotsReuseTheSlots) {
  constexpr unsigned kQd = 4;
  CHAIN_ENGINE_OR_SKIP(engine, options(kQd));
  TempDir dir;
  constexpr int kFiles = 200;
  for (int i = 0; i < kFiles; ++i)
    testing::write_file(dir / std::to_string(i), pattern(100 + i, char('a' + i % 20)));
  const int fds = open_fds();
  read_every_file(
      *engine, kQd, kFiles, [&](int f) { return dir / std::to_string(f); },
      [](int f) { return std::uint32_t(100 + f); },
      [&](int f, const Completion& c) {
        ASSERT_EQ(c.failed_step, ChainStep::none) << "file " << f << ": " << c.result;
        ASSERT_EQ(c.result, 100 + f);
        EXPECT_EQ(std::string(reinterpret_cast<const char*>(engine->buffer(c.slot)), std::size_t(100 + f)),
                  pattern(std::size_t(100 + f), char('a' + f % 20)));
      });
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(open_fds(), fds) << "whole-file reads use no ordinary descriptor";
  for (const std::string& held : files_held_by_rings())
    EXPECT_EQ(held.find(dir.path()), std::string::npos) << held << " is still open in a slot";
  EXPECT_EQ(engine->open_counts().noatime + engine->open_counts().plain, std::uint64_t(kFiles));
}

// Failed and whole files in flight together, every slot busy: each file comes back exactly once,
// with its own slot's result and failed step, and nothing comes back after the last (a step's
// completion counted for the wrong chain would show as a file back twice, or as a completion
// for a slot that holds no file).
TEST(WholeFileReadTest, FailedAndWholeFilesInFlightTogetherComeBackOnceEach) {
  constexpr unsigned kQd = 8;
  CHAIN_ENGINE_OR_SKIP(engine, options(kQd));
  TempDir dir;
  std::filesystem::create_directories(dir / "sub");
  constexpr int kFiles = 120;
  // File i: missing (i % 3 == 1), a directory (i % 5 == 2, when not missing), else 50 + i bytes.
  auto kind = [](int i) {
    return i % 3 == 1 ? ChainStep::open : i % 5 == 2 ? ChainStep::read : ChainStep::none;
  };
  std::vector<std::string> paths(kFiles);
  for (int i = 0; i < kFiles; ++i) {
    paths[i] = kind(i) == ChainStep::open   ? dir / ("gone" + std::to_string(i))
               : kind(i) == ChainStep::read ? dir / "sub"
                                            : dir / std::to_string(i);
    if (kind(i) == ChainStep::none) testing::write_file(paths[i], pattern(50 + i, char('a' + i % 20)));
  }
  std::vector<int> times_back(kFiles, 0);
  read_every_file(
      *engine, kQd, kFiles, [&](int f) { return paths[f]; }, [](int f) { return std::uint32_t(50 + f); },
      [&](int f, const Completion& c) {
        ASSERT_GE(f, 0) << "a completion for slot " << c.slot << ", which holds no file";
        ++times_back[f];
        EXPECT_EQ(c.failed_step, kind(f)) << "file " << f << ": " << c.result;
        if (kind(f) == ChainStep::open) {
          EXPECT_EQ(c.result, -ENOENT) << "file " << f;
        } else if (kind(f) == ChainStep::none) {
          EXPECT_EQ(c.result, 50 + f);
          EXPECT_EQ(std::string(reinterpret_cast<const char*>(engine->buffer(c.slot)), std::size_t(50 + f)),
                    pattern(std::size_t(50 + f), char('a' + f % 20)));
        }
      });
  ASSERT_FALSE(HasFatalFailure());
  for (int f = 0; f < kFiles; ++f) EXPECT_EQ(times_back[f], 1) << "file " << f;
  // Nothing is left to come: one more file through slot 0 is the next and only completion.
  testing::write_file(dir / "last", pattern(33, 'z'));
  const Completion last = read_whole(*engine, dir / "last", 33, 0);
  EXPECT_EQ(last.failed_step, ChainStep::none);
  EXPECT_EQ(last.result, 33);
  Completion extra;
  EXPECT_EQ(engine->reap(std::span<Completion>(&extra, 1), 0), 0u);
  for (const std::string& held : files_held_by_rings())
    EXPECT_EQ(held.find(dir.path()), std::string::npos) << held << " is still open in a slot";
}

// Every way a chain can fail, on every slot, then good files through the same slots: a slot a
// failed chain used reads the next file correctly, and the removed files' space is released
// (nothing keeps them open).
TEST(WholeFileReadTest, SlotsAreReusableAfterEveryKindOfFailure) {
  constexpr unsigned kQd = 3;
  CHAIN_ENGINE_OR_SKIP(engine, options(kQd));
  TempDir dir;
  std::filesystem::create_directories(dir / "sub");
  testing::write_file(dir / "short", pattern(10, 'x'));
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  for (int round = 0; round < 3; ++round) {
    for (std::uint32_t slot = 0; slot < kQd; ++slot) {
      EXPECT_EQ(read_whole(*engine, dir / "gone", 10, slot).failed_step, ChainStep::open);
      EXPECT_EQ(read_whole(*engine, dir / "sub", 10, slot).failed_step, ChainStep::read);
      EXPECT_EQ(read_whole(*engine, dir / "short", 20, slot).failed_step, ChainStep::read);
      EXPECT_NE(read_whole(*engine, dir / "fifo", 20, slot).failed_step, ChainStep::none);
      const std::string good = dir / ("good" + std::to_string(slot));
      testing::write_file(good, pattern(77 + slot, 'g'));
      const Completion c = read_whole(*engine, good, 77 + slot, slot);
      EXPECT_EQ(c.failed_step, ChainStep::none);
      EXPECT_EQ(c.result, 77 + slot);
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(engine->buffer(slot)), 77 + slot),
                pattern(77 + slot, 'g'));
    }
  }
  // Nothing stays in a descriptor slot: not after a short read, a failed read or a FIFO.
  for (const std::string& held : files_held_by_rings())
    EXPECT_EQ(held.find(dir.path()), std::string::npos) << held << " is still open in a slot";
}

TEST(WholeFileReadTest, PlainReadsAndChainsShareOneRing) {
  CHAIN_ENGINE_OR_SKIP(engine, options(4));
  TempDir dir;
  const std::string big = pattern(3 * kBlock, 'b');
  testing::write_file(dir / "big", big);
  testing::write_file(dir / "small", pattern(321, 's'));
  const FileHandle fh = engine->open(dir / "big");
  const ReadOp ops[2] = {{fh, 0, kBlock, 0}, {fh, 1, kBlock, 2 * kBlock}};
  engine->submit(ops);
  const std::string small = dir / "small";
  const WholeFileRead chains[2] = {{small, 2, 321}, {small, 3, 321}};
  engine->submit_whole_files(chains);
  int seen = 0;
  while (seen < 4) {
    Completion c[4];
    const std::size_t got = engine->reap(std::span<Completion>(c, 4), 1);
    for (std::size_t i = 0; i < got; ++i, ++seen) {
      if (c[i].slot < 2) {
        EXPECT_EQ(c[i].result, std::int64_t(kBlock));
        EXPECT_EQ(c[i].failed_step, ChainStep::none);
      } else {
        EXPECT_EQ(c[i].result, 321);
        EXPECT_EQ(c[i].failed_step, ChainStep::none);
      }
    }
  }
  engine->close(fh);
  // The check that no chain leaves a file behind reads the same table: open() leaves its file
  // registered until the entry is reused, so it is seen there.
  bool big_held = false;
  for (const std::string& held : files_held_by_rings()) big_held |= held == dir / "big";
  EXPECT_TRUE(big_held) << "the ring's fdinfo no longer lists registered files";
}

TEST(WholeFileReadTest, DirectChainsReadWholeBlocks) {
  CHAIN_ENGINE_OR_SKIP(engine, options(2, true));
  TempDir dir;
  testing::write_file(dir / "f", pattern(kBlock, 'd'));
  testing::write_file(dir / "g", pattern(1000, 'e'));
  const Completion c = read_whole(*engine, dir / "f", kBlock);
  if (c.failed_step == ChainStep::open && c.result == -EINVAL) GTEST_SKIP() << "no O_DIRECT here";
  EXPECT_EQ(c.failed_step, ChainStep::none);
  EXPECT_EQ(c.result, std::int64_t(kBlock));
  const Completion d =
      read_whole(*engine, dir / "g", 1000, 1);  // a short tail reads short under O_DIRECT too
  EXPECT_EQ(d.failed_step, ChainStep::none);
  EXPECT_EQ(d.result, 1000);
}

TEST(WholeFileReadTest, OffByOptionOrEnvironmentAndRefusedByOtherEngines) {
  EngineOptions o = options(2);
  o.whole_file_chain = false;
  CHAIN_ENGINE_OR_SKIP(on, options(2));
  std::unique_ptr<Engine> off = make_engine("io_uring", o);
  EXPECT_FALSE(off->reads_whole_files());
  std::unique_ptr<Engine> env_off;
  {
    testing::ScopedVariable chain_off("FEEDBENCH_IO_URING_CHAIN", "0");
    env_off = make_engine("io_uring", options(2));
  }
  EXPECT_FALSE(env_off->reads_whole_files());
  std::unique_ptr<Engine> psync = make_engine("psync", options(1));
  EXPECT_FALSE(psync->reads_whole_files());
  const WholeFileRead r{"x", 0, 1};
  EXPECT_THROW(psync->submit_whole_files(std::span<const WholeFileRead>(&r, 1)), std::logic_error);
  EXPECT_THROW(off->submit_whole_files(std::span<const WholeFileRead>(&r, 1)), std::logic_error);
}

}  // namespace
}  // namespace feedbench
