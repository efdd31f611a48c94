// RouterAgent (router_agent.h): HAProxy kept in step with the control
// plane's router work, and what its request log counts posted back.
#include "tessera/serving/router_agent.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "agent/control_client.h"
#include "emit/router_config.h"
#include "serving/children.h"
#include "serving/haproxy_runtime.h"
#include "serving/router_observer.h"
#include "serving/router_work.h"
#include "tessera/emit/deploy_artifacts.h"
#include "tessera/latency_rule.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

using Json = nlohmann::json;
using ServerKey = std::pair<std::string, std::string>;  // (backend, server)
using serving::ParseRouterWork;
using serving::RouterWork;
using serving::WorkBackend;
using serving::WorkServer;

// What HAProxy holds of one server, as this agent set it.
struct Held {
  RouterServerState state = RouterServerState::kMaint;
  int weight = -1;
};

serving::ServerState RuntimeState(RouterServerState s) {
  switch (s) {
    case RouterServerState::kReady:
      return serving::ServerState::kReady;
    case RouterServerState::kDrain:
      return serving::ServerState::kDrain;
    case RouterServerState::kMaint:
      break;
  }
  return serving::ServerState::kMaint;
}

}  // namespace

Result<std::pair<std::string, NodeAddress>> ParseNodeAddress(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(fmt::format(
        "--node-address {}: {}; give NODE=HOST or NODE=HOST:PORT, e.g. node-0=10.0.0.5:20000",
        QuoteForMessage(text), why));
  };
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return bad("expected NODE=HOST");
  std::string node = text.substr(0, eq);
  std::string rest = text.substr(eq + 1);
  NodeAddress address;
  const size_t colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(':') == colon) {
    const std::optional<int> port = ToPort(std::string_view(rest).substr(colon + 1));
    if (!port) return bad("the port must be 1..65535");
    address.base_port = *port;
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return bad("no host");
  if (rest.find_first_of(" /") != std::string::npos) return bad("not a host");
  address.host = rest;
  return std::pair{std::move(node), std::move(address)};
}

class RouterAgent::Impl {
 public:
  Impl(RouterAgentOptions options, std::unique_ptr<ControlClient> poll,
       std::unique_ptr<ControlClient> report)
      : o_(std::move(options)), poll_(std::move(poll)), report_(std::move(report)) {}

  Status Run();
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    poll_->Stop();
    report_->Stop();
  }

 private:
  void Say(const std::string& line) const {
    if (o_.progress) o_.progress("router-agent " + o_.name + ": " + line);
  }
  std::string Path(std::string_view what) const {
    return fmt::format("/v1/routers/{}/{}", o_.name, what);
  }
  // The server as HAProxy reaches it: its node's address, the port moved by
  // the node's base.
  RouterServer Addressed(const RouterServer& s, int plan_base) const {
    RouterServer out = s;
    out.address = s.node;
    if (auto it = o_.nodes.find(s.node); it != o_.nodes.end()) {
      out.address = it->second.host;
      if (it->second.base_port > 0) out.port = s.port - plan_base + it->second.base_port;
    }
    return out;
  }
  // (Re)starts HAProxy with frontends for every backend of `work`.
  Status StartHaproxy(const RouterWork& work);
  // HAProxy's servers as `work` lists them; acknowledges its step.
  Status Apply(const RouterWork& work);
  Status Post(const nlohmann::ordered_json& body);
  void Report();

  RouterAgentOptions o_;
  std::unique_ptr<ControlClient> poll_, report_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> halt_{false};
  serving::Children children_;
  std::optional<pid_t> haproxy_;
  std::string log_;
  std::string socket_;  // HAProxy's runtime API
  std::unique_ptr<serving::HaproxyRuntime> runtime_;
  std::unique_ptr<RouterObserver> observer_;
  std::optional<Router> rule_;
  std::map<std::string, int> frontends_;         // backend -> its frontend port
  std::map<std::string, std::string> services_;  // backend -> service (guarded by mu_)
  std::map<ServerKey, Held> held_;
  std::set<std::tuple<int64_t, int, std::string>> acked_;  // (id, phase, step)
};

Status RouterAgent::Impl::StartHaproxy(const RouterWork& work) {
  if (haproxy_) {
    Say("a service without a frontend: restarting HAProxy with a new configuration");
    children_.Stop(*haproxy_);
    haproxy_.reset();
  }
  rule_ = *work.rule;
  std::vector<RouterBackend> backends;
  std::vector<int> ports;
  for (const WorkBackend& b : work.backends) {
    auto [it, fresh] = frontends_.emplace(b.name, 0);
    if (fresh) {
      int port = o_.frontend_base_port;
      for (const auto& [name, used] : frontends_) port = std::max(port, used + 1);
      it->second = port;
    }
    RouterBackend backend{b.service, b.name, it->second, {}};
    for (const WorkServer& s : b.servers) {
      RouterServer server = Addressed(s.server, work.base_port);
      server.enabled = false;  // states are set through the runtime API
      backend.servers.push_back(std::move(server));
    }
    ports.push_back(backend.port);
    backends.push_back(std::move(backend));
  }
  RouterSettings settings;
  settings.bind_address = o_.bind_address;
  settings.metrics_port = o_.metrics_port;
  settings.stats_socket = socket_;
  settings.max_connections = serving::HaproxyConnectionLimit(o_.max_connections);
  settings.keep_alive_s = o_.keep_alive_s;
  settings.request_log = fmt::format("127.0.0.1:{}", observer_->Port());
  LatencyRule rule;
  rule.router = *rule_;
  const std::string config = o_.work_dir + "/haproxy.cfg";
  TESSERA_RETURN_IF_ERROR(
      serving::WriteTextFile(config, FormatHaproxyConfig(rule, backends, settings)));
  std::vector<int> taken = ports;
  taken.push_back(o_.metrics_port);
  TESSERA_RETURN_IF_ERROR(serving::CheckPortsFree(taken, o_.bind_address));
  Result<pid_t> pid = children_.Spawn({o_.haproxy_binary, "-db", "-f", config}, {}, log_);
  if (!pid.ok()) return pid.status();
  haproxy_ = *pid;
  TESSERA_RETURN_IF_ERROR(serving::WaitForHaproxy(ports, *pid, log_));
  held_.clear();
  for (const RouterBackend& b : backends) {
    for (const RouterServer& s : b.servers) held_[{b.name, s.name}] = Held{};
  }
  Say(fmt::format("HAProxy serves {} service(s) from port {} ({} rule)", backends.size(),
                  o_.frontend_base_port, RouterName(*rule_)));
  return Status::Ok();
}

Status RouterAgent::Impl::Apply(const RouterWork& work) {
  if (work.backends.empty()) return Status::Ok();
  if (!work.rule) return Status::InvalidArgument("router work with backends but no rule");
  bool restart = !haproxy_ || *work.rule != *rule_;
  for (const WorkBackend& b : work.backends) restart |= !frontends_.count(b.name);
  if (restart) TESSERA_RETURN_IF_ERROR(StartHaproxy(work));
  {
    std::map<std::string, double> slo;
    std::lock_guard<std::mutex> lock(mu_);
    for (const WorkBackend& b : work.backends) {
      services_[b.name] = b.service;
      // Measured in the log's (wall) milliseconds.
      if (b.slo_ms) slo[b.name] = *b.slo_ms * o_.dilation;
    }
    observer_->SetSloMs(std::move(slo));
  }
  std::set<ServerKey> listed;
  std::vector<ServerKey> draining;
  int changes = 0;
  for (const WorkBackend& b : work.backends) {
    for (const WorkServer& s : b.servers) {
      const ServerKey key{b.name, s.server.name};
      listed.insert(key);
      auto it = held_.find(key);
      if (it == held_.end()) {
        RouterServer server = Addressed(s.server, work.base_port);
        TESSERA_RETURN_IF_ERROR(
            runtime_->AddServer(b.name, server.name, FormatServerArgs(*rule_, server)));
        it = held_.emplace(key, Held{}).first;
        ++changes;
      }
      Held& held = it->second;
      if (s.server.weight != held.weight) {
        TESSERA_RETURN_IF_ERROR(runtime_->SetWeight(b.name, s.server.name, s.server.weight));
        held.weight = s.server.weight;
      }
      if (s.state != held.state) {
        TESSERA_RETURN_IF_ERROR(runtime_->SetState(b.name, s.server.name, RuntimeState(s.state)));
        if (s.state == RouterServerState::kReady) {
          TESSERA_RETURN_IF_ERROR(runtime_->SetHealthUp(b.name, s.server.name));
        }
        held.state = s.state;
        ++changes;
      }
      if (s.state == RouterServerState::kDrain) draining.push_back(key);
    }
  }
  // Servers no longer listed: out of the router once idle.
  std::vector<ServerKey> gone;
  for (auto& [key, held] : held_) {
    if (listed.count(key)) continue;
    if (held.state != RouterServerState::kMaint) {
      TESSERA_RETURN_IF_ERROR(
          runtime_->SetState(key.first, key.second, serving::ServerState::kMaint));
      held.state = RouterServerState::kMaint;
    }
    gone.push_back(key);
  }
  if (!gone.empty()) {
    TESSERA_RETURN_IF_ERROR(runtime_->WaitIdle(gone, o_.drain_timeout_s, &halt_));
    for (const ServerKey& key : gone) {
      TESSERA_RETURN_IF_ERROR(runtime_->DelServer(key.first, key.second));
      held_.erase(key);
    }
  }
  if (changes > 0 || !gone.empty()) {
    Say(fmt::format("version {}: {} change(s), {} server(s) removed, {} draining", work.version,
                    changes, gone.size(), draining.size()));
  }
  if (!work.transition || work.transition->step.empty()) return Status::Ok();
  const RouterWork::Step& t = *work.transition;
  if (acked_.count({t.id, t.phase, t.step})) return Status::Ok();
  nlohmann::ordered_json result{{"id", t.id}, {"phase", t.phase}, {"step", t.step}, {"ok", true}};
  if (t.step == "drain") {
    const auto began = std::chrono::steady_clock::now();
    Status idle = runtime_->WaitIdle(draining, o_.drain_timeout_s, &halt_);
    if (halt_.load()) return Status::Ok();
    if (idle.ok()) {
      for (const ServerKey& key : draining) {
        TESSERA_RETURN_IF_ERROR(
            runtime_->SetState(key.first, key.second, serving::ServerState::kMaint));
        held_[key].state = RouterServerState::kMaint;
      }
      Say(fmt::format(
          "transition {} phase {}: {} server(s) drained in {:.2f} s", t.id, t.phase,
          draining.size(),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count()));
    } else {
      result["ok"] = false;
      result["error"] = idle.message();
    }
  } else {
    Say(fmt::format("transition {} phase {}: its new servers are ready", t.id, t.phase));
  }
  TESSERA_RETURN_IF_ERROR(Post({{"transition", result}}));
  acked_.insert({t.id, t.phase, t.step});
  return Status::Ok();
}

Status RouterAgent::Impl::Post(const nlohmann::ordered_json& body) {
  return poll_->PostStatus(Path("status"), body.dump()).status();
}

void RouterAgent::Impl::Report() {
  auto last = std::chrono::steady_clock::now();
  // A service's rate is what its frontend received (HAProxy's counter), not
  // what the log counted: the log counts a request when its answer ends, so
  // an overloaded service's logged rate stayed at what it served, and serve
  // re-planned for that, the plan it already had. Where the counters cannot
  // be read, the report says so and its rates are the requests answered.
  // A frontend not counted before counts from zero: HAProxy starts after
  // this thread, with the first work.
  std::map<std::string, long> received;
  bool said = false;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait_for(lock, std::chrono::duration<double>(o_.report_interval_s),
                     [&] { return stopping_; });
      if (stopping_) return;
    }
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last).count();
    last = now;
    const std::map<std::string, LoadCounts> counts = observer_->Take();
    Result<std::map<std::string, long>> now_received = runtime_->FrontendRequests();
    nlohmann::ordered_json observed = nlohmann::ordered_json::object();
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [backend, service] : services_) {
        const auto it = counts.find(backend);
        const LoadCounts none;
        const LoadCounts& c = it == counts.end() ? none : it->second;
        nlohmann::ordered_json o;
        long arrived = c.sent;
        if (now_received.ok()) {
          const auto at = now_received->find(backend);
          const auto before = received.find(backend);
          const long was = before == received.end() ? 0 : before->second;
          // A counter lower than before: HAProxy restarted (a new service).
          if (at != now_received->end())
            arrived = at->second >= was ? at->second - was : at->second;
        }
        o["rate_rps"] = static_cast<double>(arrived) / seconds * o_.dilation;
        o["requests"] = c.sent;
        if (c.sent > 0) o["slo_compliance"] = static_cast<double>(c.within_slo) / c.sent;
        if (c.latency_ms.Count() > 0) {
          o["p99_ms"] = std::max(1e-3, c.latency_ms.Quantile(0.99) / o_.dilation);
        }
        observed[service] = std::move(o);
      }
    }
    const bool counted = now_received.ok();
    if (counted) received = std::move(*now_received);
    if (observed.empty()) continue;
    if (!counted && !said) {
      Say("rates from the request log (requests answered): " + now_received.status().message());
    }
    said = !counted;
    const std::optional<ControlReply> reply = report_->Send(
        "POST", Path("status"), nlohmann::ordered_json{{"observed", observed}}.dump());
    if (reply && reply->status != 200) {
      Say(fmt::format("report refused: HTTP {}: {}", reply->status, ApiErrorText(reply->body)));
    }
  }
}

Status RouterAgent::Impl::Run() {
  std::error_code ec;
  std::filesystem::create_directories(o_.work_dir, ec);
  if (ec) return Status::IoError("--work-dir " + o_.work_dir + ": " + ec.message());
  log_ = o_.work_dir + "/haproxy.log";
  TESSERA_ASSIGN_OR_RETURN(const std::string version,
                           serving::HaproxyVersion(o_.haproxy_binary, log_, children_));
  Say(version);
  TESSERA_ASSIGN_OR_RETURN(observer_, RouterObserver::Start(0, {}));
  // HAProxy refuses a socket path longer than 97 bytes: then one in /tmp.
  socket_ = o_.work_dir + "/haproxy.sock";
  std::string socket_dir;
  if (socket_.size() > 97) {
    std::string pattern = "/tmp/tessera-router-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      return Status::IoError("cannot make a directory for HAProxy's socket under /tmp");
    }
    socket_dir = pattern;
    socket_ = socket_dir + "/admin.sock";
  }
  runtime_ = std::make_unique<serving::HaproxyRuntime>(socket_);
  std::thread reporter([this] { Report(); });
  Status status = Status::Ok();
  std::optional<int64_t> since;
  while (status.ok()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) break;
    }
    std::string path = fmt::format("{}?wait={}", Path("work"), o_.poll_wait_s);
    if (since) path += fmt::format("&since={}", *since);
    const std::optional<ControlReply> reply = poll_->Send("GET", path, "");
    if (!reply) break;
    if (reply->status != 200) {
      status = Status::InvalidArgument(fmt::format("GET {}{}: the server answered HTTP {}: {}",
                                                   o_.server, path, reply->status,
                                                   ApiErrorText(reply->body)));
      break;
    }
    Result<RouterWork> work =
        ParseRouterWork(reply->body, "router work from " + o_.server, o_.name);
    if (!work.ok()) {
      status = work.status();
      break;
    }
    status = Apply(*work);
    since = work->version;
    if (haproxy_ && serving::Children::Wait(*haproxy_, 0) >= 0) {
      status = Status::IoError("haproxy exited: " + serving::Tail(log_));
    }
  }
  halt_ = true;
  Stop();
  reporter.join();
  children_.StopAll();
  if (!socket_dir.empty()) std::filesystem::remove_all(socket_dir, ec);
  return status;
}

Result<std::unique_ptr<RouterAgent>> RouterAgent::Create(RouterAgentOptions options) {
  if (!IsDns1123Label(options.name)) {
    return Status::InvalidArgument("--name " + QuoteForMessage(options.name) +
                                   ": a router name is a DNS-1123 label (tessera serve "
                                   "--router-agent NAME)");
  }
  if (options.work_dir.empty()) return Status::InvalidArgument("--work-dir is required");
  if (!(options.report_interval_s >= 0.1 && options.report_interval_s <= 3600)) {
    return Status::InvalidArgument(
        fmt::format("--report-interval {:g}: must be 0.1..3600 s", options.report_interval_s));
  }
  if (!(options.dilation >= 1 && options.dilation <= 1000)) {
    return Status::InvalidArgument(
        fmt::format("--dilation {:g}: must be in [1, 1000]", options.dilation));
  }
  if (options.poll_wait_s < 0 || options.poll_wait_s > 60) {
    return Status::InvalidArgument(
        fmt::format("--poll-wait {}: must be 0..60 s", options.poll_wait_s));
  }
  for (const auto& [flag, port] : {std::pair{"--frontend-port", options.frontend_base_port},
                                   {"--metrics-port", options.metrics_port}}) {
    if (port < 1 || port > 65535) {
      return Status::InvalidArgument(fmt::format("{} {}: must be 1..65535", flag, port));
    }
  }
  ControlClientOptions client;
  client.server = options.server;
  client.token = options.token;
  client.read_timeout_s = options.poll_wait_s + 15;
  client.say = options.progress;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<ControlClient> poll, ControlClient::Create(client));
  client.read_timeout_s = 15;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<ControlClient> report, ControlClient::Create(client));
  options.server = poll->server();
  return std::unique_ptr<RouterAgent>(new RouterAgent(
      std::make_unique<Impl>(std::move(options), std::move(poll), std::move(report))));
}

RouterAgent::RouterAgent(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RouterAgent::~RouterAgent() = default;
Status RouterAgent::Run() { return impl_->Run(); }
void RouterAgent::Stop() { impl_->Stop(); }

}  // namespace tessera
