#include "tessera/error.h"
#include "support/text.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace tessera {

size_t utf8_sequence_length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char b = byte(i);
  size_t n = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0;
  if (n == 0 || b > 0xf4 || i + n > text.size()) return 0;
  uint32_t cp = b & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
    } else if (size_t n = utf8_sequence_length(text, i)) {
      i += n;
    } else {
      return false;
    }
  }
  return true;
}

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    const size_t n = b >= 0x80 ? utf8_sequence_length(text, i) : 0;
    // C1 controls (U+0080-U+009F) are valid UTF-8 but not printable: 0xc2 0x80-0x9f.
    const bool c1 = n == 2 && b == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f;
    if (b >= 0x20 && b < 0x7f) {
      out += static_cast<char>(b);
      ++i;
    } else if (n > 0 && !c1) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
      ++i;
    }
  }
  return out;
}

std::string json_error_text(std::string_view what) {
  if (what.rfind("[json.exception.", 0) == 0) {
    size_t end = what.find("] ");
    if (end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  return std::string(what);
}

void internal_error(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "tessera: internal error at %s:%d: %s\n", file, line, what.c_str());
  std::abort();
}

}  // namespace tessera
