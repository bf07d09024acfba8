#pragma once
// One object of type T made "the active one" on this thread while a ThreadScope<T> lives; scopes nest (the
// previous one comes back when the inner scope ends). The planner's and the analytic model's caches use it
// so that code deep in a search finds the cache its caller set up without passing it through every call
// (models/analytic/flow_cost.hpp FlowCache, models/planner/step_costs.hpp LayerCostCache).
namespace racksim {

template <typename T>
class ThreadScope {
 public:
  explicit ThreadScope(T& object) : previous_(active_) { active_ = &object; }
  ~ThreadScope() { active_ = previous_; }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;
  // The innermost live scope's object on this thread, nullptr when none.
  static T* active() { return active_; }

 private:
  static inline thread_local T* active_ = nullptr;
  T* previous_;
};

}  // namespace racksim
