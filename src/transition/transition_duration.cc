#include "tessera/transition/transition_duration.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace tessera {

double StepSeconds(const TransitionStep& step, const StepDurations& durations) {
  const double mps = step.procs > 1 ? durations.mps_start_s : 0;
  switch (step.action) {
    case StepAction::kCreate:
      return durations.mig_create_s + mps + durations.model_load_s;
    case StepAction::kDestroy:
      return durations.drain_s + durations.mig_destroy_s;
    case StepAction::kReconfigure:
      return durations.drain_s + mps + durations.model_load_s;
  }
  return 0;
}

std::vector<double> PhaseSeconds(const Transition& transition, const StepDurations& durations) {
  std::vector<double> phases;
  for (const TransitionPhase& phase : transition.phases) {
    std::map<int, double> per_gpu;
    for (const TransitionStep& step : phase.steps)
      per_gpu[step.gpu] += StepSeconds(step, durations);
    double slowest = 0;
    for (const auto& [gpu, seconds] : per_gpu) slowest = std::max(slowest, seconds);
    phases.push_back(slowest);
  }
  return phases;
}

double TransitionSeconds(const Transition& transition, const StepDurations& durations) {
  const std::vector<double> phases = PhaseSeconds(transition, durations);
  return std::accumulate(phases.begin(), phases.end(), 0.0);
}

}  // namespace tessera
