// RunServedRehearsal (rehearsal.h): `tessera serve` in auto mode, node
// agents and the router agent under it, the open-loop load with one
// service's rate stepped, and the transitions serve starts measured.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "agent/control_client.h"
#include "serving/children.h"
#include "serving/haproxy_runtime.h"
#include "serving/load_generator.h"
#include "serving/rehearsal_parts.h"
#include "tessera/deployment_format.h"
#include "tessera/emit/deploy_artifacts.h"
#include "tessera/emit/node_plan.h"
#include "tessera/serving/rehearsal.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using serving::Children;

constexpr int kGpusPerNode = 4;
constexpr const char* kRouter = "edge";
constexpr const char* kModels = "models";

// Every serving port a node of kGpusPerNode GPUs may use (node_plan.h:
// base + 3 x slot, three ports per process).
constexpr int kNodePortSpan = 3 * kGpusPerNode * 8 * kMaxProcessesPerInstance;

Status CheckServedRequest(const ServedRehearsalRequest& r) {
  if (!(r.dilation >= 1 && r.dilation <= 1000)) {
    return Status::InvalidArgument(
        fmt::format("dilation: must be in [1, 1000], got {:g}", r.dilation));
  }
  if (!(r.duration_s > 0 && r.duration_s <= 3600)) {
    return Status::InvalidArgument(
        fmt::format("duration: must be in (0, 3600] seconds, got {:g}", r.duration_s));
  }
  if (!(r.window_s > 0 && r.window_s <= r.duration_s)) {
    return Status::InvalidArgument(
        fmt::format("window: must be > 0 and at most the duration ({:g} s), got {:g}", r.duration_s,
                    r.window_s));
  }
  if (r.day) {
    if (!(r.minute_s > 0 && r.minute_s <= 60)) {
      return Status::InvalidArgument(fmt::format(
          "minute: must be in (0, 60] seconds of the plan's time, got {:g}", r.minute_s));
    }
    if (r.day->services.size() != r.scenario.services.size()) {
      return Status::InvalidArgument(r.day->source + ": its services are not the scenario's");
    }
    if (!r.problem) return Status::InvalidArgument("a compressed day needs the problem to predict");
  } else if (!(r.step_at_s >= 0 && r.step_at_s < r.duration_s)) {
    return Status::InvalidArgument(fmt::format(
        "load step: at {:g} s, outside the run's [0, {:g}) s", r.step_at_s, r.duration_s));
  }
  if (!r.day && !(r.step_factor > 0 && r.step_factor <= 100)) {
    return Status::InvalidArgument(
        fmt::format("load step: factor {:g} must be in (0, 100]", r.step_factor));
  }
  const auto& services = r.scenario.services;
  if (!r.day && std::none_of(services.begin(), services.end(),
                             [&](const Service& s) { return s.name == r.step_service; })) {
    return Status::InvalidArgument("load step: no service " + QuoteForMessage(r.step_service) +
                                   " in the scenario");
  }
  // The agents get the emulator's command as one line of words.
  if (r.profiles.find_first_of(" \t") != std::string::npos) {
    return Status::InvalidArgument("profiles " + QuoteForMessage(r.profiles) +
                                   ": the path must not hold blanks");
  }
  for (const auto& [what, path] :
       {std::pair<std::string_view, const std::string&>{"work directory", r.work_dir},
        {"tessera binary", r.tessera_binary},
        {"fake NVML library", r.fake_nvml_library}}) {
    if (path.empty() || path.front() != '/' || path.find_first_of(" \t") != std::string::npos) {
      return Status::InvalidArgument(fmt::format("{} {} must be an absolute path without blanks",
                                                 what, QuoteForMessage(path)));
    }
  }
  return Status::Ok();
}

// The URL `tessera serve` prints once it listens ("tessera serve: listening
// on http://HOST:PORT (store ...)"), read from its log.
Result<std::string> WaitForServe(const std::string& log, pid_t pid) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  constexpr std::string_view kMark = "listening on ";
  for (;;) {
    Result<std::string> text = ReadTextFile(log);
    if (text.ok()) {
      const size_t at = text->find(kMark);
      if (at != std::string::npos) {
        const size_t from = at + kMark.size();
        return text->substr(from, text->find(' ', from) - from);
      }
    }
    if (Children::Wait(pid, 0) >= 0) {
      return Status::IoError("tessera serve exited: " + serving::Tail(log));
    }
    if (std::chrono::steady_clock::now() > until) {
      return Status::IoError("tessera serve does not listen after 30 s: " + serving::Tail(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// One call to the control plane: its JSON answer, or an IoError naming
// the call and the answer.
Result<Json> Call(ControlClient& client, const std::string& method, const std::string& path,
                  const std::string& body = "") {
  const std::optional<ControlReply> reply = client.Send(method, path, body);
  if (!reply) return Status::IoError(fmt::format("{} {}: stopped", method, path));
  if (reply->status >= 300) {
    return Status::IoError(fmt::format("tessera serve answered {} {} with HTTP {}: {}", method,
                                       path, reply->status, ApiErrorText(reply->body)));
  }
  Json j = Json::parse(reply->body, nullptr, false);
  if (j.is_discarded()) {
    return Status::IoError(fmt::format("{} {}: the answer is not JSON", method, path));
  }
  return j;
}

// The router "models": before each phase's processes start, the model
// configurations of the plan the transition moves to (BuildTritonConfigs)
// in the model repository, for the emulators to read.
class ModelSync {
 public:
  ModelSync(std::unique_ptr<ControlClient> client, std::string repository)
      : client_(std::move(client)), repository_(std::move(repository)) {}

  // Writes `deployment`'s configurations.
  Status Write(const Deployment& deployment) {
    TESSERA_ASSIGN_OR_RETURN(const std::vector<DeployFile> files, BuildTritonConfigs(deployment));
    std::error_code ec;
    for (const DeployFile& f : files) {
      // BuildTritonConfigs' paths start with "triton/": the repository.
      const fs::path path = fs::path(repository_) / f.path.substr(f.path.find('/') + 1);
      fs::create_directories(path.parent_path(), ec);
      TESSERA_RETURN_IF_ERROR(serving::WriteTextFile(path.string(), f.content));
    }
    return Status::Ok();
  }

  // Follows the router work until Stop; the first error ends it.
  Status Run() {
    std::optional<int64_t> since;
    std::set<std::string> acked;
    while (!client_->Stopping()) {
      std::string path = fmt::format("/v1/routers/{}/work?wait=5", kModels);
      if (since) path += fmt::format("&since={}", *since);
      Result<Json> work = Call(*client_, "GET", path);
      if (client_->Stopping()) break;
      if (!work.ok()) return work.status();
      since = (*work)["version"].get<int64_t>();
      const Json& t = (*work)["transition"];
      if (t.is_null() || t["step"].is_null()) continue;
      const int64_t id = t["id"];
      const int phase = t["phase"];
      const std::string step = t["step"];
      const std::string key = fmt::format("{}/{}/{}", id, phase, step);
      if (acked.count(key)) continue;
      if (step == "drain") {
        TESSERA_ASSIGN_OR_RETURN(const Json transition,
                                 Call(*client_, "GET", fmt::format("/v1/transitions/{}", id)));
        const int64_t to = transition["to"];
        TESSERA_ASSIGN_OR_RETURN(const Json plan,
                                 Call(*client_, "GET", fmt::format("/v1/plans/{}", to)));
        TESSERA_ASSIGN_OR_RETURN(
            const Deployment target,
            ParseDeploymentJson(plan["deployment"].dump(), fmt::format("plan {}", to)));
        TESSERA_RETURN_IF_ERROR(Write(target));
      }
      const Json ack = {
          {"transition", {{"id", id}, {"phase", phase}, {"step", step}, {"ok", true}}}};
      TESSERA_RETURN_IF_ERROR(
          client_->PostStatus(fmt::format("/v1/routers/{}/status", kModels), ack.dump()).status());
      acked.insert(key);
    }
    return Status::Ok();
  }

  void Stop() { client_->Stop(); }

 private:
  std::unique_ptr<ControlClient> client_;
  std::string repository_;
};

Result<std::unique_ptr<ControlClient>> Client(const std::string& url, int read_timeout_s) {
  ControlClientOptions options;
  options.server = url;
  options.read_timeout_s = read_timeout_s;
  options.backoff_first_s = 0.1;
  options.backoff_max_s = 1;
  return ControlClient::Create(options);
}

// One serving instance of the cluster and when it took requests (the
// plan's time from the load's start).
struct Life {
  ServingInstance instance;
  double from, until;
};

// What the rehearsal saw of one transition serve ran: when each phase began
// (the plan's time) and its steps (GET /v1/transitions/{id}'s phases).
struct SeenTransition {
  std::map<int, double> phase_began;
  Json phases;
};

// Every instance the cluster ran: the first plan as placed, then each
// transition's phases as they ran: an instance a phase destroys or
// reconfigures stops taking requests when the phase begins, one it creates
// (or reconfigures) starts when the phase ends, as the rollout drains and
// readies them. A created instance's batch times are those of the same
// service, profile, batch and processes in the plans serve made.
Result<std::vector<Life>> ClusterLives(const Deployment& placed, const ServingModel& first_model,
                                       const std::vector<ServingModel>& models,
                                       const std::vector<ServedTransition>& transitions,
                                       const std::map<int64_t, SeenTransition>& seen) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<Life> lives;
  std::map<std::pair<int, int>, size_t> at;  // (GPU, start) -> its life now
  size_t k = 0;
  for (const GpuAssignment& g : placed.gpus) {
    for (const Instance& i : g.instances()) {
      if (k >= first_model.instances.size()) return Status::Internal("the first plan's model");
      at[{g.index, i.start}] = lives.size();
      lives.push_back({first_model.instances[k++], -kInf, kInf});
    }
  }
  for (const ServedTransition& t : transitions) {
    const SeenTransition& view = seen.at(t.id);
    const int phases = static_cast<int>(view.phases.size());
    std::vector<double> began(phases + 2, t.done_s < 0 ? kInf : t.done_s);
    for (int p = 1; p <= phases; ++p) {
      const auto it = view.phase_began.find(p);
      began[p] = it != view.phase_began.end() ? it->second : p == 1 ? t.seen_s : began[p - 1];
    }
    for (int p = 1; p <= phases; ++p) {
      const double ends = p < phases ? began[p + 1] : began[phases + 1];
      for (const Json& step : view.phases[p - 1]["steps"]) {
        const std::string action = step["action"];
        const std::pair<int, int> where{step["gpu"].get<int>(),
                                        step["start"].is_number() ? step["start"].get<int>() : 0};
        if (action != "create") {
          if (const auto it = at.find(where); it != at.end()) {
            lives[it->second].until = std::min(lives[it->second].until, began[p]);
            at.erase(it);
          }
        }
        if (action == "destroy") continue;
        const ServingInstance* like = nullptr;
        for (const ServingModel& m : models) {
          for (const ServingInstance& i : m.instances) {
            if (i.service == step["service"] && i.profile == step["profile"] &&
                i.batch == step["batch"] && i.procs == step["procs"]) {
              like = &i;
            }
          }
        }
        if (like == nullptr) {
          return Status::Internal(
              fmt::format("transition {}: step {} starts an instance no plan has", t.id,
                          step["id"].get<std::string>()));
        }
        ServingInstance started = *like;
        started.gpu = where.first;
        started.start = where.second;
        at[where] = lives.size();
        lives.push_back({std::move(started), ends, kInf});
      }
    }
  }
  return lives;
}

// Each window's predicted share within the SLO (rehearsal.h): the window
// simulated from empty queues on every instance serving in it, each taking
// requests over its life, the arrivals Poisson at the day's minute rates.
Status PredictDay(const ServedRehearsalRequest& r, int64_t first, const Deployment& placed,
                  const std::map<int64_t, Deployment>& plans,
                  const std::map<int64_t, SeenTransition>& seen,
                  const std::vector<int>& measured_index, ServedRehearsalReport& report) {
  std::vector<ServingModel> built;
  std::vector<int64_t> order = {first};
  for (const ServedTransition& t : report.transitions) order.push_back(t.to_plan);
  for (const int64_t id : order) {
    TESSERA_ASSIGN_OR_RETURN(ServingModel model, BuildServingModel(plans.at(id), *r.problem));
    built.push_back(std::move(model));
  }
  TESSERA_ASSIGN_OR_RETURN(const ServingModel first_model, BuildServingModel(placed, *r.problem));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<Life> lives,
                           ClusterLives(placed, first_model, built, report.transitions, seen));
  const size_t services = r.scenario.services.size();
  for (size_t w = 0; w < report.windows.size(); ++w) {
    RehearsedWindow& window = report.windows[w];
    const double from = window.start_s, to = window.end_s;
    ServingModel model;
    model.services = built.front().services;
    for (ServingService& s : model.services) s.instances.clear();
    model.rule = built.front().rule;
    for (const Life& life : lives) {
      if (life.until <= from || life.from >= to) continue;
      ServingInstance i = life.instance;
      i.accepts_from_s = life.from - from;
      i.accepts_until_s = life.until - from;
      model.services[i.service_index].instances.push_back(static_cast<int>(model.instances.size()));
      model.instances.push_back(std::move(i));
    }
    SimOptions sim;
    sim.duration_s = to - from;
    sim.seed = r.seed + w;
    sim.arrivals = ArrivalKind::kTrace;
    std::mt19937_64 rng(sim.seed);
    for (size_t k = 0; k < services; ++k) {
      std::vector<double>& times = sim.trace[model.services[k].name];
      for (int m = static_cast<int>(std::floor(from / r.minute_s + 1e-9));
           m < r.day->minutes() && m * r.minute_s < to; ++m) {
        const double rate = r.day->rps[m][k];
        const double end = std::min(to, (m + 1) * r.minute_s) - from;
        double at = std::max(from, m * r.minute_s) - from;
        while (rate > 0) {
          at += std::exponential_distribution<double>(rate)(rng);
          if (at >= end) break;
          times.push_back(at);
        }
      }
    }
    TESSERA_ASSIGN_OR_RETURN(const SimReport run, Simulate(model, sim));
    for (size_t i = 0; i < window.services.size(); ++i) {
      const ServiceReport& s = run.services[measured_index[i]];
      window.services[i].predicted.compliance = s.requests > 0 ? s.compliance : 1;
      window.services[i].predicted.requests = s.requests;
    }
    int64_t running = first;
    for (const ServedTransition& t : report.transitions) {
      if (t.seen_s <= from) running = t.to_plan;
    }
    report.window_gpus.push_back(plans.at(running).metrics.gpus);
  }
  return Status::Ok();
}

}  // namespace

Result<ServedRehearsalReport> RunServedRehearsal(const ServedRehearsalRequest& request) {
  ServedRehearsalRequest r = request;
  if (r.day) {
    r.duration_s = r.day->minutes() * r.minute_s;
    // Several reports a minute of the policy.
    r.report_interval_s = std::min(r.report_interval_s, r.minute_s * r.dilation / 3);
  }
  TESSERA_RETURN_IF_ERROR(CheckServedRequest(r));
  const auto say = [&](const std::string& line) {
    if (r.progress) r.progress(line);
  };
  std::error_code ec;
  fs::create_directories(r.work_dir, ec);
  if (ec) return Status::InvalidArgument("work directory " + r.work_dir + ": " + ec.message());
  const serving::SmallStacks small_stacks;
  Children children;
  ServedRehearsalReport report;
  report.step_service = r.step_service;
  report.step_factor = r.step_factor;
  report.step_at_s = r.step_at_s;
  report.duration_s = r.duration_s;
  report.dilation = r.dilation;
  if (r.day) {
    report.day_minutes = r.day->minutes();
    report.minute_s = r.minute_s;
  }
  TESSERA_ASSIGN_OR_RETURN(
      report.router_version,
      serving::HaproxyVersion(r.haproxy_binary, r.work_dir + "/haproxy-version.log", children));
  std::vector<std::string> state_dirs;
  std::unique_ptr<ModelSync> sync;
  std::optional<std::thread> sync_thread;
  Status sync_status = Status::Ok();
  const auto stop = [&]() {
    if (sync) sync->Stop();
    if (sync_thread) sync_thread->join();
    sync_thread.reset();
    children.StopAll();
    return serving::KillUnits(state_dirs);
  };
  const auto fail = [&](const Status& error) { return serving::AfterStopping(error, stop()); };

  // 1. The control plane.
  const std::string serve_log = r.work_dir + "/serve.log";
  std::vector<std::string> serve = {r.tessera_binary,
                                    "serve",
                                    "--listen",
                                    "127.0.0.1:0",
                                    "--db",
                                    r.work_dir + "/serve.db",
                                    "--gpus-per-node",
                                    std::to_string(kGpusPerNode),
                                    "--router-agent",
                                    kRouter,
                                    "--router-agent",
                                    kModels,
                                    "--auto",
                                    "--replan-threshold",
                                    fmt::format("{}", r.replan_threshold),
                                    "--replan-hold",
                                    fmt::format("{}", r.replan_hold_s)};
  serve.insert(serve.end(), r.serve_args.begin(), r.serve_args.end());
  if (r.day) {
    serve.insert(serve.end(), {"--autoscale", "--autoscale-minute",
                               fmt::format("{}s", r.minute_s * r.dilation)});
    serve.insert(serve.end(), r.autoscale_args.begin(), r.autoscale_args.end());
  }
  TESSERA_ASSIGN_OR_RETURN(const pid_t serve_pid, children.Spawn(serve, {}, serve_log));
  Result<std::string> url = WaitForServe(serve_log, serve_pid);
  if (!url.ok()) return fail(url.status());
  say("tessera serve at " + *url);
  Result<std::unique_ptr<ControlClient>> client = Client(*url, 30);
  if (!client.ok()) return fail(client.status());
  ControlClient& api = **client;
  Result<Json> plan = Call(api, "POST", "/v1/plans", "{}");
  if (!plan.ok()) return fail(plan.status());
  const int64_t first = (*plan)["id"];
  report.gpus_deployed = (*plan)["metrics"]["gpus"];

  // 2. Nodes (room for twice the plan, three times for a day), their agents, the router agent and
  // the model sync.
  const auto [ephemeral_low, ephemeral_high] = serving::EphemeralPorts();
  (void)ephemeral_high;
  // Room for twice the first plan; a day autoscaled moves through plans
  // that keep what they can, with spare GPUs: three times.
  const int room = (r.day ? 3 : 2) * report.gpus_deployed;
  report.nodes = std::max(1, (room + kGpusPerNode) / kGpusPerNode);
  const int last_port = r.process_base_port + report.nodes * kNodePortSpan - 1;
  if (last_port >= ephemeral_low || last_port > 65535) {
    return fail(Status::InvalidArgument(fmt::format(
        "base port: {} node(s) need ports {}-{}, which reach the ephemeral ports from {}; give a "
        "lower --base-port",
        report.nodes, r.process_base_port, last_port, ephemeral_low)));
  }
  const int last_router = r.router_base_port + static_cast<int>(r.scenario.services.size()) - 1;
  for (const int port : {r.router_base_port, last_router, r.router_metrics_port}) {
    if (port >= r.process_base_port && port <= last_port) {
      return fail(Status::InvalidArgument(
          fmt::format("router ports: {} falls among the serving ports {}-{}", port,
                      r.process_base_port, last_port)));
    }
  }
  const std::string repository = r.work_dir + "/triton";
  std::string serve_command;
  for (const std::string& word : serving::EmulatorCommand(r.tessera_binary, repository, r.gpu,
                                                          r.profiles, r.dilation, r.seed)) {
    serve_command += (serve_command.empty() ? "" : " ") + word;
  }
  std::vector<std::string> router = {r.tessera_binary,
                                     "router-agent",
                                     "--server",
                                     *url,
                                     "--name",
                                     kRouter,
                                     "--work-dir",
                                     r.work_dir + "/router",
                                     "--bind",
                                     "127.0.0.1",
                                     "--frontend-port",
                                     std::to_string(r.router_base_port),
                                     "--metrics-port",
                                     std::to_string(r.router_metrics_port),
                                     "--report-interval",
                                     fmt::format("{}", r.report_interval_s),
                                     "--dilation",
                                     fmt::format("{}", r.dilation),
                                     "--keep-alive",
                                     "2",
                                     "--poll-wait",
                                     "5"};
  for (int k = 0; k < report.nodes; ++k) {
    const std::string node = fmt::format("node-{}", k);
    const std::string dir = r.work_dir + "/" + node;
    fs::create_directories(dir, ec);
    state_dirs.push_back(dir + "/state");
    const int base = r.process_base_port + k * kNodePortSpan;
    router.push_back("--node-address");
    router.push_back(fmt::format("{}=127.0.0.1:{}", node, base));
    Result<pid_t> agent =
        children.Spawn({r.tessera_binary,
                        "agent",
                        "--server",
                        *url,
                        "--node",
                        node,
                        "--state-dir",
                        dir + "/state",
                        "--nvml",
                        r.fake_nvml_library,
                        "--mps-control-command",
                        "none",
                        "--mps-command",
                        "sleep infinity",
                        "--serve-command",
                        serve_command,
                        "--base-port",
                        std::to_string(base),
                        "--mps-root",
                        dir + "/mps",
                        "--ready-timeout",
                        "60s",
                        "--poll-wait",
                        "5"},
                       {"TESSERA_FAKE_NVML_STATE=" + dir + "/nvml.json",
                        fmt::format("TESSERA_FAKE_NVML_DEVICES={}*{}", r.gpu, kGpusPerNode)},
                       dir + "/agent.log");
    if (!agent.ok()) return fail(agent.status());
  }
  const std::string router_log = r.work_dir + "/router-agent.log";
  Result<pid_t> router_pid = children.Spawn(router, {}, router_log);
  if (!router_pid.ok()) return fail(router_pid.status());
  Result<std::unique_ptr<ControlClient>> sync_client = Client(*url, 30);
  if (!sync_client.ok()) return fail(sync_client.status());
  sync = std::make_unique<ModelSync>(std::move(*sync_client), repository);
  sync_thread.emplace([&] { sync_status = sync->Run(); });
  say(fmt::format("{} node agent(s) on the fake NVML, the router agent, the model sync",
                  report.nodes));

  // 3. Deploy the first plan, from the empty cluster.
  Result<Json> deploying =
      Call(api, "POST", "/v1/transitions", Json{{"to", first}, {"start", true}}.dump());
  if (!deploying.ok()) return fail(deploying.status());
  const int64_t deploy_id = (*deploying)["id"];
  say(fmt::format("deploying plan {} ({} GPUs) through transition {}", first, report.gpus_deployed,
                  deploy_id));
  const auto deploy_until = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  for (;;) {
    Result<Json> t = Call(api, "GET", fmt::format("/v1/transitions/{}", deploy_id));
    if (!t.ok()) return fail(t.status());
    if ((*t)["state"] == "done") break;
    if ((*t)["state"] != "running" || std::chrono::steady_clock::now() > deploy_until ||
        (r.stop != nullptr && r.stop->load())) {
      return fail(Status::IoError(fmt::format(
          "deploying plan {}: transition {} is {} ({}); the logs are in {}", first, deploy_id,
          (*t)["state"].get<std::string>(),
          (*t)["error"].is_string() ? (*t)["error"].get<std::string>() : std::string("no error"),
          r.work_dir)));
    }
    if (Children::Wait(*router_pid, 0) >= 0) {
      return fail(Status::IoError("tessera router-agent exited: " + serving::Tail(router_log)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // The first plan as the cluster holds it, for the prediction.
  Deployment placed;
  if (r.day) {
    Result<Json> deployed = Call(api, "GET", "/v1/deployment");
    if (!deployed.ok()) return fail(deployed.status());
    Result<Deployment> d = ParseDeploymentJson((*deployed)["deployment"].dump(), "the deployment");
    if (!d.ok()) return fail(d.status());
    placed = std::move(*d);
  }
  // Each service's frontend: the router agent's, in the work's order.
  Result<Json> work = Call(api, "GET", fmt::format("/v1/routers/{}/work", kRouter));
  if (!work.ok()) return fail(work.status());
  report.router = (*work)["rule"].is_string() ? (*work)["rule"].get<std::string>() : "";
  std::map<std::string, int> frontend;
  for (const Json& b : (*work)["backends"]) {
    const int port = r.router_base_port + static_cast<int>(frontend.size());
    frontend[b["service"]] = port;
  }
  std::vector<int> ports;
  for (const auto& [service, port] : frontend) ports.push_back(port);
  if (Status up = serving::WaitForHaproxy(ports, *router_pid, router_log); !up.ok()) {
    return fail(up);
  }

  // 4. The load, and the transitions serve starts under it.
  std::vector<LoadTarget> targets;
  std::vector<ServingService> measured_services;
  std::vector<int> measured_index;  // scenario index of each measured service
  for (size_t k = 0; k < r.scenario.services.size(); ++k) {
    const Service& service = r.scenario.services[k];
    const auto port = frontend.find(service.name);
    if (port == frontend.end()) continue;
    const ServingService s{service.name, service.rate_rps, service.slo_ms, {}};
    LoadTarget t = serving::DilatedTarget(s, port->second, r.dilation);
    if (r.day) {
      // The day's minutes, each minute_s of the plan's time.
      t.rate_rps = std::max(r.day->rps[0][k], 1e-9) / r.dilation;
      for (int m = 1; m < r.day->minutes(); ++m) {
        t.changes.push_back({m * r.minute_s * r.dilation, r.day->rps[m][k] / r.dilation});
      }
    } else if (s.name == r.step_service) {
      t.changes.push_back({r.step_at_s * r.dilation, t.rate_rps * r.step_factor});
    }
    measured_index.push_back(static_cast<int>(k));
    targets.push_back(t);
    measured_services.push_back(s);
  }
  LoadOptions load;
  load.duration_s = r.duration_s * r.dilation;
  load.seed = r.seed;
  load.timeout_s = serving::RequestTimeoutS(measured_services, r.dilation);
  for (double w = 0; w < r.duration_s - 1e-9; w += r.window_s) {
    load.window_bounds.push_back(w * r.dilation);
  }
  load.window_bounds.push_back(r.duration_s * r.dilation);
  std::atomic<bool> halt{false};
  load.stop = &halt;
  say(fmt::format(
      "sending {} service(s)' requests for {:g} s ({:g} s of the plan's time at "
      "dilation {:g}); {}",
      targets.size(), load.duration_s, r.duration_s, r.dilation,
      r.day ? fmt::format("{} minutes of {}, {:g} s each", r.day->minutes(), r.day->source,
                          r.minute_s)
            : fmt::format("{} x {:g} from {:g} s", r.step_service, r.step_factor, r.step_at_s)));
  const auto started = std::chrono::steady_clock::now();
  Result<LoadReport> measured = Status::IoError("the load did not run");
  std::atomic<bool> load_done{false};
  std::thread load_thread([&] {
    measured = RunOpenLoopLoad(targets, load);
    load_done = true;
  });
  Status watched = Status::Ok();
  std::map<int64_t, ServedTransition> seen;
  std::map<int64_t, SeenTransition> views;
  while (!load_done.load()) {
    if (r.stop != nullptr && r.stop->load()) halt = true;
    const double now =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() /
        r.dilation;
    Result<Json> list = Call(api, "GET", "/v1/transitions?limit=5");
    if (!list.ok()) {
      watched = list.status();
      halt = true;
    }
    for (const Json& t : list.ok() ? (*list)["transitions"] : Json::array()) {
      const int64_t id = t["id"];
      if (id <= deploy_id) continue;
      auto [it, fresh] = seen.try_emplace(id);
      ServedTransition& s = it->second;
      if (fresh) {
        s.id = id;
        s.seen_s = now;
        s.phases = t["summary"]["phases"];
        s.steps = t["summary"]["steps"];
        say(fmt::format("{:.1f} s: serve started transition {} ({} phase(s), {} step(s))", now, id,
                        s.phases, s.steps));
      }
      s.state = t["state"];
      if (s.state == "running") views[id].phase_began.try_emplace(t["phase"].get<int>(), now);
      if (s.state == "done" && s.done_s < 0) {
        s.done_s = now;
        say(fmt::format("{:.1f} s: transition {} done", now, id));
      }
    }
    if (Children::Wait(*router_pid, 0) >= 0 || Children::Wait(serve_pid, 0) >= 0) {
      watched =
          Status::IoError("the router agent or serve exited; their logs are in " + r.work_dir);
      halt = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(r.day ? 100 : 200));
  }
  load_thread.join();
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // Each plan's answer, asked for once.
  std::map<int64_t, Result<Json>> plan_json;
  const auto plan_of = [&](int64_t id) -> const Result<Json>& {
    auto it = plan_json.find(id);
    if (it == plan_json.end()) {
      it = plan_json.emplace(id, Call(api, "GET", fmt::format("/v1/plans/{}", id))).first;
    }
    return it->second;
  };
  for (auto& [id, t] : seen) {
    Result<Json> full = Call(api, "GET", fmt::format("/v1/transitions/{}", id));
    if (!full.ok()) continue;
    t.from_plan = (*full)["from"].get<int64_t>();
    t.to_plan = (*full)["to"].get<int64_t>();
    if (const Result<Json>& from = plan_of(t.from_plan); from.ok()) {
      t.gpus_before = (*from)["metrics"]["gpus"];
    }
    if (const Result<Json>& to = plan_of(t.to_plan); to.ok()) {
      t.gpus_after = (*to)["metrics"]["gpus"];
    }
    views[id].phases = (*full)["phases"];
    report.transitions.push_back(t);
  }
  // The plans serve ran, for the prediction.
  std::map<int64_t, Deployment> plans;
  if (r.day) {
    std::vector<int64_t> ids = {first};
    for (const ServedTransition& t : report.transitions) ids.push_back(t.to_plan);
    for (const int64_t id : ids) {
      const Result<Json>& plan = plan_of(id);
      if (!plan.ok()) return fail(plan.status());
      Result<Deployment> d =
          ParseDeploymentJson((*plan)["deployment"].dump(), fmt::format("plan {}", id));
      if (!d.ok()) return fail(d.status());
      plans[id] = std::move(*d);
    }
    Result<Json> observed = Call(api, "GET", "/v1/observed");
    if (observed.ok() && (*observed)["autoscale"].is_object()) {
      report.autoscale_note = (*observed)["autoscale"]["note"];
    }
  }
  say("stopping serve, the agents and the router");
  const Status stopped = stop();
  if (!watched.ok()) return watched;
  if (!sync_status.ok()) return sync_status;
  if (!measured.ok()) return measured.status();
  if (!stopped.ok()) return stopped;
  if (r.stop != nullptr && r.stop->load()) return Status::InvalidArgument("interrupted");

  for (size_t i = 0; i < measured_services.size(); ++i) {
    report.services.push_back(serving::Measured(measured_services[i], measured->services[i].total,
                                                ServiceReport{}, r.dilation));
  }
  for (size_t w = 0; w + 1 < load.window_bounds.size(); ++w) {
    RehearsedWindow window;
    window.start_s = load.window_bounds[w] / r.dilation;
    window.end_s = load.window_bounds[w + 1] / r.dilation;
    window.name = fmt::format("{:g}-{:g} s", window.start_s, window.end_s);
    for (size_t i = 0; i < measured_services.size(); ++i) {
      window.services.push_back(serving::Measured(
          measured_services[i], measured->services[i].windows[w], ServiceReport{}, r.dilation));
    }
    report.windows.push_back(std::move(window));
  }
  if (measured->send_jitter_ms.Count() > 0) {
    report.send_jitter_p99_ms = measured->send_jitter_ms.Quantile(0.99);
  }
  if (r.day)
    TESSERA_RETURN_IF_ERROR(PredictDay(r, first, placed, plans, views, measured_index, report));
  return report;
}

namespace {

// A compressed day's windows: the lowest service measured, beside its
// prediction, and the largest gap between the two over the services.
std::string DayWindowsTable(const ServedRehearsalReport& report) {
  std::string out =
      fmt::format("\n{:<16} {:>5} {:<20} {:>9} {:>10} {:>8} {:>7}\n", "window", "GPUs",
                  "lowest service", "measured", "predicted", "max gap", "failed");
  double lowest = 1, gap = 0;
  for (size_t i = 0; i < report.windows.size(); ++i) {
    const RehearsedWindow& w = report.windows[i];
    const RehearsedService* low = nullptr;
    double widest = 0;
    long failed = 0;
    for (const RehearsedService& s : w.services) {
      if (low == nullptr || s.compliance < low->compliance) low = &s;
      widest = std::max(widest, std::abs(s.compliance - s.predicted.compliance));
      failed += s.failed;
    }
    if (low == nullptr) continue;
    const int from = static_cast<int>(std::lround(w.start_s / report.minute_s));
    out += fmt::format(
        "{:02d}:{:02d} {:>9}  {:>5} {:<20.20} {:>8.2f}% {:>9.2f}% {:>7.2f} {:>7}\n", from / 60 % 24,
        from % 60, w.name.substr(0, 9), i < report.window_gpus.size() ? report.window_gpus[i] : 0,
        low->name, 100 * low->compliance, 100 * low->predicted.compliance, 100 * widest, failed);
    lowest = std::min(lowest, low->compliance);
    gap = std::max(gap, widest);
  }
  out += fmt::format(
      "\nLowest window-service measured: {:.2f}%; largest gap to the prediction: {:.2f} points\n",
      100 * lowest, 100 * gap);
  if (!report.autoscale_note.empty()) out += "serve's policy last: " + report.autoscale_note + "\n";
  return out;
}

std::string WindowsTable(const ServedRehearsalReport& report) {
  std::string out = fmt::format("\n{:<12}", "window");
  for (const RehearsedService& s : report.services) out += fmt::format(" {:>12.12}", s.name);
  out += fmt::format(" {:>7}\n", "failed");
  for (const RehearsedWindow& w : report.windows) {
    out += fmt::format("{:<12}", w.name);
    long failed = 0;
    for (const RehearsedService& s : w.services) {
      out += fmt::format(" {:>11.2f}%", 100 * s.compliance);
      failed += s.failed;
    }
    out += fmt::format(" {:>7}\n", failed);
  }
  return out;
}

}  // namespace

std::string FormatServedRehearsalTable(const ServedRehearsalReport& report) {
  const bool day = report.day_minutes > 0;
  std::string out = fmt::format(
      "Rehearsal under tessera serve (auto mode): {} node(s), first plan {} GPU(s), router {} "
      "({}), dilation {:g}, {:g} s of the plan's time in {:.1f} s; {}\n\n",
      report.nodes, report.gpus_deployed, report.router, report.router_version, report.dilation,
      report.duration_s, report.wall_s,
      day ? fmt::format("a day of {} minutes, {:g} s each, autoscaled", report.day_minutes,
                        report.minute_s)
          : fmt::format("{} x {:g} from {:g} s", report.step_service, report.step_factor,
                        report.step_at_s));
  out += "Transitions serve started:\n";
  if (report.transitions.empty()) out += "  none\n";
  for (const ServedTransition& t : report.transitions) {
    const std::string when =
        day ? fmt::format("minute {}", static_cast<int>(t.seen_s / report.minute_s))
            : fmt::format("{:.1f} s after the step", t.seen_s - report.step_at_s);
    out +=
        fmt::format("  {}: seen at {:.1f} s ({}), {} phase(s), {} step(s), {} -> {} GPUs, {}{}\n",
                    t.id, t.seen_s, when, t.phases, t.steps, t.gpus_before, t.gpus_after, t.state,
                    t.done_s >= 0 ? fmt::format(" at {:.1f} s", t.done_s) : "");
  }
  if (day) {
    out += DayWindowsTable(report);
  } else {
    out += WindowsTable(report);
  }
  out += fmt::format("\n{:<20} {:>9} {:>9} {:>7} {:>10} {:>9}\n", "service", "offered", "served",
                     "failed", "p99 ms", "in SLO");
  for (const RehearsedService& s : report.services) {
    out += fmt::format("{:<20} {:>9} {:>9} {:>7} {:>10.2f} {:>8.2f}%\n", s.name, s.offered,
                       s.served, s.failed, s.p99_ms, 100 * s.compliance);
  }
  out += fmt::format("\nSend jitter p99: {:.2f} ms (wall)\n", report.send_jitter_p99_ms);
  return out;
}

std::string FormatServedRehearsalJson(const ServedRehearsalReport& report) {
  using OJson = nlohmann::ordered_json;
  const bool day = report.day_minutes > 0;
  const auto services = [day](const std::vector<RehearsedService>& list, bool predicted) {
    OJson out = OJson::array();
    for (const RehearsedService& s : list) {
      OJson one{{"name", s.name},       {"rate_rps", s.rate_rps}, {"slo_ms", s.slo_ms},
                {"offered", s.offered}, {"served", s.served},     {"failed", s.failed},
                {"p50_ms", s.p50_ms},   {"p99_ms", s.p99_ms},     {"compliance", s.compliance}};
      if (day && predicted) one["predicted_compliance"] = s.predicted.compliance;
      out.push_back(std::move(one));
    }
    return out;
  };
  OJson j;
  j["router"] = report.router;
  j["router_version"] = report.router_version;
  j["nodes"] = report.nodes;
  j["gpus_deployed"] = report.gpus_deployed;
  j["dilation"] = report.dilation;
  j["duration_s"] = report.duration_s;
  j["wall_s"] = report.wall_s;
  if (day) {
    j["day"] = OJson{{"minutes", report.day_minutes},
                     {"minute_s", report.minute_s},
                     {"autoscale_note", report.autoscale_note}};
  } else {
    j["step"] = OJson{{"service", report.step_service},
                      {"factor", report.step_factor},
                      {"at_s", report.step_at_s}};
  }
  OJson transitions = OJson::array();
  for (const ServedTransition& t : report.transitions) {
    transitions.push_back(OJson{{"id", t.id},
                                {"from_plan", t.from_plan},
                                {"to_plan", t.to_plan},
                                {"phases", t.phases},
                                {"steps", t.steps},
                                {"gpus_before", t.gpus_before},
                                {"gpus_after", t.gpus_after},
                                {"state", t.state},
                                {"seen_s", t.seen_s},
                                {"done_s", t.done_s >= 0 ? OJson(t.done_s) : OJson(nullptr)}});
  }
  j["transitions"] = std::move(transitions);
  OJson windows = OJson::array();
  for (size_t i = 0; i < report.windows.size(); ++i) {
    const RehearsedWindow& w = report.windows[i];
    OJson one{{"name", w.name}, {"start_s", w.start_s}, {"end_s", w.end_s}};
    if (i < report.window_gpus.size()) one["gpus"] = report.window_gpus[i];
    one["services"] = services(w.services, true);
    windows.push_back(std::move(one));
  }
  j["windows"] = std::move(windows);
  j["services"] = services(report.services, false);
  j["send_jitter_p99_ms"] = report.send_jitter_p99_ms;
  return j.dump(2) + "\n";
}

}  // namespace tessera
