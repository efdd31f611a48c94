#include "planners/migserving/migserving_planner.h"

#include <fmt/format.h>

#include "planners/migserving/greedy.h"

namespace tessera {
namespace {

using migserving::ConfigSpace;
using migserving::Coverage;
using migserving::Deployment;

// Reports the GA's rounds to `sink`, at most once a second of `clock`.
class ProgressLine {
 public:
  ProgressLine(std::string_view planner, const Clock& clock,
               std::function<void(std::string_view)> sink)
      : planner_(planner), clock_(clock), sink_(std::move(sink)), last_ms_(clock.NowMs()) {}

  void operator()(const migserving::GeneticProgress& p, const Deadline& deadline) {
    if (!sink_ || clock_.NowMs() - last_ms_ < 1000) return;
    last_ms_ = clock_.NowMs();
    sink_(
        fmt::format("{}: round {}, best {} GPUs / {} slices (fast algorithm: {} / {}), "
                    "{} rounds without improvement, {:.1f} s",
                    planner_, p.round, p.best.gpus, p.best.slices, p.start.gpus, p.start.slices,
                    p.stalled, deadline.ElapsedS()));
  }

 private:
  std::string_view planner_;
  const Clock& clock_;
  std::function<void(std::string_view)> sink_;
  double last_ms_;
};

// The share of the time limit the fast algorithm may take.
constexpr double kFastAlgorithmShare = 0.9;

class MigServingPlanner : public Planner {
 public:
  MigServingPlanner(const MigServingOptions& options, std::string name)
      : options_(options), name_(std::move(name)) {}

  std::string_view Name() const override { return name_; }
  // The fast algorithm alone runs to the end when given no limit, but its
  // first move scores every pair of services.
  double CompareTimeLimitS() const override {
    return options_.genetic ? options_.default_time_limit_s : options_.compare_time_limit_s;
  }
  bool UsesMigServingScore() const override { return true; }

  Result<PlanResult> Plan(const Problem& problem, const PlanContext& context) const override {
    const Clock& clock = context.clock ? *context.clock : SystemClock();
    // The GA's budget covers both phases; the fast algorithm alone runs to
    // the end unless given a time limit.
    const double limit_s = context.time_limit_s > 0 ? context.time_limit_s
                           : options_.genetic       ? options_.default_time_limit_s
                                                    : 0;
    const Deadline deadline(clock, limit_s);
    // The fast algorithm stops at 90% of the limit: the rest is for serving
    // the services it has not reached, trimming and describing the plan.
    const Deadline greedy_deadline(clock, kFastAlgorithmShare * limit_s);
    const ConfigSpace space =
        ConfigSpace::Build(problem, options_.max_procs, context.migserving_score);
    Coverage coverage(space);
    Deployment deployment;
    TESSERA_ASSIGN_OR_RETURN(const migserving::GreedyOutcome greedy,
                             migserving::GreedyFill(space, coverage, deployment, greedy_deadline));
    if (greedy.alone > 0 && context.progress) {
      context.progress(fmt::format(
          "{}: the time limit ({:g} s) passed during the fast algorithm: {} of {} services are "
          "on GPUs of their own instead of shared ones; a longer --time-limit gives a better "
          "plan",
          name_, limit_s, greedy.alone, problem.services().size()));
    }
    migserving::Trim(space, deployment);
    if (options_.genetic) {
      ProgressLine line(name_, clock, context.progress);
      deployment =
          migserving::Evolve(space, std::move(deployment), options_.ga, context.seed, deadline,
                             [&](const migserving::GeneticProgress& p) { line(p, deadline); });
    }
    PlanResult plan;
    for (const migserving::GpuConfig& config : deployment) {
      plan.mig().push_back(space.Segments(config));
    }
    return plan;
  }

 private:
  const MigServingOptions options_;
  const std::string name_;
};

}  // namespace

Status MigServingOptions::Validate() const {
  if (max_procs < 1) return Status::InvalidArgument("migserving: max_procs must be >= 1");
  if (!(default_time_limit_s > 0)) {
    return Status::InvalidArgument("migserving: default_time_limit_s must be > 0");
  }
  if (!(compare_time_limit_s > 0)) {
    return Status::InvalidArgument("migserving: compare_time_limit_s must be > 0");
  }
  return ga.Validate();
}

std::unique_ptr<Planner> NewMigServingPlanner(const MigServingOptions& options, std::string name) {
  return std::make_unique<MigServingPlanner>(options, std::move(name));
}

}  // namespace tessera
