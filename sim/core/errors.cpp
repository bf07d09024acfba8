#include "sim/core/errors.hpp"

namespace racksim {
namespace {
std::string compose(const std::string& where, const std::string& json_path, const std::string& value,
                    const std::string& allowed) {
  // append() rather than operator+: GCC 12 reports a false -Wrestrict on chained string additions.
  std::string msg;
  msg.append(where);
  if (!json_path.empty()) {
    if (!msg.empty()) msg.append(": ");
    msg.append("at ").append(json_path);
  }
  if (!msg.empty()) msg.append(": ");
  msg.append("invalid value ").append(value);
  if (!allowed.empty()) msg.append("; allowed: ").append(allowed);
  return msg;
}
}  // namespace

InputError::InputError(std::string where, std::string json_path, std::string value, std::string allowed)
    : std::runtime_error(compose(where, json_path, value, allowed)),
      where_(std::move(where)),
      json_path_(std::move(json_path)),
      value_(std::move(value)),
      allowed_(std::move(allowed)) {}

InputError::InputError(const std::string& message) : std::runtime_error(message) {}

}  // namespace racksim
