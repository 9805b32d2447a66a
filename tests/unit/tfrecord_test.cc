// TFRecord shards: CRC-32C against published vectors, TensorFlow's framing, gen --layout tfrecord
// parsed back record by record, and refusals that name the shard and the byte offset.
#include "feedbench/dataset/tfrecord.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "feedbench/base/error.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/dataset/generator.h"
#include "feedbench/loader/loader.h"
#include "test_util.h"

namespace feedbench {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

std::uint32_t crc_of(const std::string& s) { return crc32c(s.data(), s.size()); }

TEST(Crc32cTest, PublishedVectors) {
  // The CRC catalogue's check value, and RFC 3720's (iSCSI) appendix B.4 vectors.
  EXPECT_EQ(crc_of("123456789"), 0xE3069283u);
  EXPECT_EQ(crc_of(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc_of(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending += char(i);
  EXPECT_EQ(crc_of(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc_of(""), 0u);
}

TEST(Crc32cTest, MaskedAsTensorFlowMasksIt) {
  // ((crc >> 15) | (crc << 17)) + 0xa282ead8, modulo 2^32.
  EXPECT_EQ(mask_crc(0xE3069283u), 0xC78AB0E5u);
  EXPECT_EQ(mask_crc(0u), 0xa282ead8u);
  // A record of 3 bytes: its header is 03 00 … 00, then the masked CRC of those 8 bytes, LE.
  unsigned char header[kTfRecordHeaderBytes];
  tfrecord_header(3, header);
  const unsigned char expected[] = {3, 0, 0, 0, 0, 0, 0, 0, 0xb0, 0x99, 0x49, 0x0e};
  EXPECT_EQ(std::memcmp(header, expected, sizeof expected), 0);
  EXPECT_EQ(tfrecord_parse_header(header, "x", 0), 3u);
}

TEST(Crc32cTest, InstructionAndTableAgreeAndExtend) {
  std::mt19937_64 rng(5);
  std::vector<unsigned char> data(10007);
  for (auto& b : data) b = static_cast<unsigned char>(rng());
  for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 63u, 4096u, 10007u}) {
    const std::uint32_t whole = crc32c(data.data(), n);
    EXPECT_EQ(crc32c_portable_extend(0, data.data(), n), whole) << n;
    for (std::size_t cut : {std::size_t(0), n / 3, n}) {
      EXPECT_EQ(crc32c_extend(crc32c(data.data(), cut), data.data() + cut, n - cut), whole)
          << n << " " << cut;
      EXPECT_EQ(
          crc32c_portable_extend(crc32c_portable_extend(0, data.data(), cut), data.data() + cut, n - cut),
          whole)
          << n << " " << cut;
    }
  }
}

GenOptions tfrecord_options(const std::string& out) {
  GenOptions o;
  o.out = out;
  o.files = 60;
  o.min_size = 1;
  o.max_size = 5000;
  o.layout = GenLayout::kTfrecord;
  o.shards = 4;
  o.seed = 9;
  return o;
}

std::uint32_t le32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + std::size_t(i)]);
  return v;
}

TEST(TfRecordGenTest, EveryRecordParsesWithItsCrcsAndDrawnBytes) {
  TempDir dir;
  const GenOptions o = tfrecord_options(dir / "tf");
  const GenSummary summary = generate_dataset(o);
  EXPECT_EQ(summary.files, 4u);
  EXPECT_EQ(summary.bytes, gen_total_bytes(o));
  const FileSet files = scan_dataset(o.out);
  ASSERT_EQ(files.size(), 4u);
  std::uint64_t record = 0, min_seen = UINT64_MAX, max_seen = 0;
  for (std::size_t j = 0; j < files.size(); ++j) {
    EXPECT_EQ(std::string(files.relative_path(j)), gen_file_name(o, j));
    EXPECT_EQ(files.file_size(j), gen_file_size(o, j));
    const std::string bytes = read_file(files.absolute_path(j));
    const std::vector<TfRecordRef> refs = index_tfrecord_shard(files.absolute_path(j));
    ASSERT_EQ(refs.size(), gen_first_record(o, j + 1) - gen_first_record(o, j));
    for (const TfRecordRef& r : refs) {
      ASSERT_EQ(r.length, gen_record_size(o, record));
      min_seen = std::min(min_seen, r.length);
      max_seen = std::max(max_seen, r.length);
      std::string expected(r.length, '\0');
      gen_fill(o.seed, record, 0, expected.data(), expected.size());
      const std::string data = bytes.substr(r.offset + kTfRecordHeaderBytes, r.length);
      EXPECT_EQ(data, expected) << "record " << record;
      EXPECT_EQ(le32(bytes, r.offset + kTfRecordHeaderBytes + r.length), mask_crc(crc_of(data)));
      ++record;
    }
  }
  EXPECT_EQ(record, o.files);
  // Sizes are drawn over the range, not one size.
  EXPECT_LT(min_seen, 1000u);
  EXPECT_GT(max_seen, 4000u);
}

TEST(TfRecordGenTest, SameSeedSameShardsOtherSeedDiffers) {
  TempDir dir;
  GenOptions a = tfrecord_options(dir / "a");
  GenOptions b = a;
  b.out = dir / "b";
  b.threads = 1;
  GenOptions c = a;
  c.out = dir / "c";
  c.seed = 10;
  generate_dataset(a);
  generate_dataset(b);
  generate_dataset(c);
  for (std::uint64_t j = 0; j < 4; ++j) {
    const std::string name = gen_file_name(a, j);
    EXPECT_EQ(read_file(a.out + "/" + name), read_file(b.out + "/" + name));
    EXPECT_NE(read_file(a.out + "/" + name), read_file(c.out + "/" + name));
  }
  // Nothing left under a temporary name.
  for (const auto& e : std::filesystem::directory_iterator(a.out))
    EXPECT_EQ(e.path().extension(), ".tfrecord") << e.path();
}

TEST(TfRecordGenTest, RefusesJpegAndEmptyShards) {
  TempDir dir;
  GenOptions o = tfrecord_options(dir / "x");
  o.shards = 61;
  EXPECT_THROW(validate_gen_options(o), InputError);
  o = tfrecord_options(dir / "x");
  o.format = GenFormat::kJpeg;
  EXPECT_THROW(validate_gen_options(o), InputError);
  o = tfrecord_options(dir / "x");
  o.max_files = 59;  // records count against the limit: each is drawn
  EXPECT_THROW(validate_gen_options(o), InputError);
}

// RETURNS: the message of the RunError that indexing `path` throws ("" when none).
std::string index_error(const std::string& path) {
  try {
    index_tfrecord_shard(path);
  } catch (const RunError& e) {
    return e.what();
  }
  return "";
}

TEST(TfRecordIndexTest, CorruptLengthNamesShardAndOffset) {
  TempDir dir;
  const GenOptions o = tfrecord_options(dir / "tf");
  generate_dataset(o);
  const std::string shard = o.out + "/" + gen_file_name(o, 1);
  std::string bytes = read_file(shard);
  const std::vector<TfRecordRef> refs = index_tfrecord_shard(shard);
  ASSERT_GE(refs.size(), 3u);
  bytes[refs[2].offset + 1] ^= 0x40;  // one bit of the third record's length
  write_file(shard, bytes);
  const std::string why = index_error(shard);
  EXPECT_NE(why.find(shard), std::string::npos) << why;
  EXPECT_NE(why.find("byte offset " + std::to_string(refs[2].offset)), std::string::npos) << why;
  EXPECT_NE(why.find("length CRC"), std::string::npos) << why;
}

TEST(TfRecordIndexTest, TruncatedShardAndNotTfRecordAreRefused) {
  TempDir dir;
  const GenOptions o = tfrecord_options(dir / "tf");
  generate_dataset(o);
  const std::string shard = o.out + "/" + gen_file_name(o, 0);
  const std::vector<TfRecordRef> refs = index_tfrecord_shard(shard);
  const std::string bytes = read_file(shard);
  // Cut inside the last record's data, then inside its header.
  const TfRecordRef last = refs.back();
  write_file(shard, bytes.substr(0, last.offset + kTfRecordHeaderBytes + last.length / 2));
  std::string why = index_error(shard);
  EXPECT_NE(why.find("truncated"), std::string::npos) << why;
  EXPECT_NE(why.find("byte offset " + std::to_string(last.offset)), std::string::npos) << why;
  write_file(shard, bytes.substr(0, last.offset + 5));
  why = index_error(shard);
  EXPECT_NE(why.find("truncated"), std::string::npos) << why;
  EXPECT_NE(why.find("byte offset " + std::to_string(last.offset)), std::string::npos) << why;

  const std::string plain = dir / "plain.bin";
  write_file(plain, std::string(4096, 'x'));
  why = index_error(plain);
  EXPECT_NE(why.find("not a TFRecord shard"), std::string::npos) << why;
  EXPECT_NE(why.find("byte offset 0"), std::string::npos) << why;
}

// ---- the loader's streams -------------------------------------------------------------------

std::vector<int> shuffled(std::size_t capacity, std::uint64_t seed, int n) {
  ShuffleBuffer<int> buffer(capacity, seed);
  std::vector<int> out;
  for (int i = 0; i < n; ++i) {
    if (buffer.full()) out.push_back(buffer.pop());
    buffer.push(i);
  }
  while (!buffer.empty()) out.push_back(buffer.pop());
  return out;
}

TEST(ShuffleBufferTest, SeededPermutationWithinTheBuffersReach) {
  const std::vector<int> a = shuffled(64, 7, 1000);
  EXPECT_EQ(a, shuffled(64, 7, 1000));
  EXPECT_NE(a, shuffled(64, 8, 1000));
  std::vector<int> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> all(1000);
  for (int i = 0; i < 1000; ++i) all[std::size_t(i)] = i;
  EXPECT_EQ(sorted, all);
  EXPECT_NE(a, all);
  // An item leaves no earlier than capacity − 1 places before it came in.
  for (std::size_t k = 0; k < a.size(); ++k) EXPECT_GE(int(k), a[k] - 63) << k;
  // Capacity 0 or 1: file order.
  EXPECT_EQ(shuffled(1, 7, 100), std::vector<int>(all.begin(), all.begin() + 100));
  EXPECT_EQ(shuffled(0, 7, 100), std::vector<int>(all.begin(), all.begin() + 100));
}

TEST(StreamPlanTest, DealsEveryShardOnceAndDropsShortBatchesPerWorker) {
  const std::vector<std::uint64_t> records = {10, 7, 12, 3, 9, 8, 5};
  LoaderOptions o;
  o.batch_size = 4;
  o.workers = 2;
  o.accelerators = 2;
  o.seed = 3;
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::vector<int> seen(records.size());
    for (int k = 0; k < 2; ++k) {
      const StreamPlan plan = loader_stream_plan(o, records, epoch, k);
      ASSERT_EQ(plan.shards.size(), 2u);
      std::vector<std::size_t> batches(2);
      for (std::size_t w : plan.batch_worker) ++batches.at(w);
      for (std::size_t w = 0; w < 2; ++w) {
        std::uint64_t held = 0;
        for (std::size_t j : plan.shards[w]) {
          ++seen.at(j);
          held += records[j];
        }
        EXPECT_EQ(held, plan.records[w]);
        EXPECT_EQ(batches[w], plan.records[w] / 4);
      }
    }
    EXPECT_EQ(seen, std::vector<int>(records.size(), 1)) << "epoch " << epoch;
  }
  // The shard order changes with the epoch.
  EXPECT_NE(loader_stream_plan(o, records, 0, 0).shards, loader_stream_plan(o, records, 1, 0).shards);
}

// Across nodes (ranks): every node's trainers take their own shards, so all nodes' plans deal
// every shard once per epoch, and the schedule is what the poorest trainer of any node holds.
TEST(StreamPlanTest, NodesTakeDisjointShardsThatCoverTheEpoch) {
  std::vector<std::uint64_t> records(11);
  for (std::size_t i = 0; i < records.size(); ++i) records[i] = 8 + i;
  LoaderOptions o;
  o.batch_size = 4;
  o.workers = 1;
  o.accelerators = 2;
  o.nodes = 2;
  o.seed = 5;
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::vector<int> seen(records.size());
    for (int node = 0; node < 2; ++node) {
      o.node = node;
      for (int k = 0; k < 2; ++k) {
        const StreamPlan plan = loader_stream_plan(o, records, epoch, k);
        for (std::size_t j : plan.shards.at(0)) ++seen.at(j);
      }
    }
    EXPECT_EQ(seen, std::vector<int>(records.size(), 1)) << "epoch " << epoch;
  }
}

struct TfSet {
  TempDir dir;
  GenOptions options;
  FileSet files;
  explicit TfSet(std::uint64_t records = 60, std::uint64_t shards = 4)
      : options(tfrecord_options(dir / "tf")), files("") {
    options.files = records;
    options.shards = shards;
    generate_dataset(options);
    files = scan_dataset(options.out);
  }
};

// RETURNS: the sample indices a reader's stream over `shards` hands out, to the end.
std::vector<std::size_t> drain(const SampleSource& source, const std::vector<std::size_t>& shards,
                               std::size_t buffer, std::uint64_t seed, std::size_t count) {
  auto reader = source.make_reader();
  reader->start_stream(shards, buffer, seed);
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(reader->read_next());
  return out;
}

TEST(TfRecordSourceTest, StreamsEveryRecordOnceInShardOrderThroughTheBuffer) {
  TfSet set;
  auto source = make_tfrecord_source(set.files, "psync", true, 4096);
  ASSERT_EQ(source->count(), 60u);
  ASSERT_NE(source->shard_records(), nullptr);
  EXPECT_EQ(*source->shard_records(), (std::vector<std::uint64_t>{15, 15, 15, 15}));
  EXPECT_EQ(source->total_bytes(), set.files.total_bytes());
  auto reader = source->make_reader();
  EXPECT_EQ(reader->planned_bytes(0), gen_record_size(set.options, 0) + kTfRecordFramingBytes);

  // Buffer 1: file order, shard after shard as asked (shard 2's records are 30..44).
  std::vector<std::size_t> in_order = drain(*source, {2, 0}, 1, 5, 30);
  std::vector<std::size_t> expected;
  for (std::size_t i = 30; i < 45; ++i) expected.push_back(i);
  for (std::size_t i = 0; i < 15; ++i) expected.push_back(i);
  EXPECT_EQ(in_order, expected);

  // A buffer: a seeded permutation of the same records.
  const std::vector<std::size_t> a = drain(*source, {0, 1, 2, 3}, 16, 5, 60);
  EXPECT_EQ(a, drain(*source, {0, 1, 2, 3}, 16, 5, 60));
  EXPECT_NE(a, drain(*source, {0, 1, 2, 3}, 16, 6, 60));
  std::vector<std::size_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < 60; ++i) EXPECT_EQ(sorted[i], i);
}

TEST(TfRecordSourceTest, KeepsRecordBytesForATransformThatNeedsThem) {
  TfSet set(8, 1);
  auto source = make_tfrecord_source(set.files, "psync", true, 4096);
  auto reader = source->make_reader();
  reader->keep_data(true);
  reader->start_stream({0}, 4, 1);
  for (int k = 0; k < 8; ++k) {
    const std::size_t i = reader->read_next();
    std::string expected(gen_record_size(set.options, i), '\0');
    gen_fill(set.options.seed, i, 0, expected.data(), expected.size());
    ASSERT_EQ(reader->data().size(), expected.size());
    EXPECT_EQ(std::memcmp(reader->data().data(), expected.data(), expected.size()), 0) << i;
  }
}

TEST(TfRecordSourceTest, LoaderRunReadsWholeShardsPerWorker) {
  TfSet set(64, 8);  // 8 records per shard
  auto source = make_tfrecord_source(set.files, "psync", true, 4096);
  LoaderOptions o;
  o.batch_size = 4;
  o.workers = 2;
  o.prefetch = 1;
  o.warmup_steps = 0;
  o.epochs = 2;
  o.shuffle_buffer = 8;
  LoaderSim sim(o, *source);
  // Each of 2 workers reads 4 shards of 8 records: 8 batches each, 16 steps per epoch.
  EXPECT_EQ(sim.schedule().steps_per_epoch, 16);
  const LoaderResult r = sim.run();
  // Every record of both epochs was read once, the warm-up's (prefetch × workers steps) included.
  EXPECT_EQ(r.samples + 4 * r.warmup_steps, 2u * 64);
  EXPECT_EQ(r.transform_bytes, 2 * set.files.total_bytes());
  EXPECT_EQ(r.bytes_planned, r.bytes);

  o.steps = 17;
  EXPECT_NE(LoaderSim(o, *source).schedule().refused.find("refused rather than run fewer steps"),
            std::string::npos);
  o.steps = 0;
  o.batch_size = 33;  // each worker's 32 records make no whole batch
  EXPECT_NE(LoaderSim(o, *source).schedule().refused.find("no whole batch of 33 records"), std::string::npos);
}

// RETURNS: the message of the RunError a loader run over `files` throws ("" when none).
std::string run_error(const FileSet& files, bool verify_crc) {
  try {
    auto source = make_tfrecord_source(files, "psync", verify_crc, 4096);
    LoaderOptions o;
    o.batch_size = 2;
    o.workers = 1;
    o.warmup_steps = 0;
    LoaderSim(o, *source).run();
  } catch (const RunError& e) {
    return e.what();
  }
  return "";
}

TEST(TfRecordSourceTest, CorruptDataNamesShardAndOffsetWhenCrcsAreChecked) {
  TfSet set(16, 2);
  const std::string shard = set.files.absolute_path(1);
  std::string bytes = read_file(shard);
  const std::vector<TfRecordRef> refs = index_tfrecord_shard(shard);
  const TfRecordRef victim = refs[5];
  ASSERT_GT(victim.length, 0u);
  bytes[victim.offset + kTfRecordHeaderBytes + victim.length / 2] ^= 1;
  write_file(shard, bytes);
  const std::string why = run_error(set.files, true);
  EXPECT_NE(why.find(shard), std::string::npos) << why;
  EXPECT_NE(why.find("data CRC of the record at byte offset " + std::to_string(victim.offset)),
            std::string::npos)
      << why;
  EXPECT_EQ(run_error(set.files, false), "") << "verify_crc false reads the data without checking it";
}

TEST(TfRecordSourceTest, ShardCutAfterTheScanNamesShardAndOffset) {
  TfSet set(16, 2);
  auto source = make_tfrecord_source(set.files, "psync", true, 4096);
  const std::string shard = set.files.absolute_path(0);
  const std::vector<TfRecordRef> refs = index_tfrecord_shard(shard);
  std::filesystem::resize_file(shard, refs[6].offset + 20);
  auto reader = source->make_reader();
  reader->start_stream({0}, 1, 0);
  try {
    for (int k = 0; k < 8; ++k) reader->read_next();
    FAIL() << "no error";
  } catch (const RunError& e) {
    const std::string why = e.what();
    EXPECT_NE(why.find("truncated"), std::string::npos) << why;
    EXPECT_NE(why.find("byte offset " + std::to_string(refs[6].offset)), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace feedbench
