#include "serve/http_server.hpp"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <semaphore>
#include <sstream>
#include <thread>

#include "serve/child_process.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_reader.hpp"

namespace racksim::serve {

namespace {

using json = nlohmann::ordered_json;

struct ApiAnswer {
  int status = 200;
  std::string body;         // the CLI's JSON, or {"error": ...}
  std::string command;      // the racksim command line it ran (or would have run)
  int exit_status = -1;     // the command's exit status, when it ran to an exit
};

std::string error_body(const std::string& message, const std::string& command, const std::string& kind) {
  json j{{"error", message}, {"kind", kind}};
  if (!command.empty()) j["command"] = command;
  return dump_json(j) + "\n";
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? text : line;
}

class Server {
 public:
  explicit Server(const ServeOptions& o) : o_(o), slots_(o.workers) {}

  ApiAnswer api(const std::string& command, const Params& params) {
    BuiltCommand built;
    try {
      built = build_command(o_.commands, command, params);
    } catch (const RequestError& e) {
      return {e.http_status(), error_body(e.what(), "", "request"), ""};
    }
    const auto facts = [this](const std::string& system, const std::string& racks) { return system_facts(system, racks); };
    if (const auto reason = refusal_reason(command, params, facts, o_.limits))
      return {422, error_body("racksim serve: not run: " + *reason, built.display, "limit"), built.display};
    const auto run = run_limited(built.args);
    if (!run) return {503, error_body("racksim serve: busy: every worker stayed taken for " +
                                          std::to_string(static_cast<int>(o_.queue_timeout_s)) + " s; try again",
                                      built.display, "busy"), built.display};
    return answer(*run, built.display);
  }

  std::optional<ChildResult> run_limited(const std::vector<std::string>& args) {
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(o_.queue_timeout_s));
    if (!slots_.try_acquire_for(wait)) return std::nullopt;
    struct Release {
      std::counting_semaphore<>& s;
      ~Release() { s.release(); }
    } release{slots_};
    ChildLimits limits;
    limits.wall_s = o_.request_timeout_s;
    limits.address_space_bytes = o_.child_memory_bytes;
    std::vector<std::string> all = o_.global_args;
    all.insert(all.end(), args.begin(), args.end());
    return run_child(o_.program, all, limits);
  }

  ApiAnswer answer(const ChildResult& r, const std::string& display) const {
    ApiAnswer a = status_and_body(r, display);
    a.exit_status = r.timed_out || r.signal ? -1 : r.exit_status;
    return a;
  }

  ApiAnswer status_and_body(const ChildResult& r, const std::string& display) const {
    const std::string err = first_line(r.err);
    if (r.timed_out)
      return {504, error_body("racksim serve: stopped after the server's " + std::to_string(static_cast<int>(o_.request_timeout_s)) +
                                  " s limit per request; run it from the command line", display, "timeout"), display};
    if (r.output_too_large)
      return {500, error_body("racksim serve: the answer exceeded the server's output limit", display, "output"), display};
    if (r.signal != 0)
      return {500, error_body("racksim serve: the command ended on signal " + std::to_string(r.signal) +
                                  (r.signal == SIGKILL || r.signal == SIGSEGV ? " (out of its memory limit?)" : ""),
                              display, "crash"), display};
    switch (r.exit_status) {
      case 0: return {200, r.out, display};
      case 2: return {400, error_body(err, display, "input"), display};
      // Exit 1 with a report on stdout is a check whose answer is no (imex-check: the job cannot start;
      // issue 16): the report is the answer. Exit 1 with nothing on stdout is a run that cannot happen.
      case 1:
        if (!r.out.empty()) return {200, r.out, display};
        return {422, error_body(err, display, "cannot-run"), display};
      default: return {500, error_body(err.empty() ? "racksim serve: exit status " + std::to_string(r.exit_status) : err,
                                       display, "internal"), display};
    }
  }

  // gpus and GPUs per NVLink domain of a system, from `racksim show` (cached; nullopt when show fails).
  std::optional<SystemFacts> system_facts(const std::string& system, const std::string& racks) {
    const std::string key = system + "\n" + racks;
    {
      std::lock_guard<std::mutex> lock(facts_mutex_);
      const auto it = facts_.find(key);
      if (it != facts_.end()) return it->second;
    }
    Params p{{"system", system}};
    if (!racks.empty()) p.emplace_back("racks", racks);
    std::optional<SystemFacts> f;
    try {
      const auto run = run_limited(build_command(o_.commands, "show", p).args);
      if (run && run->exit_status == 0) {
        const auto j = json::parse(run->out);
        f = SystemFacts{j.at("gpus").get<int>(), j.at("gpus_per_nvlink_domain").get<int>()};
      }
    } catch (const std::exception&) {
      return std::nullopt;
    }
    std::lock_guard<std::mutex> lock(facts_mutex_);
    if (facts_.size() < 512) facts_[key] = f;  // bounded: keys come from requests
    return f;
  }

 private:
  const ServeOptions& o_;
  std::counting_semaphore<> slots_;
  std::mutex facts_mutex_;
  std::map<std::string, std::optional<SystemFacts>> facts_;
};

bool read_file(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

const char* content_type(const std::string& name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

json command_table_json(const CommandTable& table) {
  json commands = json::object();
  for (const auto& [name, c] : table) {
    json options = json::object();
    for (const auto& [o, info] : c.options) options[o] = {{"flag", info.flag}, {"repeatable", info.repeatable}};
    commands[name] = {{"positionals", c.positionals}, {"options", options}};
  }
  return commands;
}

}  // namespace

int run_server(const ServeOptions& o, const std::function<void(const std::string&)>& on_listening) {
  // SIGINT/SIGTERM go to one waiting thread (blocked everywhere else, inherited by the pool's threads;
  // children get an empty mask back). SIGPIPE: a client that hangs up must not end the server.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  Server api(o);
  httplib::Server http;
  const int pool = std::max(8, o.workers * 8);  // connections waiting for a worker hold a pool thread
  http.new_task_queue = [pool] { return new httplib::ThreadPool(pool); };
  // cpp-httplib's default sets SO_REUSEPORT on Linux, which lets a second server bind the same port and
  // silently take half its connections. SO_REUSEADDR only: a restart can reuse the port, a second
  // server fails with a clear error.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  http.set_payload_max_length(64 * 1024);       // GET only: a body has no use
  http.set_read_timeout(10, 0);
  http.set_write_timeout(10, 0);
  if (o.log_requests)
    http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      std::fprintf(stderr, "racksim serve: %s %s %d\n", req.method.c_str(), req.path.c_str(), res.status);
    });

  // DNS rebinding: a page from elsewhere could resolve its own name to 127.0.0.1 and drive the API from
  // the reader's browser. Only requests addressed to the loopback names are served.
  http.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    const std::string host = req.get_header_value("Host");
    const std::string name = host.substr(0, host.rfind(':') == std::string::npos ? host.size() : host.rfind(':'));
    if (name == "127.0.0.1" || name == "localhost" || name == "[::1]") return httplib::Server::HandlerResponse::Unhandled;
    res.status = 403;
    res.set_content(error_body("racksim serve: Host '" + host + "' refused; use http://127.0.0.1:PORT/", "", "request"),
                    "application/json");
    return httplib::Server::HandlerResponse::Handled;
  });
  http.Get("/", [&o](const httplib::Request&, httplib::Response& res) {
    std::string body;
    if (!read_file(o.web_dir + "/index.html", body)) {
      res.status = 500;
      res.set_content("racksim serve: " + o.web_dir + "/index.html is missing\n", "text/plain");
      return;
    }
    res.set_content(body, content_type("index.html"));
  });
  http.Get(R"(/static/([a-z0-9_-]+\.(js|css|html)))", [&o](const httplib::Request& req, httplib::Response& res) {
    std::string body;
    const std::string name = req.matches[1];
    if (!read_file(o.web_dir + "/" + name, body)) {
      res.status = 404;
      res.set_content("racksim serve: no file " + name + "\n", "text/plain");
      return;
    }
    res.set_content(body, content_type(name));
  });
  http.Get("/vendor/d3.min.js", [&o](const httplib::Request&, httplib::Response& res) {
    std::string body;
    if (!read_file(o.d3_js, body)) {
      res.status = 500;
      res.set_content("racksim serve: " + o.d3_js + " is missing (Debian package libjs-d3)\n", "text/plain");
      return;
    }
    res.set_content(body, content_type(".js"));
  });
  http.Get("/favicon.ico", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
  http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
  http.Get("/api", [&o](const httplib::Request&, httplib::Response& res) {
    json j{{"commands", command_table_json(o.commands)},
           {"limits", {{"request_timeout_s", o.request_timeout_s}, {"workers", o.workers},
                       {"max_engine_gpus", o.limits.max_engine_gpus}, {"max_all_to_all_gpus", o.limits.max_all_to_all_gpus},
                       {"max_flat_ring_domains", o.limits.max_flat_ring_domains},
                       {"max_symmetric_flat_ring_domains", o.limits.max_symmetric_flat_ring_domains},
                       {"max_odd_flat_ring_domains", o.limits.max_odd_flat_ring_domains}, {"max_sweep_gpus", o.limits.max_sweep_gpus}, {"max_sweep_sizes", o.limits.max_sweep_sizes}}}};
    res.set_content(dump_json(j, 2) + "\n", "application/json");
  });
  http.Get(R"(/api/([A-Za-z0-9_-]{1,40}))", [&api](const httplib::Request& req, httplib::Response& res) {
    Params params(req.params.begin(), req.params.end());  // a multimap: repeated keys keep their order
    ApiAnswer a;
    try {
      a = api.api(req.matches[1], params);
    } catch (const std::exception& e) {  // cannot start a child (out of processes, pipes)
      a = {500, error_body(std::string("racksim serve: ") + e.what(), "", "server"), ""};
    }
    res.status = a.status;
    if (!a.command.empty()) res.set_header("X-Racksim-Command", a.command);
    // 200 also carries imex-check's exit 1 (a report that the job cannot start): the status tells them apart.
    if (a.exit_status >= 0) res.set_header("X-Racksim-Exit-Status", std::to_string(a.exit_status));
    res.set_header("Cache-Control", "no-store");
    res.set_content(a.body, "application/json");
  });

  const int port = o.port == 0 ? http.bind_to_any_port(o.host) : (http.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0)
    throw InputError("--port", "", std::to_string(o.port) + " (cannot listen on " + o.host + ": in use?)",
                     "a free TCP port on " + o.host + ", or 0 for any free port");
  std::thread waiter([&http, stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    http.stop();
  });
  on_listening("http://" + o.host + ":" + std::to_string(port) + "/");
  http.listen_after_bind();
  pthread_kill(waiter.native_handle(), SIGTERM);  // when listen ended for another reason
  waiter.join();
  return 0;
}

}  // namespace racksim::serve
