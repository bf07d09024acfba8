#pragma once
// Symbolic execution of a Schedule, in task order, to prove it computes its collective. Each holder (a
// rank, or an NVLink domain's switch plane) holds per chunk the set of ranks whose contributions it
// contains; a transfer with reduce adds the sender's set to the receiver's (they must be disjoint: a
// contribution counted twice is a wrong sum), without reduce it replaces it (replacing a set by the same
// set is a redundant transfer: a byte received twice). At the end every rank must hold what the op
// promises (chunk_layout.hpp):
//   all_reduce      every chunk reduced over all ranks
//   reduce_scatter  rank r: its own chunks (c % n == r) reduced over all ranks
//   all_gather      every chunk c, from its owner c % n
//   all_to_all      rank d: piece (s, d) from every s
//   broadcast       the root's data everywhere
//   send_recv       rank r+1: rank r's buffer
// It also checks the structure: ids in order, dependencies that point backwards, are not repeated and
// are needed (the dependency delivered data this task sends, or shares its sender or a receiver: a
// pipeline stream), that a task depends on every task that wrote the data it sends since that data was
// last overwritten, endpoints and chunks in range, and that every task's bytes equal its chunks' sizes.
#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/schedule.hpp"

namespace racksim {

// The violations found (empty: the schedule is correct), at most max_violations of them (a last line
// says how many more there were).
std::vector<std::string> check_schedule(const Schedule& schedule, std::size_t max_violations = 50);

// The same with the count kept apart: `listed` holds at most max_violations violations (no summary
// line), `total` counts all of them.
struct ScheduleCheck {
  std::vector<std::string> listed;
  std::size_t total = 0;
};
ScheduleCheck check_schedule_counted(const Schedule& schedule, std::size_t max_violations = 50);

// Bytes each rank sends and receives (a multicast counts once per receiver at the receivers and on the
// switch side), and what the switch planes receive and send.
struct ScheduleTraffic {
  std::vector<std::uint64_t> sent, received;  // per rank
  std::uint64_t switch_received = 0, switch_sent = 0;
  std::uint64_t fabric_received = 0, fabric_sent = 0;  // to and from the scale-out fabric (CollNet)
};
ScheduleTraffic schedule_traffic(const Schedule& schedule);

}  // namespace racksim
