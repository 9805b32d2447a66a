// TFRecord shards, TensorFlow's format byte for byte: each record is
//   uint64 length (little-endian) | uint32 masked_crc32c(the 8 length bytes) |
//   data[length] | uint32 masked_crc32c(data)
// with CRC-32C (Castagnoli) masked as ((crc >> 15) | (crc << 17)) + 0xa282ead8.
// `gen --layout tfrecord` writes them; the loader's samples "tfrecord" reads them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace feedbench {

// Bytes of a record around its data: 8 length + 4 length CRC before, 4 data CRC after.
inline constexpr std::uint64_t kTfRecordHeaderBytes = 12;
inline constexpr std::uint64_t kTfRecordFramingBytes = 16;

// RETURNS: CRC-32C of `size` bytes at `data`, continuing `crc` (the CRC of the bytes before;
// 0 to start). The SSE4.2 instruction where the CPU has it, else Boost.CRC's table.
std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t size);
inline std::uint32_t crc32c(const void* data, std::size_t size) { return crc32c_extend(0, data, size); }

// RETURNS: the same from Boost.CRC's table alone: the fallback, and the reference the
// instruction's path is tested against.
std::uint32_t crc32c_portable_extend(std::uint32_t crc, const void* data, std::size_t size);

// RETURNS: TensorFlow's masked form of a CRC (a CRC stored beside the data it covers).
constexpr std::uint32_t mask_crc(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

// Writes the 12 header bytes of a record of `length` data bytes into `out`.
void tfrecord_header(std::uint64_t length, unsigned char out[kTfRecordHeaderBytes]);

// RETURNS: the data length the header at `header` announces, or throws RunError naming `where`
// and `offset` (the header's byte offset in its shard) when its length CRC does not match.
std::uint64_t tfrecord_parse_header(const unsigned char header[kTfRecordHeaderBytes],
                                    const std::string& where, std::uint64_t offset);

// One record of a shard, as an index lists it.
struct TfRecordRef {
  std::uint64_t offset = 0;  // of its header in the shard
  std::uint64_t length = 0;  // data bytes (the record takes length + 16 bytes of the shard)
};

// Reads every header of the shard at `path` (never the data), checking each length CRC.
// RETURNS: its records in order. Throws RunError naming the shard and the byte offset for a
// header whose CRC does not match (a file that is not TFRecord fails at offset 0), a record
// cut short by the end of the file, or an I/O error.
std::vector<TfRecordRef> index_tfrecord_shard(const std::string& path);

}  // namespace feedbench
