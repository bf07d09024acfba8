#include "models/collectives/schedule_builder.hpp"

#include <algorithm>

#include "models/collectives/chunk_layout.hpp"

namespace racksim {

ScheduleBuilder::ScheduleBuilder(const CollectiveRequest& request, std::string algorithm, int chunks) {
  schedule_.request = request;
  schedule_.algorithm = std::move(algorithm);
  schedule_.chunks = chunks;
  writers_.assign(request.gpus.size(), IntervalMap(chunks, -1));
}

int ScheduleBuilder::phase(const std::string& name) {
  auto& phases = schedule_.phases;
  const auto it = std::find(phases.begin(), phases.end(), name);
  if (it != phases.end()) return static_cast<int>(it - phases.begin());
  phases.push_back(name);
  return static_cast<int>(phases.size()) - 1;
}

int ScheduleBuilder::holder(const Endpoint& e) {
  if (e.kind == Endpoint::Kind::rank) return e.index;
  auto [it, inserted] = plane_holders_.emplace(std::make_pair(static_cast<int>(e.kind), e.index), static_cast<int>(writers_.size()));
  if (inserted) writers_.emplace_back(schedule_.chunks, -1);
  return it->second;
}

int ScheduleBuilder::group_with(int value, int task) {
  for (const auto& [from, to] : memo_)
    if (from == value) return to;
  std::vector<int> members;
  if (value >= 0) members = groups_[value];
  if (value <= -2) members.push_back(-(value + 2));
  members.push_back(task);  // task ids grow, so the list stays sorted
  groups_.push_back(std::move(members));
  const int id = static_cast<int>(groups_.size()) - 1;
  memo_.emplace_back(value, id);
  return id;
}

int ScheduleBuilder::transfer(Endpoint src, const std::vector<Endpoint>& dsts, int chunk, int count, bool reduce,
                              int phase, const std::vector<int>& after) {
  return add_task(src, dsts, chunk, count, reduce, phase, after.data(), after.size());
}

int ScheduleBuilder::transfer_one(Endpoint src, Endpoint dst, int chunk, int count, bool reduce, int phase, int after_task) {
  return add_task(src, std::vector<Endpoint>{dst}, chunk, count, reduce, phase, after_task >= 0 ? &after_task : nullptr,
                  after_task >= 0 ? 1 : 0);
}

int ScheduleBuilder::add_task(Endpoint src, std::vector<Endpoint> dsts, int chunk, int count, bool reduce, int phase,
                              const int* after, std::size_t after_count) {
  Task t;
  t.id = static_cast<int>(schedule_.tasks.size());
  t.src = src;
  t.dsts = std::move(dsts);
  t.chunk = chunk;
  t.chunk_count = count;
  t.reduce = reduce;
  t.phase = phase;
  const auto& req = schedule_.request;
  t.bytes = chunk_range_bytes(req.op, req.bytes, ranks(), schedule_.chunks, chunk, count);

  // Data dependencies: whoever wrote these chunks at the source. A writer value >= 0 is a group of
  // tasks (reductions), <= -2 the single task -(value + 2), -1 nobody.
  std::vector<int> deps;
  if (after_count > 0) {  // the ordering ones and the writers: one allocation
    deps.reserve(after_count + 2);
    deps.assign(after, after + after_count);
  }
  int last_value = -1;
  writers_[holder(src)].for_each(chunk, chunk + count, [&](int, int, int value) {
    if (value == -1 || value == last_value) return;
    last_value = value;
    if (value <= -2) {
      deps.push_back(-(value + 2));
    } else {
      deps.insert(deps.end(), groups_[value].begin(), groups_[value].end());
    }
  });
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  t.deps = std::move(deps);

  // The destinations now hold data written by this task.
  memo_.clear();
  for (const auto& d : t.dsts) {
    auto& map = writers_[holder(d)];
    if (reduce) {
      map.update(chunk, chunk + count, [&](int, int, int value) { return group_with(value, t.id); });
    } else {
      map.assign(chunk, chunk + count, -(t.id + 2));
    }
  }
  schedule_.tasks.push_back(std::move(t));
  return schedule_.tasks.back().id;
}

void ScheduleBuilder::append_note(const std::string& text) {
  if (text.empty()) return;
  if (!schedule_.note.empty()) schedule_.note += "; ";
  schedule_.note += text;
}

Schedule ScheduleBuilder::finish() { return std::move(schedule_); }

}  // namespace racksim
