// The checkpoint family's parts below Google Benchmark: its parameters and refusals (plan),
// the scratch's preflight, the ScratchFolder it writes in, and the write itself.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "feedbench/base/error.h"
#include "feedbench/io/checkpoint_write.h"
#include "feedbench/io/scratch_folder.h"
#include "feedbench/plan/plan.h"
#include "feedbench/plan/preflight.h"
#include "test_util.h"

namespace feedbench {
namespace {

using json = nlohmann::json;
using testing::TempDir;
namespace fs = std::filesystem;

std::size_t entries(const std::string& folder) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(folder)) ++n;
  return n;
}

class CheckpointPlanTest : public ::testing::Test {
 protected:
  TempDir dir;
  void SetUp() override {
    fs::create_directories(dir / "source");
    fs::create_directories(dir / "scratch");
  }
  Plan plan_of(const json& family, const json& dataset_extra = json::object()) {
    json doc = {{"name", "t"},
                {"dataset", {{"source", dir / "source"}, {"scratch", dir / "scratch"}}},
                {"families", json::array({family})}};
    for (const auto& [k, v] : dataset_extra.items()) doc["dataset"][k] = v;
    return expand_plan(parse_config(doc.dump(), "p.json"));
  }
  std::string error_of(const json& family, const json& dataset_extra = json::object()) {
    return testing::input_error_of([&] { plan_of(family, dataset_extra); });
  }
};

TEST_F(CheckpointPlanTest, NamesAndLayoutFollowSizeOrModel) {
  Plan p = plan_of({{"family", "checkpoint"}, {"model", "llama3-8b"}, {"scale", 0.01}});
  ASSERT_EQ(p.cases.size(), 1u);
  EXPECT_EQ(
      p.cases[0].name(),
      "checkpoint/model:llama3-8b/scale:0.01/files:1/bs:1048576/engine:psync/direct:false/fsync:true/n:1/"
      "interval:1h");
  const CheckpointLayout l = checkpoint_layout(p.cases[0].checkpoint());
  EXPECT_EQ(l.ranks, 8);  // the model's ranks
  EXPECT_EQ(l.bytes_asked, 1'050'000'000u);
  EXPECT_EQ(l.file_bytes % kCheckpointAlignment, 0u);
  EXPECT_LE(l.bytes(), l.bytes_asked);
  EXPECT_GT(l.bytes(), l.bytes_asked - 8 * kCheckpointAlignment);
  EXPECT_EQ(p.cases[0].reader_threads(), 8);

  Plan s = plan_of({{"family", "checkpoint"}, {"size", "64MiB"}, {"ranks", 2}, {"files_per_rank", 2}});
  const CheckpointLayout m = checkpoint_layout(s.cases[0].checkpoint());
  EXPECT_EQ(m.files(), 4u);
  EXPECT_EQ(m.file_bytes, 16u << 20);
  EXPECT_EQ(m.bytes(), 64u << 20);
}

TEST_F(CheckpointPlanTest, RefusesWhatCannotRunWhereItIsWritten) {
  EXPECT_EQ(error_of({{"family", "checkpoint"}}),
            "p.json: /families/0: expected size or model for the checkpoint family (the checkpoint's bytes), "
            "got neither");
  EXPECT_TRUE(error_of({{"family", "checkpoint"}, {"size", "1GiB"}, {"model", "llama3-8b"}})
                  .starts_with("p.json: /families/0/size: expected size or model"));
  EXPECT_EQ(
      error_of({{"family", "checkpoint"}, {"size", "1GiB"}, {"queue_depth", 0}}),
      "p.json: /families/0/queue_depth: expected an integer from 1 to 4096, or a non-empty list of them "
      "(a sweep), got 0");
  EXPECT_TRUE(error_of({{"family", "checkpoint"}, {"size", "4KiB"}, {"ranks", 2}})
                  .starts_with("p.json: /families/0/size: expected at least 4 KiB per file"));
  EXPECT_TRUE(error_of({{"family", "checkpoint"}, {"size", "1GiB"}, {"direct", true}, {"block_size", 1000}})
                  .starts_with("p.json: /families/0/block_size: expected a multiple of 4 KiB with direct"));
  EXPECT_NE(error_of({{"family", "checkpoint"}, {"size", "1GiB"}, {"scale", 1.5}}), "");
}

// io_uring and libaio write (issue 46) with queue_depth writes in flight, as fio's iodepth: unset
// and 1 name the same case as before queue_depth existed; what cannot run is left out, with why.
TEST_F(CheckpointPlanTest, EnginesWriteWithAQueueDepthNamedOnlyAboveOne) {
  const std::string rest = "/direct:true/fsync:true/n:1/interval:1h";
  Plan p = plan_of({{"family", "checkpoint"},
                    {"size", "64MiB"},
                    {"engine", {"psync", "io_uring", "libaio"}},
                    {"queue_depth", {1, 8}},
                    {"direct", true}});
  std::vector<std::string> names;
  for (const Case& c : p.cases) names.push_back(c.name());
  const std::string head = "checkpoint/size:67108864/files:1/bs:1048576/engine:";
  EXPECT_EQ(names, (std::vector<std::string>{head + "psync" + rest, head + "io_uring" + rest,
                                             head + "io_uring/qd:8" + rest, head + "libaio" + rest,
                                             head + "libaio/qd:8" + rest}));
  EXPECT_FALSE(p.cases[1].params.contains("queue_depth"));  // 1 written is 1 unset
  EXPECT_EQ(p.cases[2].checkpoint().queue_depth, 8);
  EXPECT_EQ(p.cases[2].params.at("queue_depth"), 8);
  ASSERT_EQ(p.dropped.size(), 1u);
  EXPECT_EQ(p.dropped[0],
            head + "psync/qd:8" + rest + ": psync has one write in flight per rank: queue_depth must be 1");
  EXPECT_EQ(error_of({{"family", "checkpoint"}, {"size", "64MiB"}, {"engine", "libaio"}}),
            "p.json: /families: expected at least one case that can run, got none "
            "(checkpoint/size:67108864/files:1/bs:1048576/engine:libaio/direct:false/fsync:true/n:1/"
            "interval:1h: libaio writes and reads only with O_DIRECT (buffered, io_submit waits for each "
            "write): direct must be true)");
  // defaults.queue_depth is the reads' of file_read: a psync checkpoint beside them keeps its name.
  json doc = {{"name", "t"},
              {"dataset", {{"source", dir / "source"}, {"scratch", dir / "scratch"}}},
              {"defaults", {{"queue_depth", 32}}},
              {"families",
               {{{"family", "file_read"}, {"engine", "io_uring"}, {"cache_state", "direct"}},
                {{"family", "checkpoint"}, {"size", "64MiB"}}}}};
  const Plan d = expand_plan(parse_config(doc.dump(), "p.json"));
  ASSERT_EQ(d.cases.size(), 2u);
  EXPECT_EQ(d.cases[0].file_read().queue_depth, 32);
  EXPECT_EQ(
      d.cases[1].name(),
      "checkpoint/size:67108864/files:1/bs:1048576/engine:psync/direct:false/fsync:true/n:1/interval:1h");
}

TEST_F(CheckpointPlanTest, NeedsAnExistingScratch) {
  json doc = {{"name", "t"},
              {"dataset", {{"source", dir / "source"}}},
              {"families", json::array({{{"family", "checkpoint"}, {"size", "1GiB"}}})}};
  EXPECT_EQ(
      testing::input_error_of([&] { parse_config(doc.dump(), "p.json"); }),
      "p.json: /dataset/scratch: expected a folder feedbench may write in, for the checkpoint family at "
      "/families/0, got none (set it, or give --scratch DIR)");
  // A missing scratch is refused when the plan holds a checkpoint case, not before: a run
  // filtered to other families needs none.
  EXPECT_EQ(error_of({{"family", "checkpoint"}, {"size", "1GiB"}}, {{"scratch", dir / "missing"}}), "");
  const Plan p = plan_of({{"family", "checkpoint"}, {"size", "64MiB"}});
  EXPECT_EQ(testing::input_error_of([&] {
              check_checkpoint_scratch(p, {"--scratch", dir / "missing", true}, {});
            }),
            "--scratch " + (dir / "missing") +
                ": does not exist (the checkpoint family writes beneath it): "
                "nothing was written");
}

TEST_F(CheckpointPlanTest, ScratchApartFromTheDataAndWithRoom) {
  const Plan p = plan_of({{"family", "checkpoint"}, {"size", "64MiB"}});
  const std::vector<NamedPath> data{{"dataset.source", dir / "source"}};
  EXPECT_NO_THROW(check_checkpoint_scratch(p, {"dataset.scratch", dir / "scratch", true}, data));
  fs::create_directories(dir / "source/sub");
  EXPECT_TRUE(testing::input_error_of([&] {
                check_checkpoint_scratch(p, {"dataset.scratch", dir / "source/sub", true}, data);
              }).find("inside dataset.source") != std::string::npos);
  EXPECT_TRUE(testing::input_error_of([&] {
                check_checkpoint_scratch(p, {"dataset.scratch", dir.path(), true}, data);
              }).find("holds dataset.source") != std::string::npos);
  const Plan huge = plan_of({{"family", "checkpoint"}, {"model", "llama3-1t"}});
  const std::string room = testing::input_error_of([&] {
    check_checkpoint_scratch(huge, {"dataset.scratch", dir / "scratch", true}, data);
  });
  const std::string need = std::to_string(checkpoint_layout(huge.cases[0].checkpoint()).bytes());
  EXPECT_TRUE(room.find("the largest checkpoint of the plan needs " + need + " bytes") != std::string::npos)
      << room;
  EXPECT_TRUE(room.find("nothing was written") != std::string::npos) << room;
  EXPECT_EQ(entries(dir / "scratch"), 0u);
}

TEST(ScratchFolderTest, MarkedRemovedWholeAndNeverEntersAFolderItDidNotMake) {
  TempDir dir;
  // Someone else's folder at the first name a ScratchFolder would take.
  const std::string foreign = dir / ("ckpt-" + std::to_string(::getpid()) + "-0");
  fs::create_directories(foreign);
  testing::write_file(foreign + "/theirs", "x");
  {
    ScratchFolder folder(dir.path(), "ckpt");
    EXPECT_EQ(folder.path(), dir / ("ckpt-" + std::to_string(::getpid()) + "-1"));
    EXPECT_EQ(ScratchFolder::why_not_ours(folder.path()), "");
    EXPECT_NE(ScratchFolder::why_not_ours(foreign), "");
    const int fd = folder.create("a.bin", 0);
    ASSERT_GE(fd, 0);
    ::close(fd);
    EXPECT_EQ(folder.create("a.bin", 0), -1);  // exclusive
    EXPECT_EQ(errno, EEXIST);
    EXPECT_EQ(folder.create("../escape", 0), -1);
    EXPECT_EQ(folder.files(), std::vector<std::string>{"a.bin"});
    EXPECT_EQ(folder.remove_all(), "");
  }
  EXPECT_EQ(entries(dir.path()), 1u);  // the foreign folder alone, untouched
  EXPECT_EQ(testing::read_file(foreign + "/theirs"), "x");
}

TEST(ScratchFolderTest, AFileItDidNotWriteStaysAndIsNamed) {
  TempDir dir;
  ScratchFolder folder(dir.path(), "ckpt");
  testing::write_file(folder.path() + "/planted", "y");
  const std::string left = folder.remove_all();
  EXPECT_TRUE(left.find("holds files feedbench did not write") != std::string::npos) << left;
  EXPECT_EQ(testing::read_file(folder.path() + "/planted"), "y");
  EXPECT_EQ(ScratchFolder::why_not_ours(folder.path()).find("no .feedbench-scratch marker"), 0u);
}

CheckpointWriteSpec small_spec() {
  CheckpointWriteSpec spec;
  spec.ranks = 2;
  spec.files_per_rank = 2;
  spec.file_bytes = 1 << 20;
  spec.block_size = 256 << 10;
  return spec;
}

TEST(CheckpointWriteTest, WritesEveryRanksFilesWithPagesAllDifferent) {
  TempDir dir;
  const CheckpointWriteSpec spec = small_spec();
  const CheckpointBuffers buffers = make_checkpoint_buffers(spec);
  ASSERT_EQ(buffers.error, "");
  EXPECT_GT(buffers.bytes_per_second(), 0);
  ScratchFolder folder(dir.path(), "ckpt");
  const CheckpointWrite w = write_checkpoint(folder, spec, buffers);
  ASSERT_EQ(w.error, "");
  EXPECT_EQ(w.bytes, 4u << 20);
  EXPECT_EQ(w.writes, 16u);
  EXPECT_EQ(w.latency.count(), 16u);
  ASSERT_EQ(w.ranks.size(), 2u);
  EXPECT_EQ(w.ranks[1].files,
            (std::vector<std::string>{checkpoint_file_name(0, 1, 0), checkpoint_file_name(0, 1, 1)}));
  EXPECT_GT(w.fsync_share(), 0);
  EXPECT_GE(w.seconds(), w.slowest_rank_seconds());
  // The buffer is reused block after block: the stamps keep every 4 KiB page apart.
  std::set<std::string> pages;
  for (const std::string& name : folder.files()) {
    EXPECT_EQ(fs::file_size(folder.path() + "/" + name), 1u << 20);
    const std::string bytes = testing::read_file(folder.path() + "/" + name);
    for (std::size_t at = 0; at < bytes.size(); at += 4096) pages.insert(bytes.substr(at, 4096));
  }
  EXPECT_EQ(pages.size(), 4u * 256u);
  EXPECT_EQ(folder.remove_all(), "");
  EXPECT_EQ(entries(dir.path()), 0u);
}

// A model preset's 1024 ranks must not hold 64 MiB each: all buffers stay within 1 GiB.
TEST(CheckpointWriteTest, BuffersAreCappedInAllAndAtLeastABlock) {
  CheckpointWriteSpec spec;
  spec.ranks = 1024;
  spec.file_bytes = 16ull << 30;
  spec.block_size = 256 << 10;
  EXPECT_LE(checkpoint_buffer_bytes(spec) * 1024, kCheckpointBuffersTotal);
  EXPECT_EQ(checkpoint_buffer_bytes(spec) % spec.block_size, 0u);
  spec.ranks = 1;
  EXPECT_LE(checkpoint_buffer_bytes(spec), kCheckpointBufferBytes);
  spec.file_bytes = 4096;
  spec.block_size = 8 << 20;
  EXPECT_EQ(checkpoint_buffer_bytes(spec), 8u << 20);  // one block, whatever the shard
  // Each write in flight owns a block of the ring: queue_depth of them, whatever the caps say...
  spec.ranks = 1024;
  spec.file_bytes = 16ull << 30;
  spec.block_size = 256 << 10;
  spec.queue_depth = 32;
  EXPECT_EQ(checkpoint_buffer_bytes(spec), 32u * (256u << 10));
  // ... but never more than a file has blocks: no more can be in flight.
  spec.file_bytes = 3 * (256 << 10);
  EXPECT_EQ(checkpoint_buffer_bytes(spec), 3u * (256u << 10));
}

TEST(CheckpointWriteTest, AStopEndsTheWriteAndItsFilesAreRemoved) {
  TempDir dir;
  std::atomic<int> stop{SIGINT};
  CheckpointWriteSpec spec = small_spec();
  spec.stop = &stop;
  const CheckpointBuffers buffers = make_checkpoint_buffers(spec);
  ScratchFolder folder(dir.path(), "ckpt");
  const CheckpointWrite w = write_checkpoint(folder, spec, buffers);
  EXPECT_EQ(w.error, "interrupted by SIGINT");
  EXPECT_EQ(w.stopped_by, SIGINT);
  EXPECT_EQ(w.bytes, 0u);
  EXPECT_EQ(folder.remove_all(), "");
  EXPECT_EQ(entries(dir.path()), 0u);
}

// A stop half way through: each engine's rank submits no more blocks, its writes in flight
// complete, and the checkpoint says it was interrupted with part of it written.
TEST(CheckpointWriteTest, AStopHalfWayEndsEachEnginesWrite) {
  TempDir dir;
  testing::ScopedVariable delay("FEEDBENCH_CHECKPOINT_TEST_DELAY_MS", "20");  // 8 writes a rank: 160 ms
  for (const char* engine : {"psync", "io_uring"}) {
    std::atomic<int> stop{0};
    CheckpointWriteSpec spec = small_spec();
    spec.engine = engine;
    spec.queue_depth = std::string(engine) == "psync" ? 1 : 4;
    spec.stop = &stop;
    const CheckpointBuffers buffers = make_checkpoint_buffers(spec);
    ScratchFolder folder(dir.path(), "ckpt");
    std::thread signal([&stop] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      stop.store(SIGTERM);
    });
    const CheckpointWrite w = write_checkpoint(folder, spec, buffers);
    signal.join();
    if (w.error.find("io_uring refused") != std::string::npos) {
      EXPECT_EQ(folder.remove_all(), "");
      continue;
    }
    EXPECT_EQ(w.error, "interrupted by SIGTERM") << engine;
    EXPECT_GT(w.bytes, 0u) << engine;
    EXPECT_LT(w.bytes, 4u << 20) << engine;
    EXPECT_EQ(folder.remove_all(), "");
  }
  EXPECT_EQ(entries(dir.path()), 0u);
}

TEST(CheckpointWriteTest, AFailedWriteIsTheCheckpointsError) {
  TempDir dir;
  CheckpointWriteSpec spec = small_spec();
  spec.direct = true;
  spec.block_size = 1000;  // not aligned: O_DIRECT refuses the write (or the open, on tmpfs)
  const CheckpointBuffers buffers = make_checkpoint_buffers(spec);
  ScratchFolder folder(dir.path(), "ckpt");
  const CheckpointWrite w = write_checkpoint(folder, spec, buffers);
  EXPECT_NE(w.error, "");
  EXPECT_EQ(folder.remove_all(), "");
  EXPECT_EQ(entries(dir.path()), 0u);
}

// RETURNS: every file of `folder`, name -> bytes.
std::map<std::string, std::string> contents(const ScratchFolder& folder) {
  std::map<std::string, std::string> out;
  for (const std::string& name : folder.files()) out[name] = testing::read_file(folder.path() + "/" + name);
  return out;
}

// RETURNS: the checkpoint `spec` writes, as psync writes it (or "" after a failure).
std::map<std::string, std::string> psync_contents(CheckpointWriteSpec spec, const std::string& where) {
  spec.engine = "psync";
  spec.queue_depth = 1;
  ScratchFolder folder(where, "psync");
  const CheckpointWrite w = write_checkpoint(folder, spec, make_checkpoint_buffers(spec));
  EXPECT_EQ(w.error, "");
  std::map<std::string, std::string> out = contents(folder);
  EXPECT_EQ(folder.remove_all(), "");
  return out;
}

// io_uring and libaio keep queue_depth writes in flight, each from a block of its own: the files
// hold exactly the bytes psync writes, every page stamped as psync stamps it.
TEST(CheckpointWriteTest, EachEngineWritesWhatPsyncWrites) {
  TempDir dir;
  CheckpointWriteSpec spec = small_spec();
  spec.file_bytes = (1 << 20) + 12 * 4096;  // a short last block
  spec.direct = true;                       // libaio's writes are O_DIRECT only
  spec.seed = 1234;
  spec.checkpoint = 3;
  const std::map<std::string, std::string> want = psync_contents(spec, dir.path());
  ASSERT_EQ(want.size(), 4u);
  for (const char* engine : {"io_uring", "libaio"}) {
    for (unsigned depth : {1u, 3u, 8u}) {
      spec.engine = engine;
      spec.queue_depth = depth;
      const CheckpointBuffers buffers = make_checkpoint_buffers(spec);
      ASSERT_EQ(buffers.error, "");
      ScratchFolder folder(dir.path(), "ckpt");
      const CheckpointWrite w = write_checkpoint(folder, spec, buffers);
      if (w.error.find("io_uring refused") != std::string::npos) {
        std::printf("skipping io_uring: %s\n", w.error.c_str());
        EXPECT_EQ(folder.remove_all(), "");
        break;
      }
      ASSERT_EQ(w.error, "") << engine << " qd " << depth;
      EXPECT_EQ(w.bytes, 4 * spec.file_bytes) << engine << " qd " << depth;
      EXPECT_EQ(w.writes, 4u * 5u) << engine << " qd " << depth;
      EXPECT_EQ(w.latency.count(), w.writes);
      EXPECT_TRUE(contents(folder) == want) << engine << " qd " << depth << " wrote other bytes than psync";
      EXPECT_EQ(folder.remove_all(), "");
    }
  }
  EXPECT_EQ(entries(dir.path()), 0u);
}

// An engine that cannot take the spec is the checkpoint's error, before anything is written.
TEST(CheckpointWriteTest, AnEngineRefusedIsTheCheckpointsError) {
  TempDir dir;
  CheckpointWriteSpec spec = small_spec();
  spec.queue_depth = 4;  // psync: one write at a time
  ScratchFolder folder(dir.path(), "ckpt");
  const CheckpointWrite w = write_checkpoint(folder, spec, make_checkpoint_buffers(spec));
  EXPECT_TRUE(w.error.starts_with("engine psync is synchronous: queue_depth must be 1")) << w.error;
  EXPECT_EQ(w.bytes, 0u);
  EXPECT_EQ(folder.files().size(), 0u);
  EXPECT_EQ(folder.remove_all(), "");
}

// A write cut short (the file size limit here, as a full device would) goes on from where it
// stopped; the write that then fails fails the rank, naming its file, through every engine.
TEST(CheckpointWriteTest, AShortWriteGoesOnAndAFailedOneNamesItsFile) {
  TempDir dir;
  CheckpointWriteSpec spec = small_spec();
  spec.ranks = 1;
  spec.files_per_rank = 1;
  spec.file_bytes = 2 << 20;
  spec.direct = true;
  const std::uint64_t limit = (1 << 20) + 3 * 4096;  // inside the fifth 256 KiB block
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG, not the signal's death
  for (const char* engine : {"psync", "io_uring", "libaio"}) {
    spec.engine = engine;
    spec.queue_depth = std::string(engine) == "psync" ? 1 : 4;
    const CheckpointBuffers buffers = make_checkpoint_buffers(spec);
    ScratchFolder folder(dir.path(), "ckpt");
    rlimit lower = before;
    lower.rlim_cur = limit;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &lower), 0);
    const CheckpointWrite w = write_checkpoint(folder, spec, buffers);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &before), 0);
    if (w.error.find("io_uring refused") != std::string::npos) {
      EXPECT_EQ(folder.remove_all(), "");
      continue;
    }
    const std::string file = folder.path() + "/" + checkpoint_file_name(0, 0, 0);
    EXPECT_EQ(w.error, "writing " + file + ": " + std::strerror(EFBIG)) << engine;
    EXPECT_EQ(fs::file_size(file), limit) << engine << ": the short write's rest was not asked for";
    // The blocks written whole before it (completions after the failure are not counted: with
    // several in flight, some may come after it).
    if (spec.queue_depth == 1) {
      EXPECT_EQ(w.bytes, 1u << 20) << engine;
    }
    EXPECT_LE(w.bytes, 1u << 20) << engine;
    EXPECT_EQ(folder.remove_all(), "");
  }
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(entries(dir.path()), 0u);
}

}  // namespace
}  // namespace feedbench
