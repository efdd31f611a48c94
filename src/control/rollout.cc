#include "control/rollout.h"

#include <fmt/format.h>

#include <algorithm>

namespace tessera {
namespace {

constexpr std::string_view kRouterPrefix = "router/";

bool IsRouterStep(const StoredStep& step) { return step.node.starts_with(kRouterPrefix); }

// A step's place in the order of a transition's steps: by phase, and in a
// phase the routers' drain, the nodes' steps, the routers' ready.
int OrderOf(const StoredStep& step) {
  const int stage = !IsRouterStep(step) ? 1 : RouterStepKind(step) == "drain" ? 0 : 2;
  return step.phase * 3 + stage;
}

// Sets the first unfinished stage's pending steps running (and the phase
// to theirs); "done" when every step is.
void Advance(StoredTransition& t) {
  int next = -1;
  for (const StoredStep& step : t.steps) {
    if (step.state == "done") continue;
    if (next < 0 || OrderOf(step) < next) next = OrderOf(step);
  }
  if (next < 0) {
    t.state = "done";
    return;
  }
  t.phase = next / 3;
  for (StoredStep& step : t.steps) {
    if (OrderOf(step) == next && step.state == "pending") step.state = "running";
  }
}

// Marks `step` done or failed (pausing the transition with `why`), then
// advances.
void Finish(StoredTransition& t, StoredStep& step, bool ok, const std::string& why) {
  step.state = ok ? "done" : "failed";
  step.error = ok ? "" : why;
  if (!ok) {
    t.state = "paused";
    t.error = why;
  }
}

Status NotAllowed(const StoredTransition& t, std::string_view what) {
  return Status::InvalidArgument(
      fmt::format("transition {} is {}: cannot {}", t.id, t.state, what));
}

}  // namespace

int NodeIndexOf(int gpu, const DeployOptions& deploy) { return gpu / deploy.gpus_per_node; }

std::string RouterStepNode(const std::string& router) {
  return std::string(kRouterPrefix) + router;
}

std::string RouterStepKind(const StoredStep& step) {
  return step.step_id.substr(0, step.step_id.find('-'));
}

std::optional<std::string> RouterOfStep(const StoredStep& step) {
  if (!IsRouterStep(step)) return std::nullopt;
  return step.node.substr(kRouterPrefix.size());
}

std::vector<StoredStep> StoredStepsOf(const Transition& transition, const DeployOptions& deploy,
                                      const std::vector<std::string>& routers) {
  std::vector<StoredStep> steps;
  for (size_t p = 0; p < transition.phases.size(); ++p) {
    const int phase = static_cast<int>(p) + 1;
    for (const std::string& router : routers) {
      steps.push_back({fmt::format("drain-{}-{}", phase, router), phase, RouterStepNode(router),
                       "pending", ""});
    }
    for (const TransitionStep& step : transition.phases[p].steps) {
      StoredStep stored;
      stored.step_id = step.id;
      stored.phase = static_cast<int>(p) + 1;
      stored.node = NodeName(deploy, NodeIndexOf(step.gpu, deploy));
      steps.push_back(std::move(stored));
    }
    for (const std::string& router : routers) {
      steps.push_back({fmt::format("ready-{}-{}", phase, router), phase, RouterStepNode(router),
                       "pending", ""});
    }
  }
  return steps;
}

Status StartRollout(StoredTransition& t, const std::string& now) {
  if (t.state != "proposed") return NotAllowed(t, "start");
  t.state = "running";
  t.phase = 1;
  t.error.clear();
  t.updated_at = now;
  Advance(t);
  return Status::Ok();
}

Status ApplyPhaseResult(StoredTransition& t, const std::string& node, int phase, bool ok,
                        const std::string& error, const std::string& now) {
  if (t.state != "running") return NotAllowed(t, fmt::format("take a result for phase {}", phase));
  if (phase != t.phase) {
    return Status::InvalidArgument(
        fmt::format("transition {} runs phase {}, not phase {}", t.id, t.phase, phase));
  }
  const std::string why = error.empty() ? fmt::format("node {} failed phase {}", node, phase)
                                        : fmt::format("node {}: {}", node, error);
  for (StoredStep& step : t.steps) {
    if (step.phase != phase || step.node != node || step.state != "running") continue;
    Finish(t, step, ok, why);
  }
  t.updated_at = now;
  if (t.state == "running") Advance(t);
  return Status::Ok();
}

Status ApplyRouterResult(StoredTransition& t, const std::string& router, int phase,
                         const std::string& step, bool ok, const std::string& error,
                         const std::string& now) {
  if (t.state != "running") {
    return NotAllowed(t, fmt::format("take router {}'s {} of phase {}", router, step, phase));
  }
  const std::string node = RouterStepNode(router);
  auto it = std::find_if(t.steps.begin(), t.steps.end(), [&](const StoredStep& s) {
    return s.node == node && RouterStepKind(s) == step && s.phase == phase && s.state == "running";
  });
  if (it == t.steps.end()) {
    const std::string running = RunningRouterStep(t, router);
    return Status::InvalidArgument(
        fmt::format("transition {} runs no {} step of router {} in phase {} (phase {} runs{})",
                    t.id, step, router, phase, t.phase,
                    running.empty() ? ", not its router steps" : ", its " + running + " step"));
  }
  Finish(t, *it, ok,
         error.empty() ? fmt::format("router {} failed its {} of phase {}", router, step, phase)
                       : fmt::format("router {}: {}", router, error));
  t.updated_at = now;
  if (t.state == "running") Advance(t);
  return Status::Ok();
}

std::string RunningRouterStep(const StoredTransition& t, const std::string& router) {
  if (t.state != "running") return "";
  const std::string node = RouterStepNode(router);
  for (const StoredStep& step : t.steps) {
    if (step.node == node && step.phase == t.phase && step.state == "running") {
      return RouterStepKind(step);
    }
  }
  return "";
}

Status ResumeRollout(StoredTransition& t, const std::string& now) {
  if (t.state != "paused") return NotAllowed(t, "resume");
  for (StoredStep& step : t.steps) {
    if (step.state == "failed") {
      step.state = "running";
      step.error.clear();
    }
  }
  t.state = "running";
  t.error.clear();
  t.updated_at = now;
  Advance(t);
  return Status::Ok();
}

Status AbortRollout(StoredTransition& t, const std::string& now) {
  if (t.state != "proposed" && t.state != "paused") return NotAllowed(t, "abort");
  t.state = "aborted";
  if (t.error.empty()) t.error = "aborted";
  t.updated_at = now;
  return Status::Ok();
}

std::vector<std::string> RunningStepsOf(const StoredTransition& t, const std::string& node) {
  std::vector<std::string> ids;
  if (t.state != "running") return ids;
  for (const StoredStep& step : t.steps) {
    if (step.phase == t.phase && step.node == node && step.state == "running")
      ids.push_back(step.step_id);
  }
  return ids;
}

}  // namespace tessera
