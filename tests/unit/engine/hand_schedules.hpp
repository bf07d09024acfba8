#pragma once
// Schedules built by hand for the engine tests: they depend on nothing but schedule.hpp, so the engine is
// tested against closed forms independently of the algorithm library (models/collectives).
#include <cstdint>
#include <vector>

#include "models/collectives/schedule.hpp"

namespace racksim::test {

inline Task make_task(Schedule& s, Endpoint src, std::vector<Endpoint> dsts, std::uint64_t bytes, bool reduce,
                      int phase, std::vector<int> deps) {
  Task t;
  t.id = static_cast<int>(s.tasks.size());
  t.src = src;
  t.dsts = std::move(dsts);
  t.bytes = bytes;
  t.reduce = reduce;
  t.phase = phase;
  t.deps = std::move(deps);
  s.tasks.push_back(t);
  return t;
}

inline Schedule empty_all_reduce(const std::vector<int>& gpus, std::uint64_t bytes, const char* algorithm) {
  Schedule s;
  s.request.op = CollectiveOp::all_reduce;
  s.request.gpus = gpus;
  s.request.bytes = bytes;
  s.algorithm = algorithm;
  return s;
}

// Ring all-reduce on `gpus` in order: 2(n-1) steps; in each, rank r sends S/n to rank r+1 once the piece
// it forwards has arrived from rank r-1 and its own previous send is done (one connection moves its
// steps in order, as NCCL's does). Closed form 2(n-1) (alpha + S / (n B)).
inline Schedule hand_ring_all_reduce(const std::vector<int>& gpus, std::uint64_t bytes) {
  Schedule s = empty_all_reduce(gpus, bytes, "all_reduce/ring");
  s.phases = {"reduce-scatter", "all-gather"};
  const int n = static_cast<int>(gpus.size());
  s.chunks = n;
  std::vector<int> prev(n, -1);
  for (int step = 0; step < 2 * (n - 1); ++step) {
    std::vector<int> cur(n);
    for (int r = 0; r < n; ++r) {
      std::vector<int> deps;
      if (step > 0) deps = {prev[(r - 1 + n) % n], prev[r]};
      cur[r] = make_task(s, Endpoint::rank(r), {Endpoint::rank((r + 1) % n)}, bytes / n, step < n - 1,
                         step < n - 1 ? 0 : 1, deps).id;
    }
    prev = cur;
  }
  return s;
}

// NVLS all-reduce in `chunks` pieces: every rank sends piece c to the switch plane (reduce) after piece
// c-1; the plane multicasts the reduced piece c to all ranks once every rank's piece c has arrived.
inline Schedule hand_nvls_all_reduce(const std::vector<int>& gpus, int domain, std::uint64_t bytes, int chunks) {
  Schedule s = empty_all_reduce(gpus, bytes, "all_reduce/nvls");
  s.phases = {"reduce", "multicast"};
  const int n = static_cast<int>(gpus.size());
  s.chunks = chunks;
  std::vector<int> last(n, -1);
  std::vector<Endpoint> all;
  for (int r = 0; r < n; ++r) all.push_back(Endpoint::rank(r));
  for (int c = 0; c < chunks; ++c) {
    std::vector<int> contributions;
    for (int r = 0; r < n; ++r) {
      std::vector<int> deps;
      if (last[r] >= 0) deps.push_back(last[r]);
      last[r] = make_task(s, Endpoint::rank(r), {Endpoint::switch_plane(domain)}, bytes / chunks, true, 0, deps).id;
      contributions.push_back(last[r]);
    }
    make_task(s, Endpoint::switch_plane(domain), all, bytes / chunks, false, 1, contributions);
  }
  return s;
}

// Hierarchical all-reduce over `domains` NVLink domains of `d` ranks each (ranks dom*d + l): ring
// reduce-scatter inside each domain (d-1 steps of S/d), ring all-reduce of each rank's S/d slice with the
// ranks of the same local index in the other domains (2(m-1) steps of S/(d m), over the NICs), ring
// all-gather inside each domain (d-1 steps of S/d).
inline Schedule hand_hierarchical_all_reduce(const std::vector<int>& gpus, int d, std::uint64_t bytes) {
  Schedule s = empty_all_reduce(gpus, bytes, "all_reduce/hierarchical");
  s.phases = {"intra reduce-scatter", "inter all-reduce", "intra all-gather"};
  const int n = static_cast<int>(gpus.size());
  const int m = n / d;
  std::vector<int> received(n, -1);  // the last task whose destination is this rank
  std::vector<int> sent(n, -1);      // the last task this rank sent
  auto deps_of = [&](int r) {
    std::vector<int> deps;
    if (received[r] >= 0) deps.push_back(received[r]);
    if (sent[r] >= 0 && sent[r] != received[r]) deps.push_back(sent[r]);
    return deps;
  };
  auto inner_ring = [&](int phase, bool reduce) {
    for (int step = 0; step < d - 1; ++step) {
      std::vector<int> next = received;
      for (int r = 0; r < n; ++r) {
        const int dom = r / d, l = r % d;
        const int to = dom * d + (l + 1) % d;
        sent[r] = next[to] = make_task(s, Endpoint::rank(r), {Endpoint::rank(to)}, bytes / d, reduce, phase, deps_of(r)).id;
      }
      received = next;
    }
  };
  inner_ring(0, true);
  for (int step = 0; step < 2 * (m - 1); ++step) {
    std::vector<int> next = received;
    for (int r = 0; r < n; ++r) {
      const int dom = r / d, l = r % d;
      const int to = ((dom + 1) % m) * d + l;
      sent[r] = next[to] = make_task(s, Endpoint::rank(r), {Endpoint::rank(to)}, bytes / d / m, step < m - 1, 1, deps_of(r)).id;
    }
    received = next;
  }
  inner_ring(2, false);
  return s;
}

}  // namespace racksim::test
