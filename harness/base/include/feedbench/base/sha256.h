// SHA-256 through OpenSSL's libcrypto (hardware-accelerated where the CPU has it).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace feedbench {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void update(const void* data, std::size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  // RETURNS: lowercase hex digest. The object can be reused after reset().
  std::string hex_digest();
  void reset();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// RETURNS: hex SHA-256 of `text`.
std::string sha256_hex(std::string_view text);

}  // namespace feedbench
