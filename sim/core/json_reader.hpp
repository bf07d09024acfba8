#pragma once
// Strict reading of JSON objects: every key must be consumed (unknown keys are errors), every value is
// checked where it is read, and every error names the file and the JSON pointer of the bad value.
// Include only from .cpp files: nlohmann/json is a heavy header.
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/core/errors.hpp"

namespace racksim {

// Deepest nesting of arrays and objects accepted in any input file. The shipped files nest at most 5
// levels (calibrate/default.json's fit summaries); 64 leaves room for any hand-written file while
// keeping every recursive walk of a document shallow.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Parses text as JSON; a syntax error becomes an InputError naming `where` and the byte offset, and so
// does a document nested deeper than kMaxJsonDepth.
nlohmann::json parse_json_text(const std::string& text, const std::string& where);
// Reads and parses a file; a missing file is an InputError.
nlohmann::json parse_json_file(const std::string& path);
// The bytes of the file parse_json_file reads (InputError, as it, when it cannot be read).
std::string read_json_file_text(const std::string& path);

class JsonObjectReader {
 public:
  // `where`: the file (or other origin) named in errors; `pointer`: this object's JSON pointer.
  JsonObjectReader(const nlohmann::json& object, std::string where, std::string pointer = "");

  bool has(const std::string& key) const;
  const nlohmann::json& raw(const std::string& key);  // marks key consumed; throws if missing

  std::string string(const std::string& key);
  std::string string_or(const std::string& key, const std::string& fallback);
  std::string one_of(const std::string& key, const std::vector<std::string>& allowed);
  std::string one_of_or(const std::string& key, const std::vector<std::string>& allowed,
                        const std::string& fallback);
  double positive(const std::string& key);                          // finite, > 0
  double positive_or(const std::string& key, double fallback);
  double non_negative(const std::string& key);                      // finite, >= 0
  double non_negative_or(const std::string& key, double fallback);
  double number_in(const std::string& key, double lo, double hi);   // finite, lo <= x <= hi
  double number_in_or(const std::string& key, double lo, double hi, double fallback);
  long integer_in(const std::string& key, long lo, long hi);
  long integer_in_or(const std::string& key, long lo, long hi, long fallback);
  bool boolean(const std::string& key);
  bool boolean_or(const std::string& key, bool fallback);
  JsonObjectReader object(const std::string& key);
  const nlohmann::json& array(const std::string& key);              // marks consumed; checks it is an array
  std::vector<std::string> strings(const std::string& key);        // an array of strings

  std::string pointer_of(const std::string& key) const { return pointer_ + "/" + key; }
  const std::string& where() const { return where_; }
  const std::string& pointer() const { return pointer_; }
  [[noreturn]] void fail(const std::string& key, const std::string& value, const std::string& allowed) const;

  // Throws on the first key that was never read, listing the keys this object accepts.
  void finish() const;

 private:
  const nlohmann::json& object_;
  std::string where_, pointer_;
  std::set<std::string> consumed_;
  mutable std::set<std::string> known_;  // every key asked for, present or not: the accepted keys
};

// A JsonObjectReader for element i of an array, checking that it is an object.
JsonObjectReader array_element(const nlohmann::json& array, std::size_t i, const std::string& where,
                               const std::string& array_pointer);

// Shortened text of a JSON value for error messages (at most ~60 characters, never a walk of the whole
// value, escaped to one line).
std::string json_excerpt(const nlohmann::json& value);

// value.dump(indent), but text that is not valid UTF-8 becomes U+FFFD instead of a type_error: every
// JSON racksim writes goes through here, because names in it can come from the user's files.
std::string dump_json(const nlohmann::json& value, int indent = -1);
std::string dump_json(const nlohmann::ordered_json& value, int indent = -1);  // keys in insertion order

}  // namespace racksim
