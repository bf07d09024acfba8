#pragma once
// racksim's one error type for bad input. Library code never exits: it throws InputError, the CLI
// prints what() on one line and exits 2, the Python bindings raise racksim.InputError (a ValueError).
#include <stdexcept>
#include <string>

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

// Raised when a run is valid input but cannot happen (e.g. a collective asks for a GPU on a failed tray).
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace racksim
