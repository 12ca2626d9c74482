// SHA-256 (FIPS 180-4), for kernel-cache keys and entry checksums.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dotcompute::detail {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(const std::string& s) { update(s.data(), s.size()); }
  // The 32-byte digest; the object must not be updated afterwards.
  void finish(uint8_t out[32]);
  std::string hex();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

std::string sha256_hex(const void* data, size_t size);

}  // namespace dotcompute::detail
