// Registers the SimGrid executor (dag_executor.hpp) with the library (local_engine.hpp) when this object
// is linked in: the racksim_simgrid objects are linked as objects, not from an archive, so this
// initialiser always runs in the programs that have them.
#include "sim/engine/dag_executor.hpp"
#include "sim/engine/local_engine.hpp"

namespace racksim {
namespace {
[[maybe_unused]] const bool registered = (register_local_engine(&execute_compiled), true);
}  // namespace
}  // namespace racksim
