#pragma once
// SimGrid allows one engine per process and never resets its clock. racksim therefore runs every
// simulation in a forked child process: the child creates a fresh engine, builds the platform the run
// needs, runs, writes its result to a pipe and exits without tearing SimGrid down. The caller's process
// never holds an engine, so any number of simulations, on any number of platforms, run one after another
// in one process (a sweep, a Python session, a unit test), each from clock 0 and bit-reproducible.
// docs/model.md gives the measured cost of this choice and the alternatives weighed.
//
// Forking is only safe from a process with ONE thread: a fork copies the locks other threads hold (the
// allocator's among them: `sweep --jobs 2` deadlocked under AddressSanitizer when threads forked). So a
// process forks engine processes only while it is single-threaded (the CLI, a plain Python script, a
// unit test); a multi-threaded caller (a Jupyter kernel, Python threads) hands the run to an engine
// server instead (engine_server.hpp): a small executable started with posix_spawn, single-threaded
// itself, which forks the engine processes. Parallel runs (`sweep --jobs`) fork several children from
// the one calling thread and wait on their pipes, instead of using threads.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace racksim {

// Threads of this process (/proc/self/stat), or 0 when it cannot be read.
int threads_in_this_process();

// Runs `work` in a forked child and returns the bytes it returned. An InputError or SimulationError
// thrown by `work` is re-thrown here with the same message (and InputError fields); any other exception
// becomes a SimulationError, and so does a child that dies (its signal or exit status in the message).
// Refuses (std::logic_error, a bug) to fork when this process has more than one thread.
std::string run_in_child_process(const std::function<std::string()>& work);

// Runs each work in its own forked child, at most `jobs` at once, all forked from the calling thread;
// returns their bytes in order. `progress(done)` is called as children finish. On failure the children
// already running are waited for, no new one starts, and the error of the lowest-numbered failed work is
// re-thrown (the same one whatever `jobs` is).
std::vector<std::string> run_in_child_processes(const std::vector<std::function<std::string()>>& works, int jobs,
                                                const std::function<void(std::size_t)>& progress = {});
// The same for `count` works, work i readied by `prepare(i)` in this process before its child is forked;
// prepare returns the bytes the readied work holds until then. Works are readied in batches, each while no
// child runs (a child shares this process's pages: writing them beside it is a copy-on-write fault each),
// a batch as many works as stay under kPrepareAheadBytes (at least one); its children then run, `jobs` at
// once, and the next batch is readied when they have all ended. An exception from any prepare(i) is
// re-thrown (the first, after the running children are waited for), before any child's error: the answer
// is the one of preparing every work first.
inline constexpr std::size_t kPrepareAheadBytes = std::size_t{256} << 20;
std::vector<std::string> run_in_child_processes(std::size_t count, const std::function<std::size_t(std::size_t)>& prepare,
                                                const std::function<std::string(std::size_t)>& work, int jobs,
                                                const std::function<void(std::size_t)>& progress = {});

// Engine processes a batch of runs uses at once unless told (`racksim sweep --jobs`, `System.sweep(jobs=)`): this
// machine's cores, at most 4 (each holds its run's engine state; a many-core machine should not hold dozens).
int default_engine_jobs();

// Marks this process as disposable (the engine daemon's child for one request, engine_server.cpp): its
// first engine run happens here, without a fork (the process ends after it anyway; SimGrid's one engine
// per process is respected), and any later one is forked as usual.
void set_disposable_engine_process();

// The framing used on the pipes (exposed for the engine server): `framed` runs work and encodes its
// result or its exception; `unframe` returns the result or re-throws the exception.
std::string framed(const std::function<std::string()>& work);
std::string unframe(const std::string& frame, const std::string& what_died);

}  // namespace racksim
