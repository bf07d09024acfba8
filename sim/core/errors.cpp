#include "sim/core/errors.hpp"

#include <fmt/format.h>

namespace racksim {

namespace {
// Length of the valid UTF-8 sequence starting at s[i] (1-4), or 0 when the bytes there are not one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte (no overlongs, no surrogates)
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}
}  // namespace

std::string one_line(std::string_view text, std::size_t max_bytes) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const std::size_t n = utf8_length(text, i);
    if (n == 1 && c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    } else if (n > 1) {
      out.append(text.substr(i, n));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
    i += n == 0 ? 1 : n;
  }
  // Too long: keep the head and the tail (where messages put "(unknown system)" and the like), cut on
  // character boundaries.
  constexpr std::size_t kTail = 40;
  if (out.size() > max_bytes && max_bytes > 2 * kTail) {
    const auto continuation = [&](std::size_t k) { return (static_cast<unsigned char>(out[k]) & 0xC0) == 0x80; };
    std::size_t head = max_bytes - kTail;
    while (head > 0 && continuation(head)) --head;
    std::size_t tail = out.size() - kTail;
    while (tail < out.size() && continuation(tail)) ++tail;
    out = out.substr(0, head) + " ... (" + std::to_string(text.size()) + " bytes) ... " + out.substr(tail);
  }
  return out;
}

namespace {
std::string compose(const std::string& where, const std::string& json_path, const std::string& value,
                    const std::string& allowed) {
  // append() rather than operator+: GCC 12 reports a false -Wrestrict on chained string additions.
  std::string msg;
  msg.append(one_line(where));
  if (!json_path.empty()) {
    if (!msg.empty()) msg.append(": ");
    msg.append("at ").append(one_line(json_path));  // a JSON key is user text too (a newline in a key)
  }
  if (!msg.empty()) msg.append(": ");
  msg.append("invalid value ").append(one_line(value));
  // The list of allowed values gets what is left of the message's bound (a topology file's long
  // reference keys once made a 4.3 KB message).
  const std::size_t used = msg.size() + 11;
  if (!allowed.empty())
    msg.append("; allowed: ").append(one_line(allowed, used + 200 < kMaxMessageBytes ? kMaxMessageBytes - used : 200));
  return msg;
}
}  // namespace

InputError::InputError(std::string where, std::string json_path, std::string value, std::string allowed)
    : std::runtime_error(compose(where, json_path, value, allowed)),
      where_(std::move(where)),
      json_path_(std::move(json_path)),
      value_(std::move(value)),
      allowed_(std::move(allowed)) {}

InputError::InputError(const std::string& message) : std::runtime_error(one_line(message, kMaxMessageBytes)) {}

std::string number_text(double value) { return fmt::format("{}", value); }

}  // namespace racksim
