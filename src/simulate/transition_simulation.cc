// SimulateTransition (transition_simulation.h): one simulation over a
// deployment holding every instance that lives during the transition, each
// taking requests only while it is up (ServingInstance's acceptance window),
// reported over the whole run and window by window.
#include "tessera/simulate/transition_simulation.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "simulate/windowed_simulation.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

constexpr double kForever = std::numeric_limits<double>::infinity();

// One instance over the run: where it is, what it serves, when it takes
// requests.
struct Life {
  int gpu = 0;
  Instance instance;
  int created_in = 0;    // the phase at whose end it starts; 0: A's
  int destroyed_in = 0;  // the phase at whose start it stops; 0: never
};

// A's instances, then every one the transition starts, replayed phase by
// phase: phase k's destroys and reconfigures stop taking requests at its
// start, its creates and reconfigures start at its end.
Result<std::vector<Life>> Lives(const Deployment& from, const Transition& transition) {
  std::vector<Life> lives;
  std::map<std::pair<int, int>, size_t> up;  // (gpu, start) -> its life now
  for (const GpuAssignment& g : from.gpus) {
    for (const Instance& i : g.instances()) {
      up[{g.index, i.start}] = lives.size();
      lives.push_back({g.index, i, 0, 0});
    }
  }
  for (size_t k = 0; k < transition.phases.size(); ++k) {
    const std::vector<TransitionStep>& steps = transition.phases[k].steps;
    for (const TransitionStep& step : steps) {
      if (step.action == StepAction::kCreate) continue;
      const std::string& was =
          step.action == StepAction::kDestroy ? step.service : step.from_service;
      auto it = up.find({step.gpu, step.start});
      if (it == up.end() || lives[it->second].instance.profile != step.profile ||
          lives[it->second].instance.service != was) {
        return Status::InvalidArgument(fmt::format(
            "transition step {}: GPU {} holds no {}@{} of service {} when phase {} starts",
            QuoteForMessage(step.id), step.gpu, step.profile, step.start, QuoteForMessage(was),
            k + 1));
      }
      lives[it->second].destroyed_in = static_cast<int>(k + 1);
      up.erase(it);
    }
    for (const TransitionStep& step : steps) {
      if (step.action == StepAction::kDestroy) continue;
      if (!up.emplace(std::pair{step.gpu, step.start}, lives.size()).second) {
        return Status::InvalidArgument(
            fmt::format("transition step {}: GPU {} already holds an instance at slice {} when "
                        "phase {} ends",
                        QuoteForMessage(step.id), step.gpu, step.start, k + 1));
      }
      lives.push_back({step.gpu, InstanceAfter(step), static_cast<int>(k + 1), 0});
    }
  }
  return lives;
}

// A with every life on its GPU (A's GPUs in A's order, then spares by
// index), and for each instance BuildServingModel will make, in its order,
// the life it stands for.
std::pair<Deployment, std::vector<size_t>> Union(const Deployment& from,
                                                 const std::vector<Life>& lives) {
  Deployment d = from;
  std::map<int, size_t> position;  // gpu index -> into d.gpus
  for (GpuAssignment& g : d.gpus) {
    position[g.index] = &g - d.gpus.data();
    g.mig().clear();
  }
  std::map<int, GpuAssignment> spares;
  for (const Life& life : lives) {
    if (!position.count(life.gpu)) spares[life.gpu].index = life.gpu;
  }
  for (auto& [index, g] : spares) {
    position[index] = d.gpus.size();
    d.gpus.push_back(std::move(g));
  }
  std::vector<std::vector<size_t>> on_gpu(d.gpus.size());
  for (size_t i = 0; i < lives.size(); ++i) {
    const size_t p = position[lives[i].gpu];
    d.gpus[p].mig().push_back(lives[i].instance);
    on_gpu[p].push_back(i);
  }
  std::vector<size_t> order;
  for (const std::vector<size_t>& ids : on_gpu) order.insert(order.end(), ids.begin(), ids.end());
  return {std::move(d), std::move(order)};
}

std::string WindowName(size_t w, size_t windows) {
  if (w == 0) return "before";
  return w + 1 == windows ? "after" : fmt::format("phase {}", w);
}

}  // namespace

Result<TransitionLives> BuildTransitionLives(const Deployment& from, const Transition& transition,
                                             const Problem& problem, double step_seconds) {
  if (!(step_seconds > 0 && std::isfinite(step_seconds))) {
    return Status::InvalidArgument(fmt::format(
        "step seconds: must be a finite number of seconds > 0, got {:g}", step_seconds));
  }
  if (from.sharing == Sharing::kMps || problem.mps()) {
    return Status::InvalidArgument(
        "a transition moves MIG instances; the deployment is an MPS plan");
  }
  if (transition.gpu != from.gpu) {
    return Status::InvalidArgument(
        fmt::format("the transition is for GPU {}, the deployment is on {}",
                    QuoteForMessage(transition.gpu), QuoteForMessage(from.gpu)));
  }
  TESSERA_ASSIGN_OR_RETURN(const std::vector<Life> lives, Lives(from, transition));
  auto [deployment, order] = Union(from, lives);
  TESSERA_ASSIGN_OR_RETURN(ServingModel model, BuildServingModel(deployment, problem));
  TransitionLives out;
  size_t i = 0;
  for (GpuAssignment& g : deployment.gpus) {
    for (Instance& instance : g.instances()) {
      const Life& life = lives[order[i]];
      ServingInstance& serving = model.instances[i++];
      serving.accepts_from_s = life.created_in == 0 ? 0 : (life.created_in + 1) * step_seconds;
      serving.accepts_until_s =
          life.destroyed_in == 0 ? kForever : life.destroyed_in * step_seconds;
      instance.latency_ms = serving.latency_ms[serving.batch - 1];
      out.phases.emplace_back(life.created_in, life.destroyed_in);
    }
  }
  out.deployment = std::move(deployment);
  out.model = std::move(model);
  return out;
}

Result<TransitionSimReport> SimulateTransition(const Deployment& from, const Transition& transition,
                                               const Problem& problem, const SimOptions& options,
                                               double step_seconds) {
  TESSERA_ASSIGN_OR_RETURN(const TransitionLives lives,
                           BuildTransitionLives(from, transition, problem, step_seconds));
  const ServingModel& model = lives.model;
  const size_t windows = transition.phases.size() + 2;
  std::vector<double> bounds;
  for (size_t w = 0; w <= windows; ++w) bounds.push_back(static_cast<double>(w) * step_seconds);
  SimOptions run = options;
  run.duration_s = bounds.back();
  TESSERA_ASSIGN_OR_RETURN(WindowedSimReport simulated, SimulateWindows(model, run, bounds));
  TransitionSimReport report;
  report.overall = std::move(simulated.overall);
  for (size_t w = 0; w < windows; ++w) {
    report.windows.push_back(
        {WindowName(w, windows), bounds[w], bounds[w + 1], std::move(simulated.windows[w])});
  }
  return report;
}

}  // namespace tessera
