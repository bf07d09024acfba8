#include "sim/core/json_reader.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "sim/core/suggest.hpp"

namespace racksim {

namespace {
// The deepest nesting of arrays and objects in `text` (strings skipped), stopping once it passes `limit`.
// A cheap scan before parsing: nlohmann/json parses deep documents fine, but printing or walking one
// recurses once per level (a 100 000-deep value in an error message overflowed the stack).
std::size_t nesting_depth(const std::string& text, std::size_t limit) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) break;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}
}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& where) {
  if (const std::size_t depth = nesting_depth(text, kMaxJsonDepth); depth > kMaxJsonDepth)
    throw InputError(where, "", "JSON nested more than " + std::to_string(kMaxJsonDepth) + " levels deep",
                     "at most " + std::to_string(kMaxJsonDepth) + " levels of arrays and objects");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(one_line(where) + ": malformed JSON at byte " + std::to_string(e.byte) + ": " + one_line(e.what()));
  } catch (const nlohmann::json::out_of_range& e) {  // a number beyond double range, e.g. 1e400
    throw InputError(one_line(where) + ": number out of range: " + one_line(e.what()));
  }
}

std::string dump_json(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string dump_json(const nlohmann::ordered_json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string read_json_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "'" + path + "'", "an existing, readable JSON file");
  // Read in blocks into one string (a stringstream copied the 50 KB calibration character by character
  // and then once more: ~0.1 ms of every call). Binary: the bytes as they are, as the stream gave them here.
  std::string text;
  char block[1 << 16];
  while (in.read(block, sizeof block) || in.gcount() > 0) text.append(block, static_cast<std::size_t>(in.gcount()));
  return text;
}

nlohmann::json parse_json_file(const std::string& path) { return parse_json_text(read_json_file_text(path), path); }

namespace {
// Appends at most about `budget` characters of `value`, descending at most `levels` levels: never the
// whole of a huge or deep value.
void excerpt_into(std::string& out, const nlohmann::json& value, std::size_t budget, int levels) {
  if (out.size() >= budget) return;
  if (!value.is_structured()) {
    out += dump_json(value.is_string() && value.get_ref<const std::string&>().size() > budget
                         ? nlohmann::json(value.get_ref<const std::string&>().substr(0, budget))
                         : value);
    return;
  }
  const bool object = value.is_object();
  out += object ? '{' : '[';
  if (levels <= 0 && !value.empty()) {
    out += "...";
  } else {
    bool first = true;
    for (auto it = value.begin(); it != value.end() && out.size() < budget; ++it) {
      if (!first) out += ',';
      first = false;
      if (object) out += dump_json(nlohmann::json(it.key())) + ':';
      excerpt_into(out, it.value(), budget, levels - 1);
    }
  }
  out += object ? '}' : ']';
}
}  // namespace

std::string json_excerpt(const nlohmann::json& value) {
  constexpr std::size_t kExcerptChars = 60;
  std::string text;
  excerpt_into(text, value, kExcerptChars, 4);
  if (text.size() > kExcerptChars) text = text.substr(0, kExcerptChars - 3) + "...";
  return one_line(text);
}

JsonObjectReader::JsonObjectReader(const nlohmann::json& object, std::string where, std::string pointer)
    : object_(object), where_(std::move(where)), pointer_(std::move(pointer)) {
  if (!object_.is_object())
    throw InputError(where_, pointer_.empty() ? "/" : pointer_, json_excerpt(object_), "a JSON object");
}

bool JsonObjectReader::has(const std::string& key) const {
  known_.insert(key);
  return object_.contains(key);
}

void JsonObjectReader::fail(const std::string& key, const std::string& value, const std::string& allowed) const {
  throw InputError(where_, pointer_of(key), value, allowed);
}

const nlohmann::json& JsonObjectReader::raw(const std::string& key) {
  known_.insert(key);
  auto it = object_.find(key);
  if (it == object_.end()) {
    // A misspelt key is usually why a required one is missing: name it beside the missing one.
    std::vector<std::string> unread;
    for (auto k = object_.begin(); k != object_.end(); ++k)
      if (!consumed_.count(k.key()) && !known_.count(k.key())) unread.push_back(k.key());
    std::string beside;
    for (const auto& u : unread)
      if (nearest_name(u, {key}) == key) {
        beside = " (the object has an unknown key '" + u + "': did you mean '" + key + "'?)";
        break;
      }
    throw InputError(where_, pointer_of(key), "(missing)", "required key '" + key + "'" + beside);
  }
  consumed_.insert(key);
  return *it;
}

std::string JsonObjectReader::string(const std::string& key) {
  const auto& v = raw(key);
  if (!v.is_string() || v.get<std::string>().empty()) fail(key, json_excerpt(v), "a non-empty string");
  return v.get<std::string>();
}

std::string JsonObjectReader::string_or(const std::string& key, const std::string& fallback) {
  return has(key) ? string(key) : fallback;
}

std::string JsonObjectReader::one_of(const std::string& key, const std::vector<std::string>& allowed) {
  const auto& v = raw(key);
  if (v.is_string()) {
    for (const auto& a : allowed)
      if (v.get<std::string>() == a) return a;
  }
  fail(key, json_excerpt(v), "one of " + comma_list(allowed));
}

std::string JsonObjectReader::one_of_or(const std::string& key, const std::vector<std::string>& allowed,
                                        const std::string& fallback) {
  return has(key) ? one_of(key, allowed) : fallback;
}

double JsonObjectReader::number_in(const std::string& key, double lo, double hi) {
  const auto& v = raw(key);
  // nlohmann/json parses NaN/Infinity literals as errors, but a NaN can arrive from code: check anyway.
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < lo || v.get<double>() > hi) {
    std::ostringstream range;
    range << "a finite number in [" << lo << ", " << hi << "]";
    fail(key, json_excerpt(v), range.str());
  }
  return v.get<double>();
}

double JsonObjectReader::number_in_or(const std::string& key, double lo, double hi, double fallback) {
  return has(key) ? number_in(key, lo, hi) : fallback;
}

double JsonObjectReader::positive(const std::string& key) {
  const auto& v = raw(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
    fail(key, json_excerpt(v), "a finite number > 0");
  return v.get<double>();
}

double JsonObjectReader::positive_or(const std::string& key, double fallback) {
  return has(key) ? positive(key) : fallback;
}

double JsonObjectReader::non_negative(const std::string& key) {
  const auto& v = raw(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    fail(key, json_excerpt(v), "a finite number >= 0");
  return v.get<double>();
}

double JsonObjectReader::non_negative_or(const std::string& key, double fallback) {
  return has(key) ? non_negative(key) : fallback;
}

long JsonObjectReader::integer_in(const std::string& key, long lo, long hi) {
  const auto& v = raw(key);
  if (!v.is_number_integer() || v.get<long>() < lo || v.get<long>() > hi)
    fail(key, json_excerpt(v), "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v.get<long>();
}

long JsonObjectReader::integer_in_or(const std::string& key, long lo, long hi, long fallback) {
  return has(key) ? integer_in(key, lo, hi) : fallback;
}

bool JsonObjectReader::boolean(const std::string& key) {
  const auto& v = raw(key);
  if (!v.is_boolean()) fail(key, json_excerpt(v), "true or false");
  return v.get<bool>();
}

bool JsonObjectReader::boolean_or(const std::string& key, bool fallback) {
  return has(key) ? boolean(key) : fallback;
}

JsonObjectReader JsonObjectReader::object(const std::string& key) {
  return JsonObjectReader(raw(key), where_, pointer_of(key));
}

const nlohmann::json& JsonObjectReader::array(const std::string& key) {
  const auto& v = raw(key);
  if (!v.is_array()) fail(key, json_excerpt(v), "a JSON array");
  return v;
}

std::vector<std::string> JsonObjectReader::strings(const std::string& key) {
  const nlohmann::json& a = array(key);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string()) throw InputError(where_, pointer_of(key) + "/" + std::to_string(i), json_excerpt(a[i]), "a string");
    out.push_back(a[i].get<std::string>());
  }
  return out;
}

void JsonObjectReader::finish() const {
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (consumed_.count(it.key())) continue;
    std::vector<std::string> known(known_.begin(), known_.end());
    throw InputError(where_, pointer_of(it.key()), "unknown key '" + it.key() + "'" + did_you_mean(it.key(), known),
                     known.empty() ? "no keys here" : "the keys " + comma_list(known));
  }
}

JsonObjectReader array_element(const nlohmann::json& array, std::size_t i, const std::string& where,
                               const std::string& array_pointer) {
  return JsonObjectReader(array.at(i), where, array_pointer + "/" + std::to_string(i));
}

}  // namespace racksim
