#pragma once
// Builds a Schedule task by task and derives data dependencies: it remembers, for every holder (rank or
// switch plane) and chunk, which tasks wrote the data there since it was last overwritten, and makes a
// new task that sends those chunks depend on exactly them. Algorithms add ordering dependencies
// (a sender's or receiver's previous piece, which is what makes a pipeline) explicitly.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "models/collectives/interval_map.hpp"
#include "models/collectives/schedule.hpp"

namespace racksim {

class ScheduleBuilder {
 public:
  // `algorithm`: full registry name ("all_reduce/ring"); `chunks`: the logical pieces (chunk_layout.hpp).
  ScheduleBuilder(const CollectiveRequest& request, std::string algorithm, int chunks);

  int ranks() const { return static_cast<int>(schedule_.request.gpus.size()); }
  int chunks() const { return schedule_.chunks; }
  // Index of a phase, added on first use.
  int phase(const std::string& name);

  // Moves chunks [chunk, chunk + count) from src to each of dsts (reduce: the receiver combines).
  // Dependencies: the tasks that wrote those chunks at src since their last overwrite, plus `after`.
  // Returns the task id.
  int transfer(Endpoint src, const std::vector<Endpoint>& dsts, int chunk, int count, bool reduce, int phase,
               const std::vector<int>& after = {});
  // The same for one destination and at most one ordering dependency (`after_task` < 0: none): the rings'
  // path, without the two small vectors a call above builds and drops (a 25-size sweep of 72-GPU rings
  // makes 255 600 transfers).
  int transfer_one(Endpoint src, Endpoint dst, int chunk, int count, bool reduce, int phase, int after_task = -1);

  void reserve(long tasks) { schedule_.tasks.reserve(static_cast<std::size_t>(std::max(0L, tasks))); }
  void append_note(const std::string& text);
  // The pipeline runs in `pieces` where NCCL's chunks would be `nccl_chunks` (Schedule::pipeline_pieces).
  void note_lowered_pipeline(long pieces, long nccl_chunks) {
    schedule_.pipeline_pieces = pieces;
    schedule_.nccl_chunks = nccl_chunks;
  }
  // What a result built on this schedule rests on or may miss (Schedule::warnings), after exec_terms' own.
  void append_warning(const std::string& text) { schedule_.warnings.push_back(text); }
  std::size_t task_count() const { return schedule_.tasks.size(); }
  Schedule finish();

 private:
  int add_task(Endpoint src, std::vector<Endpoint> dsts, int chunk, int count, bool reduce, int phase, const int* after,
               std::size_t after_count);
  int holder(const Endpoint& e);
  int group_with(int value, int task);  // writer value plus one task, as a group (memoised per transfer)

  Schedule schedule_;
  std::vector<IntervalMap> writers_;        // per holder, per chunk: -1 none, <= -2 task -(v+2), >= 0 a group
  std::vector<std::vector<int>> groups_;    // group id -> sorted task ids
  std::map<std::pair<int, int>, int> plane_holders_;  // (plane kind, domain or rail) -> holder index
  std::vector<std::pair<int, int>> memo_;   // (old group, new group) of the current reduce transfer
};

}  // namespace racksim
