// TFRecord shards: CRC-32C against published vectors, TensorFlow's framing, gen --layout tfrecord
// parsed back record by record, and refusals that name the shard and the byte offset.
#include "feedbench/tfrecord.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "feedbench/dataset.h"
#include "feedbench/error.h"
#include "feedbench/generator.h"
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
      EXPECT_EQ(crc32c_extend(crc32c(data.data(), cut), data.data() + cut, n - cut), whole) << n << " " << cut;
      EXPECT_EQ(crc32c_portable_extend(crc32c_portable_extend(0, data.data(), cut), data.data() + cut, n - cut),
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

}  // namespace
}  // namespace feedbench
