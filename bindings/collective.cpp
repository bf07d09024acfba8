// Collective simulation and the analytic model from Python: filled in when the engine lands.
#include "bindings/bindings.hpp"

namespace racksim::bindings {
void add_collective_bindings(pybind11::module_&) {}
}  // namespace racksim::bindings
