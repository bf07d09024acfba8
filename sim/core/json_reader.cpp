#include "sim/core/json_reader.hpp"

#include <fstream>
#include <sstream>

namespace racksim {

nlohmann::json parse_json_text(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(where + ": malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const nlohmann::json::out_of_range& e) {  // a number beyond double range, e.g. 1e400
    throw InputError(where + ": number out of range: " + e.what());
  }
}

nlohmann::json parse_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "'" + path + "'", "an existing, readable JSON file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_json_text(buffer.str(), path);
}

std::string json_excerpt(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
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
  if (it == object_.end())
    throw InputError(where_, pointer_of(key), "(missing)", "required key '" + key + "'");
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

namespace {
std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}
}  // namespace

std::string JsonObjectReader::one_of(const std::string& key, const std::vector<std::string>& allowed) {
  const auto& v = raw(key);
  if (v.is_string()) {
    for (const auto& a : allowed)
      if (v.get<std::string>() == a) return a;
  }
  fail(key, json_excerpt(v), "one of " + join(allowed));
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

void JsonObjectReader::finish() const {
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (consumed_.count(it.key())) continue;
    std::vector<std::string> known(known_.begin(), known_.end());
    throw InputError(where_, pointer_of(it.key()), "unknown key '" + it.key() + "'",
                     known.empty() ? "no keys here" : "the keys " + join(known));
  }
}

JsonObjectReader array_element(const nlohmann::json& array, std::size_t i, const std::string& where,
                               const std::string& array_pointer) {
  return JsonObjectReader(array.at(i), where, array_pointer + "/" + std::to_string(i));
}

}  // namespace racksim
