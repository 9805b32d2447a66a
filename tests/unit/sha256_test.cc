#include "feedbench/base/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace feedbench {
namespace {

// Known answers from FIPS 180-2.
TEST(Sha256Test, KnownAnswers) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, IncrementalEqualsOneShot) {
  std::string data(1 << 20, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31 + 7);
  Sha256 hash;
  for (std::size_t off = 0; off < data.size(); off += 4097) {
    hash.update(data.data() + off, std::min<std::size_t>(4097, data.size() - off));
  }
  EXPECT_EQ(hash.hex_digest(), sha256_hex(data));
}

TEST(Sha256Test, ReusableAfterDigestAndReset) {
  Sha256 hash;
  hash.update("abc");
  const std::string first = hash.hex_digest();
  hash.update("abc");
  EXPECT_EQ(hash.hex_digest(), first);
  hash.update("garbage");
  hash.reset();
  hash.update("abc");
  EXPECT_EQ(hash.hex_digest(), first);
  Sha256 moved = std::move(hash);
  moved.update("");
  EXPECT_EQ(moved.hex_digest(), sha256_hex(""));
}

}  // namespace
}  // namespace feedbench
