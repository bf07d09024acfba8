#include "cli/dask_units.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "sim/core/errors.hpp"

#ifndef RACKSIM_PYTHON
#error "RACKSIM_PYTHON (the interpreter) and RACKSIM_PYTHONPATH must be defined by the build"
#endif

extern char** environ;

namespace racksim::cli {

void add_dask_options(CLI::App& cmd, DaskOptions& o) {
  CLI::Option* address = cmd.add_option("--dask", o.address,
                                        "run the work units on the Dask cluster whose scheduler is at this address (tcp://HOST:PORT; "
                                        "workers need racksim's Python package; docs/dask.md)");
  // needs: a timeout without a cluster to wait for was ignored without a word
  cmd.add_option("--dask-timeout", o.timeout_s, "seconds to wait for the Dask scheduler to answer (default 10)")
      ->check(number_in(0.1, 3600))
      ->needs(address);
}

namespace {

// The environment with racksim's Python paths in front of PYTHONPATH.
std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  std::string pythonpath = RACKSIM_PYTHONPATH;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (entry.rfind("PYTHONPATH=", 0) == 0) {
      if (entry.size() > 11) pythonpath += ":" + entry.substr(11);
    } else {
      env.push_back(entry);
    }
  }
  env.push_back("PYTHONPATH=" + pythonpath);
  return env;
}

void write_all(int fd, const std::string& text) {
  std::size_t at = 0;
  while (at < text.size()) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the driver stopped reading (it failed early): its answer says why
    at += static_cast<std::size_t>(n);
  }
}

std::string read_all(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace

std::vector<std::string> run_units_on_dask(const DaskOptions& o, const std::vector<std::string>& units, const std::string& desc) {
  const std::string python = RACKSIM_PYTHON;
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("--dask: pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  std::vector<std::string> args = {python, "-m", "racksim.dask_driver", o.address};
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = child_environment();
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  if (spawned != 0) {
    ::close(in[1]);
    ::close(out[0]);
    throw InputError("--dask", "", "'" + one_line(o.address) + "'",
                     "a Python to run racksim's Dask driver: " + python + " cannot be started (" + std::strerror(spawned) +
                         "; Debian: python3 python3-distributed)");
  }
  nlohmann::json request = {{"units", units}, {"desc", desc}, {"timeout_s", o.timeout_s}};
  // A driver that fails before reading all of stdin must not kill us with SIGPIPE.
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &previous);
  write_all(in[1], request.dump());
  ::close(in[1]);
  sigaction(SIGPIPE, &previous, nullptr);
  const std::string answer = read_all(out[0]);
  ::close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  nlohmann::json j = nlohmann::json::parse(answer, nullptr, false);
  if (!j.is_object()) {
    const std::string how = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                               : "signal " + std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    throw InputError("--dask " + one_line(o.address) + ": racksim's Dask driver (" + python +
                     " -m racksim.dask_driver, PYTHONPATH " + RACKSIM_PYTHONPATH + ") gave no answer (" + how +
                     "; its message is above); it needs racksim's Python package and python3-distributed");
  }
  if (j.contains("error")) {
    const std::string message = j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump();
    const int code = j.value("status", 3);
    if (code == 2) throw InputError(message);
    if (code == 1) throw SimulationError(message);
    throw std::runtime_error(message);
  }
  if (!j.contains("results") || !j["results"].is_array() || j["results"].size() != units.size())
    throw std::runtime_error("--dask: the driver returned " + std::to_string(j.value("results", nlohmann::json::array()).size()) +
                             " results for " + std::to_string(units.size()) + " units");
  return j["results"].get<std::vector<std::string>>();
}

}  // namespace racksim::cli
