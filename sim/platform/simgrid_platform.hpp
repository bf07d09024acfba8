#pragma once
// Instantiates a PlatformModel in this process's SimGrid engine: the hosts and links one compiled run
// needs, and a routing zone that answers every route from the run's route table (link lists and
// latency, per direction). Include
// only from sim/engine .cpp files; the SimGrid types are forward-declared here.
#include <memory>
#include <vector>

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u

namespace racksim {

class PlatformModel;
struct CompiledRun;

class SimgridPlatform {
 public:
  // Creates the SimGrid engine of this process and configures its network model so that times follow
  // the links exactly: CM02 without cross-traffic or TCP window cap (TOOLCHAIN.md). Call once per
  // process, before the constructor below.
  static void init_engine();

  // Builds the hosts and links a compiled run uses as the root zone, routing by the run's route table,
  // and seals it. `model` and `run` must outlive the platform.
  SimgridPlatform(const PlatformModel& model, const CompiledRun& run);
  ~SimgridPlatform();

  simgrid::s4u::Host* host(int host_id) const;
  simgrid::s4u::Link* link(int link_id, bool up) const;  // the SimGrid link of one direction

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace racksim
