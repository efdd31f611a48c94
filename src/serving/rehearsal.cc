// RunRehearsal (rehearsal.h): node plans, agents on the fake NVML, the
// emulators they start, HAProxy, the open-loop load, and the simulator's
// prediction beside what was measured.
#include "tessera/rehearsal.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "agent/supervisor.h"
#include "tessera/clock.h"
#include "tessera/deploy_artifacts.h"
#include "tessera/load_generator.h"
#include "tessera/node_plan.h"
#include "tessera/router_config.h"
#include "tessera/text_io.h"

extern char** environ;

namespace tessera {
namespace {

namespace fs = std::filesystem;

constexpr int kGpusPerNode = 16;

Status WriteTextFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) return Status::IoError("cannot write " + path);
  return Status::Ok();
}

// Children of the rehearsal, each in a process group of its own (which its
// own children join), all stopped together.
class Children {
 public:
  ~Children() { StopAll(); }

  // Starts argv with `env` added, stdout and stderr to `log`.
  Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const std::string& log) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    env_strings.insert(env_strings.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (std::string& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    const int error = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (error != 0) {
      return Status::IoError(fmt::format("cannot start {}: {}", argv[0], std::strerror(error)));
    }
    groups_.push_back(pid);
    return pid;
  }

  // Waits for `pid` to exit: its exit code, or -1 after `timeout_s`.
  static int Wait(pid_t pid, double timeout_s) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      int status = 0;
      const pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (std::chrono::steady_clock::now() > until) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  void StopAll() {
    if (groups_.empty()) return;
    for (const pid_t group : groups_) killpg(group, SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (const pid_t group : groups_) {
      killpg(group, SIGKILL);
      while (waitpid(-group, nullptr, WNOHANG) > 0) {
      }
    }
    groups_.clear();
  }

 private:
  std::vector<pid_t> groups_;
};

// Kills every unit an agent of `state_dirs` started and its stop did not
// end, found as the agent finds them (agent::Supervisor::Scan); the first
// unit that would not die is the error.
Status KillUnits(const std::vector<std::string>& state_dirs) {
  Status first = Status::Ok();
  for (const std::string& dir : state_dirs) {
    agent::Supervisor units(dir, SystemClock());
    for (const auto& [name, unit] : units.Scan()) {
      Status killed = units.Kill(name);
      if (first.ok()) first = std::move(killed);
    }
  }
  return first;
}

std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > 600) text = "..." + text.substr(text.size() - 600);
  return text;
}

Status CheckRequest(const RehearsalRequest& r) {
  if (!(r.dilation >= 1 && r.dilation <= 1000)) {
    return Status::InvalidArgument(
        fmt::format("dilation: must be in [1, 1000], got {:g}", r.dilation));
  }
  if (!(r.duration_s > 0 && r.duration_s <= 3600)) {
    return Status::InvalidArgument(
        fmt::format("duration: must be in (0, 3600] seconds, got {:g}", r.duration_s));
  }
  for (const auto& [what, path] :
       {std::pair<std::string_view, const std::string&>{"work directory", r.work_dir},
        {"tessera binary", r.tessera_binary},
        {"fake NVML library", r.fake_nvml_library}}) {
    if (path.empty() || path.front() != '/') {
      return Status::InvalidArgument(
          fmt::format("{} {} must be an absolute path", what, QuoteForMessage(path)));
    }
  }
  return CheckShippable(r.deployment.rule.router);
}

// The first line of `haproxy -v`; InvalidArgument when it does not run.
Result<std::string> HaproxyVersion(const std::string& binary, const std::string& log,
                                   Children& children) {
  Result<pid_t> pid = children.Spawn({binary, "-v"}, {}, log);
  if (!pid.ok() || Children::Wait(*pid, 10) != 0) {
    return Status::InvalidArgument(fmt::format(
        "haproxy: {} does not run (install Debian's haproxy, as scripts/setup.sh does, or name "
        "the binary)",
        QuoteForMessage(binary)));
  }
  std::ifstream in(log);
  std::string line;
  std::getline(in, line);
  return line;
}

// Node plans with node k's ports from its own base; the bases in `bases`.
Result<std::vector<NodePlan>> RehearsalNodePlans(const RehearsalRequest& r,
                                                 std::vector<int>& bases) {
  DeployOptions options;
  options.gpus_per_node = kGpusPerNode;
  options.serving.model_repository = r.work_dir + "/triton";
  options.serving.mps_root = r.work_dir + "/mps";
  options.serving.mps_command = {"sleep", "infinity"};
  std::vector<std::string> command = {r.tessera_binary,
                                      "emulate",
                                      "--model={model}",
                                      "--model-repository={model_repository}",
                                      "--model-config-name={model_config}",
                                      "--gpu=" + r.gpu,
                                      "--profile={profile}",
                                      "--procs={procs}",
                                      "--http-port={http_port}",
                                      "--metrics-port={metrics_port}",
                                      fmt::format("--dilation={}", r.dilation),
                                      fmt::format("--seed={}", r.seed)};
  if (!r.profiles.empty()) command.push_back("--profiles=" + r.profiles);
  options.serving.command = command;
  std::vector<NodePlan> plans;
  int base = r.process_base_port;
  for (size_t k = 0;; ++k) {
    options.serving.base_port = base;
    TESSERA_ASSIGN_OR_RETURN(std::vector<NodePlan> all, BuildNodePlans(r.deployment, options));
    if (k >= all.size()) break;
    int highest = base;
    for (const NodeGpu& g : all[k].gpus) {
      for (const NodeInstance& in : g.instances) {
        for (const NodeProcess& p : in.processes) highest = std::max(highest, p.metrics_port);
      }
    }
    plans.push_back(std::move(all[k]));
    bases.push_back(base);
    base = highest + 1;
  }
  return plans;
}

// One agent run per node, in parallel: every plan in `plans` applied.
Status RunAgents(const RehearsalRequest& r, const std::vector<NodePlan>& plans,
                 const std::string& stage, Children& children) {
  std::vector<std::pair<pid_t, std::string>> running;
  for (const NodePlan& plan : plans) {
    const std::string dir = r.work_dir + "/" + plan.node;
    const std::string plan_path = dir + "/" + stage + ".json";
    TESSERA_RETURN_IF_ERROR(WriteTextFile(plan_path, FormatNodePlanJson(plan)));
    const std::string log = dir + "/agent-" + stage + ".log";
    TESSERA_ASSIGN_OR_RETURN(
        const pid_t pid,
        children.Spawn({r.tessera_binary, "agent", "--node", plan.node, "--plan", plan_path,
                        "--state-dir", dir + "/state", "--nvml", r.fake_nvml_library, "--once",
                        "--mps-control-command", "none", "--ready-timeout", "60s", "--quiet"},
                       {"TESSERA_FAKE_NVML_STATE=" + dir + "/nvml.json",
                        fmt::format("TESSERA_FAKE_NVML_DEVICES={}*{}", plan.gpu, kGpusPerNode)},
                       log));
    running.emplace_back(pid, log);
  }
  for (const auto& [pid, log] : running) {
    const int code = Children::Wait(pid, 180);
    if (code != 0) {
      return Status::IoError(
          fmt::format("tessera agent ({}) exited with {}: {}", log, code, Tail(log)));
    }
  }
  return Status::Ok();
}

// Waits until every frontend port accepts a connection.
Status WaitForRouter(const std::vector<RouterBackend>& backends, pid_t haproxy,
                     const std::string& log) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (const RouterBackend& b : backends) {
    for (;;) {
      if (Children::Wait(haproxy, 0) >= 0) {
        return Status::IoError("haproxy exited: " + Tail(log));
      }
      const int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(b.port));
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      const bool up = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
      close(fd);
      if (up) break;
      if (std::chrono::steady_clock::now() > until) {
        return Status::IoError(fmt::format("haproxy does not listen on {}: {}", b.port, Tail(log)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  // Health checks mark servers up after their first check (rise 1, inter 2s).
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  return Status::Ok();
}

}  // namespace

Result<RehearsalReport> RunRehearsal(const RehearsalRequest& r) {
  TESSERA_RETURN_IF_ERROR(CheckRequest(r));
  const auto say = [&](const std::string& line) {
    if (r.progress) r.progress(line);
  };
  std::error_code ec;
  fs::create_directories(r.work_dir, ec);
  if (ec) return Status::IoError(fmt::format("cannot create {}: {}", r.work_dir, ec.message()));

  // The Triton configurations deploy writes.
  TESSERA_ASSIGN_OR_RETURN(const std::vector<DeployFile> files,
                           BuildDeployArtifacts(r.deployment, {}));
  for (const DeployFile& f : files) {
    if (!f.path.starts_with("triton/")) continue;
    const fs::path path = fs::path(r.work_dir) / f.path;
    fs::create_directories(path.parent_path(), ec);
    TESSERA_RETURN_IF_ERROR(WriteTextFile(path.string(), f.content));
  }
  std::vector<int> bases;
  TESSERA_ASSIGN_OR_RETURN(const std::vector<NodePlan> plans, RehearsalNodePlans(r, bases));
  std::vector<std::string> state_dirs;
  for (const NodePlan& plan : plans) {
    fs::create_directories(fs::path(r.work_dir) / plan.node, ec);
    state_dirs.push_back(r.work_dir + "/" + plan.node + "/state");
  }

  // A plan's emulators hold thousands of request threads (S6: about 14,000
  // for 97 processes): 1 MiB stacks for every process started from here,
  // instead of glibc's default of the stack limit (8 MiB).
  rlimit stack{};
  getrlimit(RLIMIT_STACK, &stack);
  const rlimit saved = stack;
  stack.rlim_cur = std::min<rlim_t>(stack.rlim_max, 1 << 20);
  setrlimit(RLIMIT_STACK, &stack);
  struct RestoreStack {
    rlimit limit;
    ~RestoreStack() { setrlimit(RLIMIT_STACK, &limit); }
  } restore{saved};

  Children children;
  RehearsalReport report;
  report.router = std::string(RouterName(r.deployment.rule.router));
  TESSERA_ASSIGN_OR_RETURN(
      report.router_version,
      HaproxyVersion(r.haproxy_binary, r.work_dir + "/haproxy-version.log", children));
  report.duration_s = r.duration_s;
  report.dilation = r.dilation;
  const auto stop = [&]() {
    std::vector<NodePlan> empty = plans;
    for (NodePlan& plan : empty) plan.gpus.clear();
    const Status stopped = RunAgents(r, empty, "stop", children);
    children.StopAll();
    Status killed = KillUnits(state_dirs);
    return stopped.ok() ? killed : stopped;
  };
  // `error`, after stopping everything (and saying so if that failed too).
  const auto fail = [&](const Status& error) {
    const Status stopped = stop();
    return stopped.ok() ? error
                        : error.WithContext("(stopping also failed: " + stopped.message() + ")");
  };

  say(fmt::format("applying the plan on {} node(s) (fake NVML), starting the emulators",
                  plans.size()));
  if (Status s = RunAgents(r, plans, "apply", children); !s.ok()) return fail(s);
  Result<std::vector<RouterBackend>> backends =
      BuildRouterBackends(r.deployment, plans, {}, r.router_base_port);
  if (!backends.ok()) return fail(backends.status());
  for (RouterBackend& b : *backends) {
    for (RouterServer& server : b.servers) server.address = "127.0.0.1";
  }
  RouterSettings settings;
  settings.bind_address = "127.0.0.1";
  settings.metrics_port = r.router_metrics_port;
  // HAProxy refuses a socket path longer than 97 bytes: then a short one.
  settings.stats_socket = r.work_dir + "/haproxy.sock";
  std::string socket_dir;
  if (settings.stats_socket.size() > 97) {
    std::string pattern = "/tmp/tessera-haproxy-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) {
      socket_dir = pattern;
      settings.stats_socket = socket_dir + "/admin.sock";
    }
  }
  // A request may take many SLOs' worth of dilated time before it fails.
  double longest_slo_ms = 0;
  for (const ServingService& s : r.model.services)
    longest_slo_ms = std::max(longest_slo_ms, s.slo_ms);
  const double timeout_s = std::max(60.0, 20 * longest_slo_ms * r.dilation / 1000);
  settings.timeout_s = static_cast<int>(std::ceil(timeout_s));
  // The generator keeps a service's idle connections for its next requests;
  // HAProxy closes those idle for 2 s, so that S6's thousands of them (a
  // concurrency peak per service) free its connection slots. Measured: with
  // 60 s, 19,994 idle connections held every slot and the last requests
  // waited in the kernel's accept queue for good.
  settings.keep_alive_s = 2;
  // As many connections as this process's file limit lets HAProxy hold.
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  settings.max_connections = static_cast<int>(
      std::clamp<rlim_t>(limit.rlim_max == RLIM_INFINITY ? 200000 : limit.rlim_max, 2000, 200000) /
          2 -
      500);
  const std::string config = r.work_dir + "/haproxy.cfg";
  TESSERA_RETURN_IF_ERROR(
      WriteTextFile(config, FormatHaproxyConfig(r.deployment.rule, *backends, settings)));
  say("starting the router: " + report.router_version + ", " + report.router);
  const std::string haproxy_log = r.work_dir + "/haproxy.log";
  Result<pid_t> haproxy = children.Spawn({r.haproxy_binary, "-db", "-f", config}, {}, haproxy_log);
  Status up = haproxy.ok() ? WaitForRouter(*backends, *haproxy, haproxy_log) : haproxy.status();
  if (!up.ok()) return fail(up);

  std::vector<LoadTarget> targets;
  std::map<std::string, const RouterBackend*> backend_of;
  for (const RouterBackend& b : *backends) backend_of[b.service] = &b;
  for (const ServingService& s : r.model.services) {
    const auto b = backend_of.find(s.name);
    if (b == backend_of.end()) continue;
    LoadTarget t;
    t.service = s.name;
    t.port = b->second->port;
    t.path = "/v2/models/" + s.name + "/infer";
    t.rate_rps = s.rate_rps / r.dilation;
    t.slo_ms = s.slo_ms * r.dilation;
    targets.push_back(t);
  }
  LoadOptions load;
  load.duration_s = r.duration_s * r.dilation;
  load.seed = r.seed;
  load.timeout_s = timeout_s;
  load.stop = r.stop;
  say(
      fmt::format("sending {} service(s)' requests for {:g} s ({:g} s of the plan's time at "
                  "dilation {:g})",
                  targets.size(), load.duration_s, r.duration_s, r.dilation));
  const auto started = std::chrono::steady_clock::now();
  Result<LoadReport> measured = RunOpenLoopLoad(targets, load);
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  say("stopping the router and the node agents");
  const Status stopped = stop();
  if (!socket_dir.empty()) fs::remove_all(socket_dir, ec);
  if (!measured.ok()) return measured.status();
  if (!stopped.ok()) return stopped;
  if (r.stop != nullptr && r.stop->load()) return Status::InvalidArgument("interrupted");

  SimOptions sim;
  sim.duration_s = r.duration_s;
  sim.seed = r.seed;
  TESSERA_ASSIGN_OR_RETURN(const SimReport predicted, Simulate(r.model, sim));
  std::map<std::string, const LoadResult*> result_of;
  for (const LoadResult& l : measured->services) result_of[l.service] = &l;
  for (size_t i = 0; i < r.model.services.size(); ++i) {
    const ServingService& s = r.model.services[i];
    RehearsedService out;
    out.name = s.name;
    out.rate_rps = s.rate_rps;
    out.slo_ms = s.slo_ms;
    out.predicted = predicted.services[i];
    const auto it = result_of.find(s.name);
    if (it != result_of.end()) {
      const LoadCounts& c = it->second->total;
      out.offered = c.sent;
      out.served = c.ok;
      out.failed = c.sent - c.ok;
      if (c.latency_ms.Count() > 0) {
        out.p50_ms = c.latency_ms.Quantile(0.5) / r.dilation;
        out.p99_ms = c.latency_ms.Quantile(0.99) / r.dilation;
      }
      out.compliance = c.sent > 0 ? static_cast<double>(c.within_slo) / c.sent : 1;
    }
    report.services.push_back(out);
  }
  if (measured->send_jitter_ms.Count() > 0) {
    report.send_jitter_p50_ms = measured->send_jitter_ms.Quantile(0.5);
    report.send_jitter_p99_ms = measured->send_jitter_ms.Quantile(0.99);
  }
  report.connections = measured->connections_opened;
  return report;
}

std::string FormatRehearsalTable(const RehearsalReport& report) {
  std::string out = fmt::format(
      "rehearsal: {:g} s of the plan's time at dilation {:g} ({:.1f} s of wall time), router {} "
      "({})\n",
      report.duration_s, report.dilation, report.wall_s, report.router, report.router_version);
  out += fmt::format("{:<20} {:>9} {:>9} {:>7} {:>10} {:>10} {:>9} | {:>9} {:>10}\n", "service",
                     "offered", "served", "failed", "p50 ms", "p99 ms", "in SLO", "simulated",
                     "sim p99");
  for (const RehearsedService& s : report.services) {
    out += fmt::format(
        "{:<20} {:>9} {:>9} {:>7} {:>10.2f} {:>10.2f} {:>8.2f}% | {:>8.2f}% {:>10.2f}\n", s.name,
        s.offered, s.served, s.failed, s.p50_ms, s.p99_ms, 100 * s.compliance,
        100 * s.predicted.compliance, s.predicted.p99_ms);
  }
  out += fmt::format("send jitter p50 {:.3f} ms, p99 {:.3f} ms (wall); {} connections\n",
                     report.send_jitter_p50_ms, report.send_jitter_p99_ms, report.connections);
  return out;
}

std::string FormatRehearsalJson(const RehearsalReport& report) {
  nlohmann::ordered_json j;
  j["router"] = {{"rule", report.router}, {"version", report.router_version}};
  j["duration_s"] = report.duration_s;
  j["dilation"] = report.dilation;
  j["wall_s"] = report.wall_s;
  j["send_jitter_ms"] = {{"p50", report.send_jitter_p50_ms}, {"p99", report.send_jitter_p99_ms}};
  j["connections"] = report.connections;
  j["services"] = nlohmann::ordered_json::array();
  for (const RehearsedService& s : report.services) {
    j["services"].push_back({{"name", s.name},
                             {"rate_rps", s.rate_rps},
                             {"slo_ms", s.slo_ms},
                             {"offered", s.offered},
                             {"served", s.served},
                             {"failed", s.failed},
                             {"p50_ms", s.p50_ms},
                             {"p99_ms", s.p99_ms},
                             {"compliance", s.compliance},
                             {"simulated",
                              {{"compliance", s.predicted.compliance},
                               {"p50_ms", s.predicted.p50_ms},
                               {"p99_ms", s.predicted.p99_ms}}}});
  }
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace tessera
