// src/base/checksum.hpp — a 64-bit checksum of values' bit patterns: tells whether an input is
// the one a saved state was made from (not a cryptographic hash: it detects change, not
// tampering). Words of 8 bytes are mixed in order, so the same values in another order,
// or one bit changed, give another checksum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace starwave {

class Checksum {
 public:
  void add_word(std::uint64_t w) {
    h_ ^= w + 0x9E3779B97F4A7C15ull + (h_ << 6) + (h_ >> 2);
    h_ *= 0xFF51AFD7ED558CCDull;
    h_ ^= h_ >> 33;
    ++words_;
  }
  void add_bytes(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    std::size_t k = 0;
    for (; k + 8 <= bytes; k += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + k, 8);
      add_word(w);
    }
    if (k < bytes) {  // the tail, zero-padded; its length is mixed in by value()
      std::uint64_t w = 0;
      std::memcpy(&w, p + k, bytes - k);
      add_word(w ^ (std::uint64_t(bytes - k) << 56));
    }
  }
  template <typename T>
  void add(const std::vector<T>& v) {
    add_word(v.size());
    add_bytes(v.data(), v.size() * sizeof(T));
  }
  void add(double x) {
    std::uint64_t w;
    std::memcpy(&w, &x, 8);
    add_word(w);
  }

  std::uint64_t value() const {
    std::uint64_t h = h_ ^ words_;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    return h;
  }
  static std::string hex(std::uint64_t v) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
    return text;
  }
  std::string hex() const { return hex(value()); }

 private:
  std::uint64_t h_ = 0x243F6A8885A308D3ull;
  std::uint64_t words_ = 0;
};

}  // namespace starwave
