#include "control/rollout.h"

#include <fmt/format.h>

#include <algorithm>

namespace tessera {
namespace {

int PhaseCount(const StoredTransition& t) {
  int phases = 0;
  for (const StoredStep& step : t.steps) phases = std::max(phases, step.phase);
  return phases;
}

// Moves past every phase whose steps are all done, setting the next
// phase's steps running; "done" after the last.
void Advance(StoredTransition& t) {
  const int phases = PhaseCount(t);
  while (t.phase <= phases) {
    const bool finished = std::all_of(t.steps.begin(), t.steps.end(), [&](const StoredStep& s) {
      return s.phase != t.phase || s.state == "done";
    });
    if (!finished) return;
    if (t.phase == phases) break;
    ++t.phase;
    for (StoredStep& step : t.steps) {
      if (step.phase == t.phase) step.state = "running";
    }
  }
  t.state = "done";
}

Status NotAllowed(const StoredTransition& t, std::string_view what) {
  return Status::InvalidArgument(
      fmt::format("transition {} is {}: cannot {}", t.id, t.state, what));
}

}  // namespace

int NodeIndexOf(int gpu, const DeployOptions& deploy) { return gpu / deploy.gpus_per_node; }

std::vector<StoredStep> StoredStepsOf(const Transition& transition, const DeployOptions& deploy) {
  std::vector<StoredStep> steps;
  for (size_t p = 0; p < transition.phases.size(); ++p) {
    for (const TransitionStep& step : transition.phases[p].steps) {
      StoredStep stored;
      stored.step_id = step.id;
      stored.phase = static_cast<int>(p) + 1;
      stored.node = NodeName(deploy, NodeIndexOf(step.gpu, deploy));
      steps.push_back(std::move(stored));
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
  for (StoredStep& step : t.steps) {
    if (step.phase == 1) step.state = "running";
  }
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
    step.state = ok ? "done" : "failed";
    step.error = ok ? "" : why;
  }
  t.updated_at = now;
  if (!ok) {
    t.state = "paused";
    t.error = why;
    return Status::Ok();
  }
  Advance(t);
  return Status::Ok();
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
