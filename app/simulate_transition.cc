// The `simulate --transition` pieces of simulate_transition.h.
#include "simulate_transition.h"

#include <fmt/format.h>

#include <algorithm>

#include "durations.h"
#include "tessera/text_io.h"
#include "tessera/transition_format.h"

namespace tessera::cli {

Result<Transition> LoadTransition(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseTransitionJson(text, path);
}

Result<double> TransitionRunSeconds(const Transition& transition,
                                    const std::optional<double>& step_seconds) {
  if (!step_seconds) {
    return Status::InvalidArgument(
        "--step-seconds: required with --transition (how long each phase is simulated, " +
        DescribeRange(kTransitionStep) + ")");
  }
  const double steps = static_cast<double>(transition.phases.size()) + 2;
  const double run_s = steps * *step_seconds;
  if (run_s > kSimulatedTime.max_s) {
    return Status::InvalidArgument(fmt::format(
        "--step-seconds: {} phases + 2 steps of {} last {}, past {} (the longest simulated "
        "duration)",
        transition.phases.size(), FormatDuration(*step_seconds), FormatDuration(run_s),
        FormatDuration(kSimulatedTime.max_s)));
  }
  return run_s;
}

Deployment WithStartedServices(Deployment d, const Transition& transition) {
  for (const TransitionPhase& phase : transition.phases) {
    for (const TransitionStep& step : phase.steps) {
      if (step.action == StepAction::kDestroy ||
          std::any_of(d.services.begin(), d.services.end(),
                      [&](const ServiceOutcome& s) { return s.name == step.service; })) {
        continue;
      }
      ServiceOutcome started;
      started.name = step.service;
      started.model = step.model;
      d.services.push_back(std::move(started));
    }
  }
  return d;
}

}  // namespace tessera::cli
