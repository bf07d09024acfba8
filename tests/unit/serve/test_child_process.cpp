// serve/child_process: what the server relies on to survive any request (exit codes, signals, the
// wall-clock limit with the whole process group, the output cap, the address-space limit).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>

#include "serve/child_process.hpp"
#include "serve/http_server.hpp"

namespace racksim::serve {
namespace {

ChildResult sh(const std::string& script, ChildLimits limits = {}) { return run_child("/bin/sh", {"-c", script}, limits); }

TEST(ServeChildProcess, CapturesOutputAndExitStatus) {
  const ChildResult r = sh("echo out; echo err >&2; exit 2");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.timed_out);
}

TEST(ServeChildProcess, ReportsTheSignalThatEndedIt) {
  const ChildResult r = sh("kill -SEGV $$");
  EXPECT_EQ(r.exit_status, -1);
  EXPECT_EQ(r.signal, SIGSEGV);
}

TEST(ServeChildProcess, WallClockLimitKillsTheWholeProcessGroup) {
  ChildLimits limits;
  limits.wall_s = 0.5;
  const auto start = std::chrono::steady_clock::now();
  // A grandchild holding the pipes open (as the engine's forked workers would) must die too, or the read
  // would wait the full 30 s.
  const ChildResult r = sh("sleep 30 & sleep 30; echo never", limits);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.out, "");
  EXPECT_LT(took, 5.0);
}

TEST(ServeChildProcess, OutputBeyondTheCapEndsTheRun) {
  ChildLimits limits;
  limits.max_output_bytes = 1000;
  const ChildResult r = sh("while :; do echo 0123456789; done", limits);
  EXPECT_TRUE(r.output_too_large);
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_EQ(r.signal, SIGKILL);
}

TEST(ServeChildProcess, AddressSpaceLimitApplies) {
  ChildLimits limits;
  limits.address_space_bytes = 256ULL << 20;
  // dd's 512 MiB block buffer cannot be allocated under a 256 MiB address space.
  const ChildResult r = sh("dd if=/dev/zero of=/dev/null bs=512M count=1", limits);
  EXPECT_NE(r.exit_status, 0);
  EXPECT_NE(r.err.find("memory"), std::string::npos) << r.err;
  const ChildResult ok = sh("dd if=/dev/zero of=/dev/null bs=1M count=1 2>/dev/null", limits);
  EXPECT_EQ(ok.exit_status, 0);
}

TEST(ServeChildProcess, TheServersDefaultLimitLetsThisBuildStart) {
  // The server's children are the racksim binary itself, built like this test binary. Under
  // AddressSanitizer (make sanitize) a 4 GiB RLIMIT_AS stopped every one before main (ASan reserves ~15 TB
  // of shadow memory); that build runs them without the limit.
  ChildLimits limits;
  limits.address_space_bytes = ServeOptions{}.child_memory_bytes;
  EXPECT_EQ(limits.address_space_bytes, kAddressSanitizerBuild ? 0 : 4ULL << 30);
  const ChildResult r = run_child("/proc/self/exe", {"--gtest_filter=ServeChildProcess.AMissingProgramIsAnError"}, limits);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("[  PASSED  ] 1 test"), std::string::npos) << r.out;
}

TEST(ServeChildProcess, AMissingProgramIsAnError) {
  EXPECT_THROW(run_child("/nonexistent/racksim", {}, {}), std::runtime_error);
}

}  // namespace
}  // namespace racksim::serve
