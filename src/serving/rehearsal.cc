// RunRehearsal (rehearsal.h): node plans, agents on the fake NVML, the
// emulators they start, HAProxy, the open-loop load, and the simulator's
// prediction beside what was measured.
#include "tessera/serving/rehearsal.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <tuple>

#include "emit/router_config.h"
#include "serving/children.h"
#include "serving/haproxy_runtime.h"
#include "serving/load_generator.h"
#include "serving/rehearsal_parts.h"
#include "serving/router_observer.h"
#include "tessera/emit/deploy_artifacts.h"
#include "tessera/emit/node_plan.h"
#include "tessera/simulate/transition_simulation.h"
#include "tessera/transition/transition_format.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using serving::Children;
using serving::Compliance;
using serving::EphemeralPorts;
using serving::KillUnits;
using serving::Measured;
using serving::P99Ms;
using serving::Tail;
using serving::WriteTextFile;

constexpr int kGpusPerNode = 16;

Status CheckRequest(const RehearsalRequest& r) {
  if (!(r.dilation >= 1 && r.dilation <= 1000)) {
    return Status::InvalidArgument(
        fmt::format("dilation: must be in [1, 1000], got {:g}", r.dilation));
  }
  if (r.transition) {
    const double step = r.transition->step_s;
    const double total = step * static_cast<double>(r.transition->transition.phases.size() + 2);
    if (!(step > 0 && total <= 3600)) {
      return Status::InvalidArgument(fmt::format(
          "step seconds: must be > 0 and keep the run ((phases + 2) x step) within 3600 s of the "
          "plan's time, got {:g} s ({:g} s in all)",
          step, total));
    }
  } else if (!(r.duration_s > 0 && r.duration_s <= 3600)) {
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

// The deployments a rehearsal runs: A, the state after the transition, and
// every instance that lives in between (one deployment; equal to A without
// a transition).
struct States {
  Deployment initial, final, every;
  // Per instance of `every` in its order: (phase it starts at the end of,
  // phase it stops at the start of); 0: from the start / never.
  std::vector<std::pair<int, int>> phases;
};

// Every node's plan of each state, on consistent ports: node k's serving
// ports from its own base (bases laid out over `every`, so that nodes
// sharing this host never collide; each node's range in `ranges`); a node a
// state leaves empty has a plan without GPUs.
struct NodePlans {
  std::vector<NodePlan> initial, final, every;
};

Result<NodePlans> RehearsalNodePlans(const RehearsalRequest& r, const States& states,
                                     std::pair<int, int> ephemeral,
                                     std::vector<std::pair<int, int>>& ranges) {
  DeployOptions options;
  options.gpus_per_node = kGpusPerNode;
  options.serving.model_repository = r.work_dir + "/triton";
  options.serving.mps_root = r.work_dir + "/mps";
  options.serving.mps_command = {"sleep", "infinity"};
  options.serving.command = serving::EmulatorCommand(r.tessera_binary, "{model_repository}", r.gpu,
                                                     r.profiles, r.dilation, r.seed);
  options.serving.base_port = r.process_base_port;
  TESSERA_ASSIGN_OR_RETURN(const std::vector<NodePlan> every,
                           BuildNodePlans(states.every, options));
  // Node k's base: the first port after node k - 1's highest, skipping the
  // kernel's ephemeral ports (where the generator's and HAProxy's own
  // connections take theirs: a serving process may not find its port free).
  const auto [ephemeral_low, ephemeral_high] = ephemeral;
  std::vector<std::pair<const NodePlan*, int>> bases;
  int base = r.process_base_port;
  for (const NodePlan& plan : every) {
    int highest = r.process_base_port;
    for (const NodeGpu& g : plan.gpus) {
      for (const NodeInstance& in : g.instances) {
        for (const NodeProcess& p : in.processes) highest = std::max(highest, p.metrics_port);
      }
    }
    const int span = highest - r.process_base_port + 1;
    if (base <= ephemeral_high && base + span - 1 >= ephemeral_low) base = ephemeral_high + 1;
    if (base + span - 1 > 65535) {
      return Status::InvalidArgument(fmt::format(
          "base port: the serving processes of {} need {} ports from {}, past 65535 once the "
          "ephemeral ports {}-{} are skipped; give a lower --base-port or fewer GPUs",
          plan.node, span, base, ephemeral_low, ephemeral_high));
    }
    ranges.emplace_back(base, base + span - 1);
    bases.emplace_back(&plan, base);
    base += span;
  }
  NodePlans out;
  for (const auto& [state, plans] : {std::pair{&states.initial, &out.initial},
                                     {&states.final, &out.final},
                                     {&states.every, &out.every}}) {
    for (const auto& [node, node_base] : bases) {
      options.serving.base_port = node_base;
      TESSERA_ASSIGN_OR_RETURN(std::vector<NodePlan> all, BuildNodePlans(*state, options));
      NodePlan plan;
      plan.node = node->node;
      plan.node_index = node->node_index;
      plan.gpus_per_node = kGpusPerNode;
      plan.gpu = node->gpu;
      plan.serving = options.serving;
      for (NodePlan& p : all) {
        if (p.node_index == node->node_index) plan = std::move(p);
      }
      plans->push_back(std::move(plan));
    }
  }
  return out;
}

// One agent run per node, in parallel: every plan in `plans` applied, or
// with `extra` (--transition T --phase k) a phase of a transition run.
Status RunAgents(const RehearsalRequest& r, const std::vector<NodePlan>& plans,
                 const std::string& stage, Children& children,
                 const std::vector<std::string>& extra = {}) {
  std::vector<std::pair<pid_t, std::string>> running;
  for (const NodePlan& plan : plans) {
    const std::string dir = r.work_dir + "/" + plan.node;
    const std::string plan_path = dir + "/" + stage + ".json";
    TESSERA_RETURN_IF_ERROR(WriteTextFile(plan_path, FormatNodePlanJson(plan)));
    const std::string log = dir + "/agent-" + stage + ".log";
    std::vector<std::string> argv = {r.tessera_binary,
                                     "agent",
                                     "--node",
                                     plan.node,
                                     "--plan",
                                     plan_path,
                                     "--state-dir",
                                     dir + "/state",
                                     "--nvml",
                                     r.fake_nvml_library,
                                     "--mps-control-command",
                                     "none",
                                     "--ready-timeout",
                                     "60s",
                                     "--quiet"};
    if (extra.empty()) argv.push_back("--once");
    argv.insert(argv.end(), extra.begin(), extra.end());
    TESSERA_ASSIGN_OR_RETURN(
        const pid_t pid,
        children.Spawn(argv,
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

// The router's ports (a frontend per service, its metrics port) must miss
// every node's serving ports and the ephemeral ports.
Status CheckRouterPorts(const RehearsalRequest& r, size_t services,
                        std::vector<std::pair<int, int>> ranges, std::pair<int, int> ephemeral) {
  ranges.push_back(ephemeral);
  const int last = r.router_base_port + static_cast<int>(services) - 1;
  for (const auto& [low, high] : ranges) {
    if (r.router_base_port <= high && last >= low) {
      return Status::InvalidArgument(fmt::format(
          "router base port: the frontends' ports {}-{} overlap ports {}-{} (serving processes "
          "or the kernel's ephemeral ports); give another --router-base-port",
          r.router_base_port, last, low, high));
    }
    if (r.router_metrics_port >= low && r.router_metrics_port <= high) {
      return Status::InvalidArgument(fmt::format(
          "router metrics port {} lies in ports {}-{} (serving processes or the kernel's "
          "ephemeral ports); give another --router-metrics-port",
          r.router_metrics_port, low, high));
    }
  }
  if (r.router_metrics_port >= r.router_base_port && r.router_metrics_port <= last) {
    return Status::InvalidArgument(
        fmt::format("router metrics port {} is one of the frontends' ports {}-{}",
                    r.router_metrics_port, r.router_base_port, last));
  }
  return Status::Ok();
}

// The states of the run: without a transition (`lives` null), A alone.
States RehearsalStates(const RehearsalRequest& r, const TransitionLives* lives) {
  States out;
  out.initial = r.deployment;
  if (lives == nullptr) {
    out.final = out.every = r.deployment;
    for (const GpuAssignment& g : r.deployment.gpus) {
      for (size_t i = 0; i < g.instances().size(); ++i) out.phases.emplace_back(0, 0);
    }
    return out;
  }
  out.every = lives->deployment;
  out.phases = lives->phases;
  out.final = out.every;
  size_t i = 0;
  for (GpuAssignment& g : out.final.gpus) {
    std::vector<Instance> alive;
    for (Instance& instance : g.instances()) {
      if (out.phases[i++].second == 0) alive.push_back(std::move(instance));
    }
    g.mig() = std::move(alive);
  }
  return out;
}

// A server of the router and the lives it serves (one, or several when
// instances replace each other at its place).
struct LiveServer {
  std::string backend, name;
  std::vector<RouterLife> lives;
};

std::vector<LiveServer> LiveServers(const std::vector<RouterBackend>& backends) {
  std::vector<LiveServer> out;
  for (const RouterBackend& b : backends) {
    for (const RouterServer& s : b.servers) out.push_back({b.name, s.name, s.lives});
  }
  return out;
}

// Runs the phases of a transition against the clock of the load (started
// at `t0`): drain, agents, ready, as rehearsal.h says. Returns at once
// without a transition.
class PhaseRunner {
 public:
  PhaseRunner(const RehearsalRequest& r, const NodePlans& plans,
              const std::vector<LiveServer>& servers, const serving::HaproxyRuntime& runtime,
              Children& children, const std::atomic<bool>& halt)
      : r_(r),
        plans_(plans),
        servers_(servers),
        runtime_(runtime),
        children_(children),
        halt_(halt) {}

  Result<std::vector<RehearsedPhase>> Run(std::chrono::steady_clock::time_point t0) {
    std::vector<RehearsedPhase> out;
    if (!r_.transition) return out;
    const Transition& t = r_.transition->transition;
    const std::string path = r_.work_dir + "/transition.json";
    TESSERA_RETURN_IF_ERROR(WriteTextFile(path, FormatTransitionJson(t)));
    const double window = r_.transition->step_s * r_.dilation;
    const auto since = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    for (int k = 1; k <= static_cast<int>(t.phases.size()); ++k) {
      if (!SleepUntil(t0, k * window)) return out;
      RehearsedPhase phase;
      phase.phase = k;
      phase.steps = static_cast<int>(t.phases[k - 1].steps.size());
      phase.began_s = since();
      std::vector<const LiveServer*> drained;
      std::vector<std::pair<const LiveServer*, int>> started;  // with its weight
      for (const LiveServer& s : servers_) {
        for (const RouterLife& life : s.lives) {
          if (life.to_phase == k) drained.push_back(&s);
          if (life.from_phase == k) started.emplace_back(&s, life.weight);
        }
      }
      for (const LiveServer* s : drained) {
        TESSERA_RETURN_IF_ERROR(
            runtime_.SetState(s->backend, s->name, serving::ServerState::kDrain));
      }
      std::vector<std::pair<std::string, std::string>> names;
      for (const LiveServer* s : drained) names.emplace_back(s->backend, s->name);
      TESSERA_RETURN_IF_ERROR(runtime_.WaitIdle(names, 120, &halt_));
      for (const LiveServer* s : drained) {
        TESSERA_RETURN_IF_ERROR(
            runtime_.SetState(s->backend, s->name, serving::ServerState::kMaint));
      }
      phase.drained_s = since();
      TESSERA_RETURN_IF_ERROR(RunAgents(r_, plans_.final, fmt::format("phase-{}", k), children_,
                                        {"--transition", path, "--phase", std::to_string(k)}));
      phase.applied_s = since();
      // What the phase started takes requests from the phase's end, as in
      // the simulator: the window is the phase's worst state throughout.
      if (!SleepUntil(t0, (k + 1) * window)) return out;
      for (const auto& [s, weight] : started) {
        TESSERA_RETURN_IF_ERROR(runtime_.SetWeight(s->backend, s->name, weight));
        TESSERA_RETURN_IF_ERROR(
            runtime_.SetState(s->backend, s->name, serving::ServerState::kReady));
        TESSERA_RETURN_IF_ERROR(runtime_.SetHealthUp(s->backend, s->name));
      }
      phase.ready_s = since();
      phase.drained_servers = static_cast<int>(drained.size());
      phase.started_servers = static_cast<int>(started.size());
      phase.late = phase.applied_s > (k + 1) * window;
      if (r_.progress) {
        r_.progress(fmt::format(
            "phase {}/{}: {} step(s); {} server(s) drained in {:.1f} s, agents {:.1f} s, {} "
            "server(s) ready{}",
            k, t.phases.size(), phase.steps, drained.size(), phase.drained_s - phase.began_s,
            phase.applied_s - phase.drained_s, started.size(),
            phase.late ? " (after its window ended)" : ""));
      }
      out.push_back(phase);
    }
    return out;
  }

 private:
  // False when the run was halted first.
  bool SleepUntil(std::chrono::steady_clock::time_point t0, double offset_s) const {
    const auto until = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(offset_s));
    while (std::chrono::steady_clock::now() < until) {
      if (halt_.load()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return !halt_.load();
  }

  const RehearsalRequest& r_;
  const NodePlans& plans_;
  const std::vector<LiveServer>& servers_;
  const serving::HaproxyRuntime& runtime_;
  Children& children_;
  const std::atomic<bool>& halt_;
};

}  // namespace

Result<RehearsalReport> RunRehearsal(const RehearsalRequest& r) {
  TESSERA_RETURN_IF_ERROR(CheckRequest(r));
  const auto say = [&](const std::string& line) {
    if (r.progress) r.progress(line);
  };
  std::error_code ec;
  fs::create_directories(r.work_dir, ec);
  if (ec) return Status::IoError(fmt::format("cannot create {}: {}", r.work_dir, ec.message()));

  std::optional<TransitionLives> lives;
  if (r.transition) {
    TESSERA_ASSIGN_OR_RETURN(
        lives, BuildTransitionLives(r.deployment, r.transition->transition, r.transition->problem,
                                    r.transition->step_s));
  }
  const States states = RehearsalStates(r, lives ? &*lives : nullptr);
  const ServingModel* model = lives ? &lives->model : &r.model;
  // The Triton configurations deploy writes, for every instance that lives.
  TESSERA_ASSIGN_OR_RETURN(const std::vector<DeployFile> files, BuildTritonConfigs(states.every));
  for (const DeployFile& f : files) {
    const fs::path path = fs::path(r.work_dir) / f.path;
    fs::create_directories(path.parent_path(), ec);
    TESSERA_RETURN_IF_ERROR(WriteTextFile(path.string(), f.content));
  }
  std::vector<std::pair<int, int>> ranges;
  const std::pair<int, int> ephemeral = EphemeralPorts();
  TESSERA_ASSIGN_OR_RETURN(const NodePlans plans, RehearsalNodePlans(r, states, ephemeral, ranges));
  TESSERA_RETURN_IF_ERROR(CheckRouterPorts(r, model->services.size(), ranges, ephemeral));
  std::vector<std::string> state_dirs;
  for (const NodePlan& plan : plans.every) {
    fs::create_directories(fs::path(r.work_dir) / plan.node, ec);
    state_dirs.push_back(r.work_dir + "/" + plan.node + "/state");
  }
  const serving::SmallStacks small_stacks;

  Children children;
  RehearsalReport report;
  report.router = std::string(RouterName(r.deployment.rule.router));
  TESSERA_ASSIGN_OR_RETURN(
      report.router_version,
      serving::HaproxyVersion(r.haproxy_binary, r.work_dir + "/haproxy-version.log", children));
  const size_t windows = r.transition ? r.transition->transition.phases.size() + 2 : 0;
  report.duration_s =
      r.transition ? static_cast<double>(windows) * r.transition->step_s : r.duration_s;
  report.dilation = r.dilation;
  const auto stop = [&]() {
    std::vector<NodePlan> empty = plans.every;
    for (NodePlan& plan : empty) plan.gpus.clear();
    const Status stopped = RunAgents(r, empty, "stop", children);
    children.StopAll();
    Status killed = KillUnits(state_dirs);
    return stopped.ok() ? killed : stopped;
  };
  // `error`, after stopping everything (and saying so if that failed too).
  const auto fail = [&](const Status& error) { return serving::AfterStopping(error, stop()); };

  say(fmt::format("applying the plan on {} node(s) (fake NVML), starting the emulators",
                  plans.initial.size()));
  if (Status s = RunAgents(r, plans.initial, "apply", children); !s.ok()) return fail(s);
  Result<std::vector<RouterBackend>> backends = BuildTransitionRouterBackends(
      states.every, states.phases, plans.every, {}, r.router_base_port);
  if (!backends.ok()) return fail(backends.status());
  const std::vector<LiveServer> servers = LiveServers(*backends);
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
  const double timeout_s = serving::RequestTimeoutS(model->services, r.dilation);
  settings.timeout_s = static_cast<int>(std::ceil(timeout_s));
  // The generator keeps a service's idle connections for its next requests;
  // HAProxy closes those idle for 2 s, so that S6's thousands of them (a
  // concurrency peak per service) free its connection slots. Measured: with
  // 60 s, 19,994 idle connections held every slot and the last requests
  // waited in the kernel's accept queue for good.
  settings.keep_alive_s = 2;
  // As many connections as this process's file limit lets HAProxy hold.
  settings.max_connections = serving::HaproxyConnectionLimit(100000);
  // The router's own measurement: its request log, counted per backend.
  std::map<std::string, double> slo_of_backend;  // wall ms
  std::map<std::string, std::string> backend_name;
  for (const RouterBackend& b : *backends) backend_name[b.service] = b.name;
  for (const ServingService& s : model->services) {
    if (backend_name.count(s.name)) slo_of_backend[backend_name[s.name]] = s.slo_ms * r.dilation;
  }
  Result<std::unique_ptr<RouterObserver>> observer = RouterObserver::Start(0, slo_of_backend);
  if (!observer.ok()) return fail(observer.status());
  settings.request_log = fmt::format("127.0.0.1:{}", (*observer)->Port());
  const std::string config = r.work_dir + "/haproxy.cfg";
  TESSERA_RETURN_IF_ERROR(
      WriteTextFile(config, FormatHaproxyConfig(r.deployment.rule, *backends, settings)));
  say("starting the router: " + report.router_version + ", " + report.router);
  const std::string haproxy_log = r.work_dir + "/haproxy.log";
  std::vector<int> frontends;
  for (const RouterBackend& b : *backends) frontends.push_back(b.port);
  std::vector<int> router_ports = frontends;
  router_ports.push_back(r.router_metrics_port);
  if (Status free = serving::CheckPortsFree(router_ports, settings.bind_address); !free.ok()) {
    return fail(free);
  }
  Result<pid_t> haproxy = children.Spawn({r.haproxy_binary, "-db", "-f", config}, {}, haproxy_log);
  Status up =
      haproxy.ok() ? serving::WaitForHaproxy(frontends, *haproxy, haproxy_log) : haproxy.status();
  if (!up.ok()) return fail(up);

  std::vector<LoadTarget> targets;
  std::map<std::string, const RouterBackend*> backend_of;
  for (const RouterBackend& b : *backends) backend_of[b.service] = &b;
  for (const ServingService& s : model->services) {
    const auto b = backend_of.find(s.name);
    if (b == backend_of.end()) continue;
    targets.push_back(serving::DilatedTarget(s, b->second->port, r.dilation));
  }
  LoadOptions load;
  load.duration_s = report.duration_s * r.dilation;
  load.seed = r.seed;
  load.timeout_s = timeout_s;
  for (size_t w = 0; windows > 0 && w <= windows; ++w) {
    load.window_bounds.push_back(static_cast<double>(w) * r.transition->step_s * r.dilation);
  }
  // The load ends early when the caller stops the rehearsal or a phase fails.
  std::atomic<bool> halt{false};
  load.stop = &halt;
  say(
      fmt::format("sending {} service(s)' requests for {:g} s ({:g} s of the plan's time at "
                  "dilation {:g}){}",
                  targets.size(), load.duration_s, report.duration_s, r.dilation,
                  r.transition ? fmt::format(", through {} phase(s)", windows - 2) : ""));
  const serving::HaproxyRuntime runtime(settings.stats_socket);
  PhaseRunner phases(r, plans, servers, runtime, children, halt);
  const auto started = std::chrono::steady_clock::now();
  Result<LoadReport> measured = Status::IoError("the load did not run");
  std::atomic<bool> load_done{false};
  std::thread load_thread([&] {
    measured = RunOpenLoopLoad(targets, load);
    load_done = true;
  });
  Result<std::vector<RehearsedPhase>> ran = phases.Run(started);
  if (!ran.ok()) halt = true;
  while (!load_done.load()) {
    if (r.stop != nullptr && r.stop->load()) halt = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  load_thread.join();
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // The last answers' log lines are on their way.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::map<std::string, LoadCounts> routed = (*observer)->Take();
  say("stopping the router and the node agents");
  const Status stopped = stop();
  if (!socket_dir.empty()) fs::remove_all(socket_dir, ec);
  if (!ran.ok()) return ran.status();
  if (!measured.ok()) return measured.status();
  if (!stopped.ok()) return stopped;
  if (r.stop != nullptr && r.stop->load()) return Status::InvalidArgument("interrupted");
  report.phases = std::move(*ran);

  SimOptions sim;
  sim.duration_s = r.duration_s;
  sim.seed = r.seed;
  std::optional<TransitionSimReport> through;
  if (r.transition) {
    TESSERA_ASSIGN_OR_RETURN(
        through, SimulateTransition(r.deployment, r.transition->transition, r.transition->problem,
                                    sim, r.transition->step_s));
  }
  TESSERA_ASSIGN_OR_RETURN(const SimReport predicted,
                           through ? Result<SimReport>(through->overall) : Simulate(*model, sim));
  std::map<std::string, const LoadResult*> result_of;
  for (const LoadResult& l : measured->services) result_of[l.service] = &l;
  const LoadCounts none;
  const auto counts = [&](const std::string& service, size_t window) -> const LoadCounts& {
    const auto it = result_of.find(service);
    if (it == result_of.end()) return none;
    return window == windows ? it->second->total : it->second->windows[window];
  };
  for (size_t i = 0; i < model->services.size(); ++i) {
    const ServingService& s = model->services[i];
    RehearsedService& out = report.services.emplace_back(
        Measured(s, counts(s.name, windows), predicted.services[i], r.dilation));
    const auto seen = routed.find(backend_name[s.name]);
    if (seen == routed.end()) continue;
    const LoadCounts& c = seen->second;
    out.router_requests = c.sent;
    out.router_failed = c.failed;
    out.router_p99_ms = P99Ms(c, r.dilation);
    out.router_compliance = Compliance(c);
  }
  for (size_t w = 0; through && w < windows; ++w) {
    const TransitionWindowReport& simulated = through->windows[w];
    RehearsedWindow window{simulated.name, simulated.start_s, simulated.end_s, {}};
    for (size_t i = 0; i < model->services.size(); ++i) {
      const ServingService& s = model->services[i];
      window.services.push_back(Measured(s, counts(s.name, w), simulated.services[i], r.dilation));
    }
    report.windows.push_back(std::move(window));
  }
  if (measured->send_jitter_ms.Count() > 0) {
    report.send_jitter_p50_ms = measured->send_jitter_ms.Quantile(0.5);
    report.send_jitter_p99_ms = measured->send_jitter_ms.Quantile(0.99);
  }
  report.connections = measured->connections_opened;
  return report;
}

namespace {

std::string ServiceRows(const std::vector<RehearsedService>& services, bool with_router) {
  std::string out =
      fmt::format("{:<20} {:>9} {:>9} {:>7} {:>10} {:>10} {:>9} | {:>9} {:>10}{}\n", "service",
                  "offered", "served", "failed", "p50 ms", "p99 ms", "in SLO", "simulated",
                  "sim p99", with_router ? " | router: requests  p99 ms    in SLO" : "");
  for (const RehearsedService& s : services) {
    out +=
        fmt::format("{:<20} {:>9} {:>9} {:>7} {:>10.2f} {:>10.2f} {:>8.2f}% | {:>8.2f}% {:>10.2f}",
                    s.name, s.offered, s.served, s.failed, s.p50_ms, s.p99_ms, 100 * s.compliance,
                    100 * s.predicted.compliance, s.predicted.p99_ms);
    if (with_router) {
      out += fmt::format(" | {:>16} {:>7.2f} {:>8.2f}%", s.router_requests, s.router_p99_ms,
                         100 * s.router_compliance);
    }
    out += "\n";
  }
  return out;
}

nlohmann::ordered_json ServicesJson(const std::vector<RehearsedService>& services,
                                    bool with_router) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const RehearsedService& s : services) {
    nlohmann::ordered_json j = {{"name", s.name},
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
                                  {"p99_ms", s.predicted.p99_ms}}}};
    if (with_router) {
      j["router"] = {{"requests", s.router_requests},
                     {"failed", s.router_failed},
                     {"p99_ms", s.router_p99_ms},
                     {"compliance", s.router_compliance}};
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

std::string FormatRehearsalTable(const RehearsalReport& report) {
  std::string out = fmt::format(
      "rehearsal: {:g} s of the plan's time at dilation {:g} ({:.1f} s of wall time), router {} "
      "({})\n",
      report.duration_s, report.dilation, report.wall_s, report.router, report.router_version);
  out += ServiceRows(report.services, true);
  out += fmt::format("send jitter p50 {:.3f} ms, p99 {:.3f} ms (wall); {} connections\n",
                     report.send_jitter_p50_ms, report.send_jitter_p99_ms, report.connections);
  if (!report.phases.empty()) {
    out += fmt::format(
        "\n{:>5} {:>5} {:>8} {:>8} {:>10} {:>10} {:>10}  (wall s from the load's start)\n", "phase",
        "steps", "drained", "started", "began", "drained", "ready");
    for (const RehearsedPhase& p : report.phases) {
      out += fmt::format("{:>5} {:>5} {:>8} {:>8} {:>10.1f} {:>10.1f} {:>10.1f}{}\n", p.phase,
                         p.steps, p.drained_servers, p.started_servers, p.began_s, p.drained_s,
                         p.ready_s, p.late ? "  after its window" : "");
    }
  }
  for (const RehearsedWindow& w : report.windows) {
    out += fmt::format("\n{} [{:g} s, {:g} s):\n", w.name, w.start_s, w.end_s);
    out += ServiceRows(w.services, false);
  }
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
  j["services"] = ServicesJson(report.services, true);
  if (!report.phases.empty()) {
    j["phases"] = nlohmann::ordered_json::array();
    for (const RehearsedPhase& p : report.phases) {
      j["phases"].push_back({{"phase", p.phase},
                             {"steps", p.steps},
                             {"drained_servers", p.drained_servers},
                             {"started_servers", p.started_servers},
                             {"began_s", p.began_s},
                             {"drained_s", p.drained_s},
                             {"applied_s", p.applied_s},
                             {"ready_s", p.ready_s},
                             {"late", p.late}});
    }
    j["windows"] = nlohmann::ordered_json::array();
    for (const RehearsedWindow& w : report.windows) {
      j["windows"].push_back({{"name", w.name},
                              {"start_s", w.start_s},
                              {"end_s", w.end_s},
                              {"services", ServicesJson(w.services, false)}});
    }
  }
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace tessera
