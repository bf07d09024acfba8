#pragma once
// racksim's one error type for bad input. Library code never exits: it throws InputError, the CLI
// prints what() on one line and exits 2, the Python bindings raise racksim.InputError (a ValueError).
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace racksim {

class InputError : public std::runtime_error {
 public:
  // where: file name or "--option" the value came from; json_path: RFC 6901 pointer inside it ("" if none);
  // value: the offending value as text; allowed: what would have been accepted.
  InputError(std::string where, std::string json_path, std::string value, std::string allowed);
  // A free-form message for errors that have no single bad value.
  explicit InputError(const std::string& message);

  const std::string& where() const { return where_; }
  const std::string& json_path() const { return json_path_; }
  const std::string& value() const { return value_; }
  const std::string& allowed() const { return allowed_; }

 private:
  std::string where_, json_path_, value_, allowed_;
};

// A number as an error message shows it: the shortest text that reads back as the same double ("1.0000001",
// "1e+300", "0.5"), never std::to_string's fixed six decimals ("1.000000" for 1.0000001, 0.000000 for 1e-7,
// 309 digits for 1e300).
std::string number_text(double value);

// Text from the user made safe to echo on one line: control characters become \n, \t, \r or \xNN,
// bytes that are not valid UTF-8 become \xNN (so the text can also go into JSON), and text longer than
// `max_bytes` keeps its head and its last 40 bytes around " ... (N bytes) ... ". Every error message goes
// through it: a value with a newline must not break the one-line rule, a 50 000-character value must not
// fill the terminal.
inline constexpr std::size_t kMaxEchoBytes = 200;       // one echoed value (a path, a name, a JSON excerpt)
inline constexpr std::size_t kMaxMessageBytes = 4000;   // a whole message (lists of valid names included)
std::string one_line(std::string_view text, std::size_t max_bytes = kMaxEchoBytes);

// Valid input the discrete-event engine will not run: its schedule over the memory budget, or its
// simulation over the engine's time budget (models/collectives/registry.cpp check_schedule_size,
// sim/engine/aggregation.cpp). The closed form can still price it: `racksim collective` and `sweep` with --model
// auto, and System.collective(model="auto"), answer with it, saying why; everything else treats it as the
// InputError it is (exit 2, racksim.InputError).
class EngineLimitError : public InputError {
 public:
  using InputError::InputError;
};

// Raised when a run is valid input but cannot happen (e.g. a collective asks for a GPU on a failed tray).
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace racksim
