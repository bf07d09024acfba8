// Issue 16: no engine process is ever forked from a multi-threaded process (a fork copies the locks other
// threads hold; `sweep --jobs 2` deadlocked under AddressSanitizer). A threaded caller's runs go to the
// engine server, with bit-identical results; parallel runs fork from one thread.
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine_test_support.hpp"
#include "hand_schedules.hpp"
#include "models/collectives/registry.hpp"
#include "models/collectives/schedule_io.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/engine_process.hpp"
#include "sim/engine/engine_server.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/results/results_io.hpp"

namespace racksim {
namespace {

// Largest thread count seen at any fork() of this process (pthread_atfork's prepare handler runs in the
// forking process, before the fork).
std::atomic<int> max_threads_at_fork{0};
std::atomic<int> forks{0};
void record_fork() {
  const int n = threads_in_this_process();
  ++forks;
  for (int seen = max_threads_at_fork.load(); n > seen && !max_threads_at_fork.compare_exchange_weak(seen, n);) {
  }
}
const bool registered = [] { return pthread_atfork(&record_fork, nullptr, nullptr) == 0; }();

CollectiveRequest ring_request(int gpus, std::uint64_t bytes) {
  CollectiveRequest r;
  r.op = CollectiveOp::all_reduce;
  r.algorithm = "ring";
  r.gpus = test::gpu_range(0, gpus);
  r.bytes = bytes;
  return r;
}

TEST(ForkSafety, ThreadCountIsRead) {
  EXPECT_EQ(threads_in_this_process(), 1);
  std::atomic<bool> stop{false};
  std::thread t([&] {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  EXPECT_EQ(threads_in_this_process(), 2);
  stop = true;
  t.join();
}

TEST(ForkSafety, AThreadedCallerGetsTheSameBytesWithoutForkingItself) {
  ASSERT_TRUE(registered);
  const auto graph = test::load_graph("hgx-h100", 1);
  const Calibration cal = load_calibration("default");
  // A failure and the partition mode travel to the server too (adaptive: the GPUs run on the links left).
  const FailureScenario failures{{parse_failure_item("switch-chip:0.1")}, PartitionMode::adaptive_bandwidth};
  const Simulation sim(graph, cal, failures);
  const Schedule schedule = build_schedule(ring_request(8, 64 << 20), graph, cal);
  RunOptions traced;
  traced.record_trace = true;
  const std::string direct = run_result_to_json_text(sim.run(schedule, traced));
  const std::string direct_trace = run_result_to_trace_json(sim.run(schedule, traced));
  const int forks_before = forks;
  EXPECT_GE(forks_before, 2);  // the direct runs forked (single-threaded: allowed)
  max_threads_at_fork = 0;

  std::string threaded, threaded_trace, error;
  std::atomic<bool> stop{false};
  std::thread background([&] {  // a second thread alive throughout, as in a Jupyter kernel
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  std::thread caller([&] {
    try {
      const RunResult r = sim.run(schedule, traced);
      threaded = run_result_to_json_text(r);
      threaded_trace = run_result_to_trace_json(r);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  caller.join();
  stop = true;
  background.join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(threaded, direct);
  EXPECT_EQ(threaded_trace, direct_trace);
  EXPECT_EQ(forks.load(), forks_before) << "this process forked while threads ran";
  EXPECT_EQ(max_threads_at_fork.load(), 0);
}

TEST(ForkSafety, ServerRunsEachConcurrentAndTransfersAndPassesErrorsBack) {
  const auto graph = test::load_graph("gb200-nvl72", 1);
  const Simulation sim(graph, Calibration::none());
  const Simulation failed(graph, Calibration::none(), FailureScenario{{parse_failure_item("tray:1")}});
  std::vector<Schedule> schedules;
  for (std::uint64_t mib : {1, 4, 16}) schedules.push_back(build_schedule(ring_request(8, mib << 20), graph));
  std::vector<const Schedule*> pointers;
  for (const auto& s : schedules) pointers.push_back(&s);
  const std::vector<DeviceTransfer> transfers = {{"gpu0", "cpu0", 1 << 30}, {"gpu1", "cpu0", 1 << 30}};
  const auto direct_each = run_results_to_json_text(sim.run_each(pointers, 2));
  const auto direct_concurrent = run_results_to_json_text(sim.run_concurrent(pointers));
  const auto direct_transfers = run_result_to_json_text(sim.run_transfers(transfers));
  std::string each, concurrent, moved, input_error, sim_error, server_error;
  std::thread caller([&] {
    each = run_results_to_json_text(sim.run_each(pointers, 2));
    concurrent = run_results_to_json_text(sim.run_concurrent(pointers));
    moved = run_result_to_json_text(sim.run_transfers(transfers));
    try {
      sim.run_transfers({{"gpu0", "gpu999", 1}});
    } catch (const InputError& e) {
      input_error = e.what();
    }
    try {
      failed.run(*pointers[0]);  // GPUs 0-7 are on trays 0 and 1
    } catch (const SimulationError& e) {
      sim_error = e.what();
    }
    try {  // rejected inside the server: the error comes back typed
      Schedule bad = schedules[0];
      bad.tasks[0].dsts[0] = Endpoint::rank(99);
      sim.run(bad);
    } catch (const InputError& e) {
      server_error = e.what();
    }
  });
  caller.join();
  EXPECT_EQ(each, direct_each);
  EXPECT_EQ(concurrent, direct_concurrent);
  EXPECT_EQ(moved, direct_transfers);
  EXPECT_NE(input_error.find("gpu999"), std::string::npos) << input_error;
  EXPECT_NE(sim_error.find("tray"), std::string::npos) << sim_error;
  EXPECT_NE(server_error.find("99"), std::string::npos) << server_error;
}

TEST(ForkSafety, ForkingWithThreadsIsRefusedNotAttempted) {
  std::atomic<bool> stop{false};
  std::thread t([&] {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  EXPECT_THROW(run_in_child_process([] { return std::string("x"); }), std::logic_error);
  stop = true;
  t.join();
  // A joined thread leaves /proc/self/stat's count a moment later (the kernel reaps it after join returns):
  // under load the fork below was refused for "2 threads" (session 31). Wait for the count, a second at most.
  for (int i = 0; i < 1000 && threads_in_this_process() > 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(run_in_child_process([] { return std::string("x"); }), "x");
}

TEST(ForkSafety, ParallelChildrenKeepOrderAndReportTheFirstFailure) {
  std::vector<std::function<std::string()>> works;
  for (int i = 0; i < 7; ++i)
    works.push_back([i] {
      if (i == 3 || i == 5) throw InputError("work " + std::to_string(i));
      return std::to_string(i * i);
    });
  std::size_t last_progress = 0;
  try {
    run_in_child_processes(works, 3, [&](std::size_t done) { last_progress = done; });
    FAIL() << "expected the failure of work 3";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "work 3");
  }
  EXPECT_GE(last_progress, 4u);
  works.erase(works.begin() + 3);
  works.erase(works.begin() + 4);  // was work 5
  const auto out = run_in_child_processes(works, 2);
  EXPECT_EQ(out, (std::vector<std::string>{"0", "1", "4", "16", "36"}));
}

// Works readied in this process before their fork (Simulation::run_each compiles each run so, in batches):
// every child sees what was prepared for it, and an error in preparing any work is the answer, even when a
// child failed earlier, as when all were prepared before the first fork.
TEST(ForkSafety, PreparedChildrenSeeTheirPreparationAndPreparingErrorsComeFirst) {
  std::vector<int> ready(6, -1);
  const auto work = [&](std::size_t i) { return std::to_string(ready[i]); };
  for (const int jobs : {1, 2}) {
    std::fill(ready.begin(), ready.end(), -1);
    const auto out = run_in_child_processes(
        ready.size(), [&](std::size_t i) { ready[i] = static_cast<int>(10 * i); return std::size_t{0}; }, work, jobs);
    EXPECT_EQ(out, (std::vector<std::string>{"0", "10", "20", "30", "40", "50"})) << jobs;
  }
  const auto fail_run_1 = [&](std::size_t i) -> std::string {
    if (i == 1) throw SimulationError("run 1");
    return work(i);
  };
  const auto fail_prepare_4 = [&](std::size_t i) {
    if (i == 4) throw InputError("prepare 4");
    ready[i] = 1;
    return std::size_t{0};
  };
  for (const int jobs : {1, 2}) {
    try {
      run_in_child_processes(ready.size(), fail_prepare_4, fail_run_1, jobs);
      FAIL() << "expected the error of preparing work 4";
    } catch (const InputError& e) {
      EXPECT_STREQ(e.what(), "prepare 4") << jobs;
    }
  }
}

// Works are readied in batches while no child runs (a write beside a running child is a copy-on-write
// fault on the pages it shares): small works all before the first fork; works each at the budget one by
// one, the next readied only after the previous child ended, whatever `jobs` is.
TEST(ForkSafety, WorksAreReadiedInBatchesWhileNoChildRuns) {
  const auto work = [](std::size_t i) { return std::to_string(i); };
  for (const int jobs : {1, 2}) {
    std::vector<std::string> events;
    const auto small = [&](std::size_t i) { events.push_back("p" + std::to_string(i)); return std::size_t{1}; };
    const auto done = [&](std::size_t n) { events.push_back("d" + std::to_string(n)); };
    run_in_child_processes(4, small, work, jobs, done);
    EXPECT_EQ(events, (std::vector<std::string>{"p0", "p1", "p2", "p3", "d1", "d2", "d3", "d4"})) << jobs;
    events.clear();
    const auto large = [&](std::size_t i) { events.push_back("p" + std::to_string(i)); return kPrepareAheadBytes; };
    const auto out = run_in_child_processes(4, large, work, jobs, done);
    EXPECT_EQ(events, (std::vector<std::string>{"p0", "d1", "p1", "d2", "p2", "d3", "p3", "d4"})) << jobs;
    EXPECT_EQ(out, (std::vector<std::string>{"0", "1", "2", "3"})) << jobs;
  }
}

// The binary schedule encoding of the engine server carries every field: checked through schedule_io's
// JSON (which the schedule tests keep complete) for every algorithm of the registry, with chunking and
// multicasts, on one and on two racks.
TEST(ForkSafety, BinarySchedulesRoundTripForEveryAlgorithm) {
  int checked = 0;
  for (const int racks : {1, 2}) {
    const auto graph = test::load_graph("gb200-nvl72", racks);
    for (const AlgorithmInfo& a : algorithm_table()) {
      CollectiveRequest r;
      r.op = a.op;
      r.algorithm = a.name;
      r.gpus = test::gpu_range(0, 8 * racks);
      if (racks == 2)
        for (int i = 0; i < 8; ++i) r.gpus[8 + i] = 72 + i;
      r.bytes = 3 << 20;
      r.chunk_bytes = 1 << 20;
      r.root = 1;
      Schedule s;
      try {
        s = build_schedule(r, graph);
      } catch (const InputError&) {
        continue;  // not applicable here (nvls across racks)
      }
      s.note += " (with a note)";
      EXPECT_EQ(schedule_to_json_text(decode_schedule(encode_schedule(s))), schedule_to_json_text(s)) << a.name;
      ++checked;
    }
  }
  EXPECT_GE(checked, 15);
}

TEST(ForkSafety, EngineRequestsRoundTrip) {
  EngineRequest r;
  r.kind = EngineRequest::Kind::transfers;
  r.topology_json = "{}";
  r.racks = 3;
  r.calibration_json = "cal";
  r.failures = {"tray:1", "nic:2"};
  Schedule s;
  s.algorithm = "all_reduce/ring";
  s.note = "n";
  r.schedules = {s, s};
  r.transfers = {{"gpu0", "cpu1", 42}};
  r.options.record_trace = true;
  r.jobs = 5;
  const EngineRequest back = decode_engine_request(encode_engine_request(r));
  EXPECT_EQ(back.kind, r.kind);
  EXPECT_EQ(back.racks, 3);
  EXPECT_EQ(back.failures, r.failures);
  ASSERT_EQ(back.schedules.size(), 2u);
  EXPECT_EQ(back.schedules[1].note, "n");
  EXPECT_EQ(back.transfers[0].dst, "cpu1");
  EXPECT_EQ(back.transfers[0].bytes, 42u);
  EXPECT_TRUE(back.options.record_trace);
  EXPECT_EQ(back.jobs, 5);
  EXPECT_THROW(decode_engine_request(encode_engine_request(r).substr(0, 20)), SimulationError);

  // The body alone (a spare whose daemon prepared this head): the same kind, racks and body, the head's texts
  // stepped over; the head's length as decode_engine_request_head counts it.
  const std::string bytes = encode_engine_request(r);
  std::size_t head_bytes = 0;
  (void)decode_engine_request_head(bytes, head_bytes);
  EXPECT_EQ(engine_request_head_bytes(bytes), head_bytes);
  const EngineRequest body = decode_engine_request_body(bytes);
  EXPECT_EQ(body.kind, r.kind);
  EXPECT_EQ(body.racks, 3);
  EXPECT_TRUE(body.topology_json.empty());
  EXPECT_TRUE(body.calibration_json.empty());
  EXPECT_TRUE(body.failures.empty());
  ASSERT_EQ(body.schedules.size(), 2u);
  EXPECT_EQ(body.schedules[1].note, "n");
  EXPECT_EQ(body.transfers[0].bytes, 42u);
  EXPECT_EQ(body.jobs, 5);
  // Every shorter prefix is refused, never read past its end: the body's from any cut, the head's length from a
  // cut inside the head.
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_THROW(decode_engine_request_body(bytes.substr(0, n)), SimulationError) << n;
    if (n < head_bytes) {
      EXPECT_THROW(engine_request_head_bytes(bytes.substr(0, n)), SimulationError) << n;
    }
  }
}

}  // namespace
}  // namespace racksim

// An engine process's refusal over its budgets crosses the pipe as what it is (EngineLimitError, frame 'L'),
// so that `racksim collective --model auto` can answer with the closed form; other input errors stay
// InputError, with their fields.
TEST(ForkSafety, EngineLimitErrorsCrossThePipeAsThemselves) {
  const std::string limit = racksim::framed([]() -> std::string {
    throw racksim::EngineLimitError("--gpus", "", "x on 9 GPUs", "at most 5e9 engine steps");
  });
  ASSERT_EQ(limit.front(), 'L');
  try {
    racksim::unframe(limit, "died");
    FAIL() << "no exception";
  } catch (const racksim::EngineLimitError& e) {
    EXPECT_EQ(e.where(), "--gpus");
    EXPECT_EQ(e.value(), "x on 9 GPUs");
    EXPECT_EQ(e.allowed(), "at most 5e9 engine steps");
  }
  const std::string input = racksim::framed([]() -> std::string { throw racksim::InputError("--op", "", "x", "y"); });
  ASSERT_EQ(input.front(), 'I');
  try {
    racksim::unframe(input, "died");
    FAIL() << "no exception";
  } catch (const racksim::EngineLimitError&) {
    FAIL() << "an InputError came back as an EngineLimitError";
  } catch (const racksim::InputError& e) {
    EXPECT_EQ(e.where(), "--op");
  }
}
