#include "feedbench/dataset/tfrecord.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <nmmintrin.h>
#include <boost/crc.hpp>

#include "feedbench/base/error.h"

namespace feedbench {
namespace {

using Crc32cTable = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

// The CPU's CRC32 instruction computes CRC-32C: about 20 times Boost's table here, and what
// TensorFlow's own reader uses, so a data CRC check costs what it costs there.
__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(std::uint32_t crc, const unsigned char* p,
                                                             std::size_t n) {
  std::uint64_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  auto c32 = std::uint32_t(c);
  for (; n > 0; --n) c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
}

bool have_sse42() {
  static const bool have = __builtin_cpu_supports("sse4.2");
  return have;
}

void put_le64(std::uint64_t v, unsigned char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(v >> (8 * i));
}

std::uint32_t get_le32(const unsigned char* in) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | in[i];
  return v;
}

std::uint64_t get_le64(const unsigned char* in) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | in[i];
  return v;
}

}  // namespace

std::uint32_t crc32c_portable_extend(std::uint32_t crc, const void* data, std::size_t size) {
  // The register of a reflected CRC is the CRC before its final xor; Boost takes its initial
  // value unreflected and reflects it, so continuing from `crc` passes ~crc bit-reversed.
  std::uint32_t init = 0;
  for (int i = 0; i < 32; ++i) init |= ((~crc >> i) & 1u) << (31 - i);
  Crc32cTable table(init);
  table.process_bytes(data, size);
  return table.checksum();
}

std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  return have_sse42() ? crc32c_sse42(crc, p, size) : crc32c_portable_extend(crc, p, size);
}

void tfrecord_header(std::uint64_t length, unsigned char out[kTfRecordHeaderBytes]) {
  put_le64(length, out);
  const std::uint32_t masked = mask_crc(crc32c(out, 8));
  for (int i = 0; i < 4; ++i) out[8 + i] = static_cast<unsigned char>(masked >> (8 * i));
}

std::uint64_t tfrecord_parse_header(const unsigned char header[kTfRecordHeaderBytes],
                                    const std::string& where, std::uint64_t offset) {
  if (get_le32(header + 8) != mask_crc(crc32c(header, 8)))
    throw RunError(where +
                   ": not a TFRecord shard, or a corrupt one: the length CRC of the record at byte offset " +
                   std::to_string(offset) + " does not match");
  return get_le64(header);
}

std::vector<TfRecordRef> index_tfrecord_shard(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw RunError(errno_message("open " + path, errno));
  std::vector<TfRecordRef> records;
  try {
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw RunError(errno_message("stat " + path, errno));
    const auto size = std::uint64_t(st.st_size);
    std::uint64_t offset = 0;
    while (offset < size) {
      unsigned char header[kTfRecordHeaderBytes];
      const ssize_t n = ::pread(fd, header, sizeof header, off_t(offset));
      if (n < 0) throw RunError(errno_message("read " + path, errno));
      if (std::uint64_t(n) < sizeof header)
        throw RunError(path + ": truncated TFRecord shard: the record at byte offset " +
                       std::to_string(offset) + " has " + std::to_string(size - offset) +
                       " bytes, fewer than its 12-byte header");
      const std::uint64_t length = tfrecord_parse_header(header, path, offset);
      if (size - offset < kTfRecordFramingBytes || length > size - offset - kTfRecordFramingBytes)
        throw RunError(path + ": truncated TFRecord shard: the record at byte offset " +
                       std::to_string(offset) + " announces " + std::to_string(length) +
                       " data bytes, but the file ends " + std::to_string(size - offset) +
                       " bytes after it begins");
      records.push_back({offset, length});
      offset += length + kTfRecordFramingBytes;
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return records;
}

}  // namespace feedbench
