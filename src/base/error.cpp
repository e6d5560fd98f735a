// src/base/error.cpp — see error.hpp.
#include "src/base/error.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace starwave {
namespace {

std::mutex g_lock;
std::string g_command;

void escape_byte(std::string& out, unsigned char c) {
  static const char* hex = "0123456789abcdef";
  out += "\\x";
  out += hex[c >> 4];
  out += hex[c & 15];
}

/// Length of the UTF-8 sequence starting at text[i] (0: not a valid one).
std::size_t utf8_length(const std::string& text, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = at(i);
  const std::size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((at(i + k) & 0xc0) != 0x80) return 0;
  if (n == 3 && c == 0xe0 && at(i + 1) < 0xa0) return 0;   // overlong
  if (n == 3 && c == 0xed && at(i + 1) >= 0xa0) return 0;  // a surrogate
  if (n == 4 && c == 0xf0 && at(i + 1) < 0x90) return 0;   // overlong
  if (n == 4 && c == 0xf4 && at(i + 1) >= 0x90) return 0;  // past U+10FFFF
  return n;
}

}  // namespace

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\n')
        out += "\\n";
      else if (c == '\r')
        out += "\\r";
      else if (c == '\t')
        out += "\\t";
      else if (c < 0x20 || c == 0x7f)
        escape_byte(out, c);
      else
        out += char(c);
      ++i;
      continue;
    }
    const std::size_t n = utf8_length(text, i);
    if (n == 0) {
      escape_byte(out, c);
      ++i;
      continue;
    }
    const unsigned char c1 = static_cast<unsigned char>(text[i + 1]);
    const bool c1_control = n == 2 && c == 0xc2 && c1 < 0xa0;  // U+0080–U+009F
    const bool separator = n == 3 && c == 0xe2 && c1 == 0x80 &&
                           (static_cast<unsigned char>(text[i + 2]) == 0xa8 ||
                            static_cast<unsigned char>(text[i + 2]) == 0xa9);  // U+2028, U+2029
    if (c1_control || separator) {
      static const char* hex = "0123456789abcdef";
      const unsigned code = c1_control ? c1 : 0x2000u + (static_cast<unsigned char>(text[i + 2]) - 0x80u);
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += hex[(code >> shift) & 15];
    } else {
      out.append(text, i, n);
    }
    i += n;
  }
  return out;
}

void set_command(const std::string& cmd) {
  std::lock_guard<std::mutex> hold(g_lock);
  g_command = cmd;
}

std::string error_prefix() {
  std::lock_guard<std::mutex> hold(g_lock);
  return g_command.empty() ? "starwave: error: " : "starwave " + printable(g_command) + ": error: ";
}

std::string note_prefix() {
  std::lock_guard<std::mutex> hold(g_lock);
  return g_command.empty() ? "starwave: note: " : "starwave " + printable(g_command) + ": note: ";
}

namespace {

std::string bytes_text_digits(double bytes, int digits) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while ((bytes >= 1024 || (u > 0 && bytes >= 999.5)) && u < 6) {  // 1020 MiB: "0.996 GiB", not "1.02e+03 MiB"
    bytes /= 1024;
    ++u;
  }
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f %s", bytes, unit[u]);
  else
    std::snprintf(buf, sizeof buf, "%.*g %s", digits, bytes, unit[u]);
  return buf;
}

}  // namespace

std::string bytes_text(double bytes) { return bytes_text_digits(bytes, 3); }

std::pair<std::string, std::string> bytes_text_apart(double a, double b) {
  for (int digits = 3;; ++digits) {
    std::string x = bytes_text_digits(a, digits), y = bytes_text_digits(b, digits);
    if (x != y || a == b || digits == 12) return {x, y};
  }
}

std::string os_cause(int err) {
  switch (err) {
    case ENOSPC:
      return "no space left on device (the disk is full)";
    case EDQUOT:
      return "disk quota exceeded";
    case EFBIG:
      return "file too large (a file-size limit was reached)";
    case EROFS:
      return "read-only file system";
    case EACCES:
    case EPERM:
      return "permission denied";
    default:
      return std::strerror(err);
  }
}

}  // namespace starwave
