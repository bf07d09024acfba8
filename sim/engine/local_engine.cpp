#include "sim/engine/local_engine.hpp"

namespace racksim {

namespace {
LocalEngineFn& slot() {
  static LocalEngineFn fn = nullptr;
  return fn;
}
}  // namespace

void register_local_engine(LocalEngineFn fn) { slot() = fn; }

LocalEngineFn local_engine() { return slot(); }

}  // namespace racksim
