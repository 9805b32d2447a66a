// The loader's hand-over of a batch across processes (harness/loader/handover.h): each batch
// collated into a fresh shared-memory buffer whose descriptor crosses a Unix socket, received in
// the order the trainer asks for, every descriptor closed once the trainer drops the batch; and
// a loader run through it reads the same bytes and steps as one whose threads share the batch.
#include "handover.h"

#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "feedbench/loader/loader.h"
#include "test_util.h"

namespace feedbench {
namespace {

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> out(s.size());
  if (!s.empty()) std::memcpy(out.data(), s.data(), s.size());
  return out;
}

std::string text_of(std::span<const std::byte> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// RETURNS: the descriptors this process holds open.
int open_fds() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n - 1;  // the folder's own
}

TEST(HandoverTest, ABatchIsItsSamplesCollatedInOrder) {
  BatchChannel ch;
  const auto a = bytes_of("first sample "), b = bytes_of(""), c = bytes_of("third");
  const std::vector<std::span<const std::byte>> samples = {a, b, c};
  EXPECT_EQ(ch.send(0, samples), a.size() + c.size());
  EXPECT_EQ(ch.pending(), 1u);
  SharedBatch got = ch.receive(0);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(text_of(got.bytes()), "first sample third");
  EXPECT_EQ(ch.pending(), 0u);
}

TEST(HandoverTest, AListCollatedBatchHandsOverOneTensorPerSample) {
  // Collated to a list, each sample is its own buffer and descriptor: the trainer receives and
  // maps 3 for a batch of 3 (stacked, 1), each holding its sample, and closes them all after.
  const int before = open_fds();
  {
    BatchChannel ch;
    const auto a = bytes_of("first"), b = bytes_of(""), c = bytes_of("third sample");
    const std::vector<std::span<const std::byte>> samples = {a, b, c};
    EXPECT_EQ(ch.send(1, samples, /*list=*/true), a.size() + c.size());
    EXPECT_EQ(ch.send(0, samples), a.size() + c.size());
    EXPECT_EQ(ch.pending(), 2u) << "a batch is pending once, however many tensors it sent";
    SharedBatch stacked = ch.receive(0);
    ASSERT_EQ(stacked.tensors().size(), 1u);
    EXPECT_EQ(text_of(stacked.bytes()), "firstthird sample");
    SharedBatch listed = ch.receive(1);
    ASSERT_EQ(listed.tensors().size(), 3u);
    EXPECT_EQ(text_of(listed.tensors()[0].bytes()), "first");
    EXPECT_EQ(text_of(listed.tensors()[1].bytes()), "");
    EXPECT_EQ(text_of(listed.tensors()[2].bytes()), "third sample");
    EXPECT_EQ(ch.pending(), 0u);
    EXPECT_EQ(open_fds(), before + 2 + 1 + 3) << "the socket pair and every tensor's descriptor, held";
  }
  EXPECT_EQ(open_fds(), before);
}

TEST(HandoverTest, ListedBatchesFromManyWorkersArriveWhole) {
  // Four workers each send every fourth of 100 batches of 8 tensors, interleaving their
  // messages: each batch the trainer takes has its 8 tensors, in order.
  BatchChannel ch;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&ch, w] {
      for (std::size_t j = std::size_t(w); j < 100; j += 4) {
        std::vector<std::vector<std::byte>> held;
        for (std::size_t k = 0; k < 8; ++k) held.emplace_back(100 + k, std::byte(k));
        ch.send(j, std::vector<std::span<const std::byte>>(held.begin(), held.end()), true);
      }
    });
  for (std::size_t j = 0; j < 100; ++j) {
    SharedBatch b = ch.receive(j);
    ASSERT_EQ(b.tensors().size(), 8u);
    for (std::size_t k = 0; k < 8; ++k) {
      ASSERT_EQ(b.tensors()[k].bytes().size(), 100 + k);
      EXPECT_EQ(b.tensors()[k].bytes().front(), std::byte(k));
    }
  }
  for (auto& t : workers) t.join();
}

TEST(HandoverTest, TheBufferIsAMemfdSharedWithTheSender) {
  // The trainer's mapping is of the buffer the worker wrote, not a copy through the socket.
  BatchChannel ch;
  std::vector<std::byte> big(3 << 20, std::byte{0x5a});
  big.back() = std::byte{0x01};
  const std::vector<std::span<const std::byte>> samples = {big};
  ch.send(7, samples);
  SharedBatch got = ch.receive(7);
  ASSERT_EQ(got.bytes().size(), big.size());
  EXPECT_TRUE(std::equal(big.begin(), big.end(), got.bytes().begin()));
  // The mapping is of a memfd: /proc/self/maps names it.
  std::ifstream maps("/proc/self/maps");
  std::string line;
  bool memfd = false;
  while (std::getline(maps, line)) memfd |= line.find("/memfd:feedbench-batch") != std::string::npos;
  EXPECT_TRUE(memfd);
}

TEST(HandoverTest, BatchesArrivingOutOfOrderAreTakenInOrder) {
  BatchChannel ch;
  const auto x = bytes_of("batch two"), y = bytes_of("batch zero"), z = bytes_of("batch one");
  ch.send(2, std::vector<std::span<const std::byte>>{x});
  ch.send(0, std::vector<std::span<const std::byte>>{y});
  ch.send(1, std::vector<std::span<const std::byte>>{z});
  EXPECT_EQ(text_of(ch.receive(0).bytes()), "batch zero");
  EXPECT_EQ(ch.pending(), 2u) << "batch 2 arrived first and is kept";
  EXPECT_EQ(text_of(ch.receive(1).bytes()), "batch one");
  EXPECT_EQ(text_of(ch.receive(2).bytes()), "batch two");
}

TEST(HandoverTest, WorkersOnThreadsReachATrainerWaitingInOrder) {
  // Four workers each send every fourth of 200 batches while the trainer takes them in order,
  // each dropped (unmapped, its descriptor closed) before the next: no descriptor is left open.
  const int before = open_fds();
  {
    BatchChannel ch;
    std::vector<std::thread> workers;
    for (int w = 0; w < 4; ++w)
      workers.emplace_back([&ch, w] {
        for (std::size_t j = std::size_t(w); j < 200; j += 4) {
          std::vector<std::byte> s(1000 + j, std::byte(j & 0xff));
          ch.send(j, std::vector<std::span<const std::byte>>{s});
        }
      });
    for (std::size_t j = 0; j < 200; ++j) {
      SharedBatch b = ch.receive(j);
      ASSERT_EQ(b.bytes().size(), 1000 + j);
      EXPECT_EQ(b.bytes().front(), std::byte(j & 0xff));
    }
    for (auto& t : workers) t.join();
  }
  EXPECT_EQ(open_fds(), before);
}

TEST(HandoverTest, StopWakesATrainerWaitingForABatchNeverSent) {
  BatchChannel ch;
  std::thread stopper([&ch] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ch.stop();
  });
  EXPECT_TRUE(ch.receive(3).empty());
  stopper.join();
  const auto a = bytes_of("late");
  EXPECT_THROW(ch.send(3, std::vector<std::span<const std::byte>>{a}), RunError)
      << "a worker sending after the stop gives up";
}

TEST(HandoverTest, BatchesLeftUnreceivedAreFreedWithTheChannel) {
  // The epoch's last prefetched batches are never taken: closing the channel closes them.
  const int before = open_fds();
  {
    BatchChannel ch;
    const auto a = bytes_of("prefetched");
    for (std::size_t j = 0; j < 6; ++j) ch.send(j, std::vector<std::span<const std::byte>>{a});
    ch.receive(3);  // keeps 0..2 aside
  }
  EXPECT_EQ(open_fds(), before);
}

FileSet files_in(const testing::TempDir& dir, int n, std::size_t size) {
  FileSet files(dir.path());
  for (int i = 0; i < n; ++i) {
    const std::string rel = "s" + std::to_string(100 + i);
    testing::write_file(dir / rel, std::string(size + std::size_t(i), char('a' + i % 26)));
    files.add(rel, size + std::size_t(i), 0);
  }
  files.sort();
  return files;
}

LoaderOptions options(LoaderOptions::Handover h) {
  LoaderOptions o;
  o.batch_size = 4;
  o.workers = 3;
  o.prefetch = 2;
  o.step_time.kind = Distribution::Kind::fixed;
  o.step_time.a_ns = 200'000;
  o.steps = 16;
  o.handover = h;
  return o;
}

TEST(HandoverTest, ALoaderRunAcrossProcessesReadsWhatOneOnThreadsReads) {
  testing::TempDir dir;
  const FileSet files = files_in(dir, 80, 20000);
  auto source = make_file_source(files, "psync", 8192);
  EXPECT_EQ(LoaderOptions().handover, LoaderOptions::Handover::thread)
      << "threads unless a case (or its framework) asks";
  const LoaderResult p = LoaderSim(options(LoaderOptions::Handover::process), *source).run();
  const LoaderResult t = LoaderSim(options(LoaderOptions::Handover::thread), *source).run();
  EXPECT_EQ(p.steps, t.steps);
  EXPECT_EQ(p.samples, t.samples);
  EXPECT_EQ(p.bytes, t.bytes) << "the same seeded order, the same samples";
  EXPECT_TRUE(p.complete());
  EXPECT_GT(p.au, 0.0);
}

TEST(HandoverTest, ATrainerPaysTheNextCostOfEveryTensorThatArrived) {
  // Across processes the tensors charged are those that crossed: 8 a batch of 8 collated to a
  // list, 1 stacked. At 1 ms a tensor and nothing else, the median wait is 8 ms against 1 ms.
  testing::TempDir dir;
  const FileSet files = files_in(dir, 200, 2000);
  auto source = make_file_source(files, "psync", 8192);
  LoaderOptions o = options(LoaderOptions::Handover::process);
  o.batch_size = 8;
  o.steps = 6 + 12;
  o.next_cost_per_tensor_ns = 1'000'000;
  o.collate = LoaderOptions::Collate::list;
  const LoaderResult listed = LoaderSim(o, *source).run();
  o.collate = LoaderOptions::Collate::stack;
  const LoaderResult stacked = LoaderSim(o, *source).run();
  EXPECT_GE(double(listed.wait_ns.quantile(0.5)), 8e6);
  EXPECT_LT(double(listed.wait_ns.quantile(0.5)), 8e6 + 4e6) << "8 hand-overs, not more";
  EXPECT_GE(double(stacked.wait_ns.quantile(0.5)), 1e6);
  EXPECT_LT(double(stacked.wait_ns.quantile(0.5)), 1e6 + 4e6);
  EXPECT_EQ(listed.bytes, stacked.bytes) << "the same samples, handed over in 8 pieces or 1";
}

TEST(HandoverTest, AFailingWorkerStopsATrainerWaitingOnTheChannel) {
  // A sample that is not a JPEG under decode fails its worker: the trainer, waiting for that
  // batch on the channel, stops with the worker's reason instead of waiting for ever.
  testing::TempDir dir;
  const FileSet files = files_in(dir, 80, 1000);
  auto source = make_file_source(files, "psync", 8192);
  LoaderOptions o = options(LoaderOptions::Handover::process);
  o.transform.per = TransformCost::Per::decode;
  try {
    LoaderSim(o, *source).run();
    FAIL() << "a decode of files that are not JPEGs ran";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("not a JPEG"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace feedbench
