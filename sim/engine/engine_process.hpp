#pragma once
// SimGrid allows one engine per process and never resets its clock. racksim therefore runs every
// simulation in a forked child process: the child creates a fresh engine, builds the platform the run
// needs, runs, writes its result to a pipe and exits without tearing SimGrid down. The caller's process
// never holds an engine, so any number of simulations, on any number of platforms, run one after another
// in one process (a sweep, a Python session, a unit test), each from clock 0 and bit-reproducible.
// docs/model.md gives the measured cost of this choice and the alternatives weighed.
#include <functional>
#include <string>

namespace racksim {

// Runs `work` in a forked child and returns the bytes it returned. An InputError or SimulationError
// thrown by `work` is re-thrown here with the same message (and InputError fields); any other exception
// becomes a SimulationError, and so does a child that dies (its signal or exit status in the message).
std::string run_in_child_process(const std::function<std::string()>& work);

}  // namespace racksim
