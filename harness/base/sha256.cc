// SHA-256 through OpenSSL's EVP interface, which picks the CPU's SHA extensions when present.
#include "feedbench/base/sha256.h"

#include <openssl/evp.h>

#include "feedbench/base/error.h"

namespace feedbench {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
  Impl() : ctx(EVP_MD_CTX_new()) { FB_CHECK(ctx != nullptr, "EVP_MD_CTX_new failed"); }
  ~Impl() { EVP_MD_CTX_free(ctx); }
  void init() { FB_CHECK(EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1, "EVP_DigestInit_ex"); }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) { impl_->init(); }
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(const void* data, std::size_t size) {
  if (size == 0) return;
  FB_CHECK(EVP_DigestUpdate(impl_->ctx, data, size) == 1, "EVP_DigestUpdate");
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  FB_CHECK(EVP_DigestFinal_ex(impl_->ctx, digest, &length) == 1, "EVP_DigestFinal_ex");
  static const char kHex[] = "0123456789abcdef";
  std::string out(std::size_t(length) * 2, '0');
  for (std::size_t i = 0; i < length; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xF];
  }
  // Ready for the next message without an explicit reset().
  impl_->init();
  return out;
}

void Sha256::reset() { impl_->init(); }

std::string sha256_hex(std::string_view text) {
  Sha256 hash;
  hash.update(text);
  return hash.hex_digest();
}

}  // namespace feedbench
