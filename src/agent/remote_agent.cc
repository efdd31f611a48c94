// The node agent under a control plane: see remote_agent.h.
#include "tessera/agent/remote_agent.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "agent/control_client.h"
#include "tessera/emit/node_plan.h"
#include "tessera/transition/transition_format.h"
#include "tessera/util/text_io.h"
#include "util/json_reader.h"
#include "util/json_structure.h"

namespace tessera {
namespace {

// What GET /v1/nodes/{node}/plan answers.
struct NodeWork {
  int64_t version = 0;
  NodePlan plan;
  std::string plan_text;  // FormatNodePlanJson(plan): compared to see a change
  struct Phase {
    nlohmann::json id;  // echoed as given (string or integer)
    int phase = 0;
    bool paused = false;  // a step failed somewhere: hold
    Transition transition;
    size_t steps = 0;  // this node's steps in the phase
  };
  std::optional<Phase> transition;
};

}  // namespace

class RemoteAgent::Impl {
 public:
  Impl(RemoteAgentOptions options, AgentProgress progress, std::unique_ptr<ControlClient> client)
      : options_(std::move(options)), progress_(std::move(progress)), client_(std::move(client)) {}

  Status Round();
  void Stop() { client_->Stop(); }
  bool Stopping() const { return client_->Stopping(); }

 private:
  void Say(const std::string& line) const {
    if (progress_) progress_(line);
  }
  std::optional<ControlReply> Send(const std::string& method, const std::string& path,
                                   const std::string& body) {
    return client_->Send(method, path, body);
  }
  Result<NodeWork> ParseWork(const std::string& body) const;
  // Adopts the work's plan (Open the first time). An error is fatal only
  // when the agent does not open; a plan that does not fit is `misfit`.
  Status Adopt(const NodeWork& work, std::string* misfit);
  // Runs the work's phase (a plan that does not fit fails it with `misfit`).
  Status RunPhase(const NodeWork& work, const std::string& misfit);
  Status Reconcile(const NodeWork& work, const std::string& misfit);
  nlohmann::ordered_json Inventory();
  // Posts a NodeStatus; its answer's status (200, 409, ...), 0 when stopped.
  Result<int> Post(const nlohmann::ordered_json& status);

  RemoteAgentOptions options_;
  AgentProgress progress_;
  std::unique_ptr<ControlClient> client_;
  std::unique_ptr<NodeAgent> agent_;
  std::string plan_text_;                            // the plan the agent runs
  std::optional<int64_t> since_;                     // the version acted on
  std::set<std::pair<std::string, int>> phases_ok_;  // (id, phase) posted ok
  std::string last_posted_;                          // the last plain status posted
};

Result<NodeWork> RemoteAgent::Impl::ParseWork(const std::string& body) const {
  const std::string source = "NodeWork from " + options_.server;
  const JsonReader r(source);
  if (const std::string bad = CheckJsonStructure(body); !bad.empty()) return r.Error("", bad);
  const nlohmann::json j = nlohmann::json::parse(body);
  static constexpr std::array<std::string_view, 4> kKeys = {"version", "node", "plan",
                                                            "transition"};
  TESSERA_RETURN_IF_ERROR(r.Keys(j, "", kKeys));
  NodeWork work;
  if (!j["version"].is_number_integer()) return r.Error("version", "expected an integer");
  work.version = j["version"].get<int64_t>();
  TESSERA_ASSIGN_OR_RETURN(const std::string node, r.String(j, "", "node", true));
  if (node != options_.node) {
    return r.Error("node", fmt::format("the work is for node {}, this agent is {}",
                                       QuoteForMessage(node), QuoteForMessage(options_.node)));
  }
  if (!j["plan"].is_object()) return r.Error("plan", "expected a NodePlan object");
  TESSERA_ASSIGN_OR_RETURN(work.plan, ParseNodePlanJson(j["plan"].dump(), source + ": plan"));
  work.plan_text = FormatNodePlanJson(work.plan);
  const nlohmann::json& t = j["transition"];
  if (t.is_null()) return work;
  static constexpr std::array<std::string_view, 5> kPhaseKeys = {"id", "phase", "state",
                                                                 "transition", "steps"};
  TESSERA_RETURN_IF_ERROR(r.Keys(t, "transition", kPhaseKeys));
  NodeWork::Phase phase;
  phase.id = t["id"];
  if (!phase.id.is_string() && !phase.id.is_number_integer())
    return r.Error("transition.id", "expected a string or an integer");
  TESSERA_ASSIGN_OR_RETURN(phase.phase, r.Int(t, "transition", "phase", 1));
  TESSERA_ASSIGN_OR_RETURN(const std::string state, r.String(t, "transition", "state", true));
  if (state != "running" && state != "paused") {
    return r.Error("transition.state",
                   "expected \"running\" or \"paused\", got " + DescribeJson(t["state"]));
  }
  phase.paused = state == "paused";
  if (!t["transition"].is_object()) return r.Error("transition.transition", "expected an object");
  TESSERA_ASSIGN_OR_RETURN(phase.transition,
                           ParseTransitionJson(t["transition"].dump(), source + ": transition"));
  TESSERA_RETURN_IF_ERROR(r.Array(t, "transition", "steps"));
  phase.steps = t["steps"].size();
  work.transition = std::move(phase);
  return work;
}

Status RemoteAgent::Impl::Adopt(const NodeWork& work, std::string* misfit) {
  if (!agent_) {
    TESSERA_ASSIGN_OR_RETURN(
        agent_, NodeAgent::Open(options_.node, work.plan, options_.nvml_library, options_.agent,
                                progress_));
    plan_text_ = work.plan_text;
    return Status::Ok();
  }
  if (work.plan_text == plan_text_) return Status::Ok();
  if (Status s = agent_->SetPlan(work.plan); !s.ok()) {
    *misfit = s.message();
    Say("keeping the last plan: " + s.message());
    return Status::Ok();
  }
  plan_text_ = work.plan_text;
  Say(fmt::format("version {}: a new plan", work.version));
  return Status::Ok();
}

nlohmann::ordered_json RemoteAgent::Impl::Inventory() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  Result<std::vector<AgentInstance>> seen = agent_->Observe();
  if (!seen.ok()) {
    Say("cannot read the node's inventory: " + seen.status().message());
    return out;
  }
  for (const AgentInstance& i : *seen) {
    nlohmann::ordered_json item = {{"gpu", i.gpu}, {"profile", i.profile}, {"start", i.start}};
    if (!i.service.empty()) item["service"] = i.service;
    item["ready"] = i.ready;
    out.push_back(item);
  }
  return out;
}

Result<int> RemoteAgent::Impl::Post(const nlohmann::ordered_json& status) {
  return client_->PostStatus("/v1/nodes/" + options_.node + "/status", status.dump());
}

Status RemoteAgent::Impl::RunPhase(const NodeWork& work, const std::string& misfit) {
  const NodeWork::Phase& p = *work.transition;
  const std::string id = p.id.is_string() ? p.id.get<std::string>() : p.id.dump();
  // A paused transition holds every node where it stopped: no step runs and
  // nothing is reconciled until it is resumed (or aborted).
  if (p.paused) {
    Say(fmt::format("version {}: transition {} is paused at phase {}: holding", work.version, id,
                    p.phase));
    return Status::Ok();
  }
  // A node without steps in the phase waits for its turn.
  if (p.steps == 0 || phases_ok_.count({id, p.phase}) > 0) return Status::Ok();
  Say(fmt::format("version {}: transition {} phase {}: {} step(s) here", work.version, id, p.phase,
                  p.steps));
  std::string error = misfit;
  bool converged = false;
  Result<AgentReport> report =
      misfit.empty()
          ? agent_->RunTransition(p.transition, "transition " + id, std::optional<int>(p.phase))
          : Result<AgentReport>(Status::InvalidArgument(misfit));
  if (!report.ok()) {
    error = report.status().message();
  } else {
    for (const AgentStep& s : report->steps) {
      if (!s.ok && error.empty()) error = s.op + ": " + s.error;
    }
    const bool last = p.phase == static_cast<int>(p.transition.phases.size());
    if (error.empty() && !report->converged) {
      error = "the node did not converge to its plan after the phase";
      for (const std::string& note : report->notes) {
        if (note.rfind("not converged: ", 0) == 0) error = note;
      }
    }
    converged = last && report->converged && error.empty();
  }
  nlohmann::ordered_json result = {{"id", p.id}, {"phase", p.phase}, {"ok", error.empty()}};
  if (!error.empty()) result["error"] = error;
  const nlohmann::ordered_json status = {
      {"transition", result}, {"converged", converged}, {"inventory", Inventory()}};
  TESSERA_ASSIGN_OR_RETURN(const int code, Post(status));
  if (code == 409)
    Say(fmt::format("transition {} phase {} no longer runs; polling again", id, p.phase));
  if (code == 200 && error.empty()) phases_ok_.insert({id, p.phase});
  if (code == 200)
    Say(fmt::format("transition {} phase {}: {}", id, p.phase, error.empty() ? "ok" : error));
  last_posted_.clear();  // after a phase the plain status is news again
  return Status::Ok();
}

Status RemoteAgent::Impl::Reconcile(const NodeWork& work, const std::string& misfit) {
  bool converged = false;
  if (misfit.empty()) {
    Result<AgentReport> report = agent_->Reconcile();
    if (!report.ok()) {
      Say("reconcile: " + report.status().message());
    } else {
      converged = report->converged;
      for (const AgentStep& s : report->steps) {
        if (!s.ok) Say("failed: " + s.op + ": " + s.error);
      }
    }
  }
  const nlohmann::ordered_json status = {{"converged", converged}, {"inventory", Inventory()}};
  const std::string key = plan_text_ + status.dump();
  if (key == last_posted_) return Status::Ok();
  TESSERA_ASSIGN_OR_RETURN(const int code, Post(status));
  if (code == 200) {
    last_posted_ = key;
    Say(fmt::format("version {}: {}", work.version,
                    converged ? "converged to the plan" : "NOT converged to the plan"));
  }
  return Status::Ok();
}

Status RemoteAgent::Impl::Round() {
  if (Stopping()) return Status::Ok();
  std::string path = fmt::format("/v1/nodes/{}/plan?wait={}", options_.node, options_.poll_wait_s);
  if (since_) path += fmt::format("&since={}", *since_);
  const std::optional<ControlReply> reply = Send("GET", path, "");
  if (!reply) return Status::Ok();
  if (reply->status != 200) {
    const std::string why =
        fmt::format("GET {}{}: the server answered HTTP {}: {}", options_.server, path,
                    reply->status, ApiErrorText(reply->body));
    if (reply->status == 401) {
      return Status::InvalidArgument(why + " (give the daemon's token with --token-file)");
    }
    return reply->status == 404 ? Status::NotFound(why) : Status::InvalidArgument(why);
  }
  TESSERA_ASSIGN_OR_RETURN(const NodeWork work, ParseWork(reply->body));
  std::string misfit;
  TESSERA_RETURN_IF_ERROR(Adopt(work, &misfit));
  since_ = work.version;
  if (work.transition) return RunPhase(work, misfit);
  return Reconcile(work, misfit);
}

Result<std::unique_ptr<RemoteAgent>> RemoteAgent::Create(RemoteAgentOptions options,
                                                         AgentProgress progress) {
  if (options.node.empty()) return Status::InvalidArgument("--node is required");
  if (options.node.find_first_of("/?#% ") != std::string::npos) {
    return Status::InvalidArgument("--node " + QuoteForMessage(options.node) +
                                   ": not a node name (node-<k>)");
  }
  if (options.poll_wait_s < 0 || options.poll_wait_s > 60) {
    return Status::InvalidArgument(
        fmt::format("--poll-wait {}: must be 0..60 s", options.poll_wait_s));
  }
  ControlClientOptions client;
  client.server = options.server;
  client.token = options.token;
  client.read_timeout_s = options.poll_wait_s + 15;
  client.backoff_first_s = options.backoff_first_s;
  client.backoff_max_s = options.backoff_max_s;
  client.sleep = options.sleep;
  client.say = [progress](const std::string& line) {
    if (progress) progress(line);
  };
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<ControlClient> c, ControlClient::Create(client));
  options.server = c->server();
  return std::unique_ptr<RemoteAgent>(new RemoteAgent(
      std::make_unique<Impl>(std::move(options), std::move(progress), std::move(c))));
}

RemoteAgent::RemoteAgent(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RemoteAgent::~RemoteAgent() = default;

Status RemoteAgent::Round() { return impl_->Round(); }

Status RemoteAgent::Run() {
  while (!impl_->Stopping()) TESSERA_RETURN_IF_ERROR(impl_->Round());
  return Status::Ok();
}

void RemoteAgent::Stop() { impl_->Stop(); }

}  // namespace tessera
