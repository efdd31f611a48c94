#include "planners/migserving/greedy.h"

namespace tessera::migserving {
namespace {

bool AlmostSatisfied(const ConfigSpace& space, const Coverage& coverage, int service) {
  const double need = coverage.Need(service);
  return need > 0 && need < space.WholeGpuUtility(service);
}

// The best configuration mixing at most two services of `open`; nullopt at
// the deadline.
std::optional<ScoredConfig> BestPairConfig(const ConfigSpace& space, const std::vector<int>& open,
                                           const Coverage& coverage, const Deadline& deadline) {
  ScoredConfig best;
  const size_t n = open.size();
  for (int layout = 0; layout < static_cast<int>(space.layouts().size()); ++layout) {
    for (size_t a = 0; a < n; ++a) {
      if (deadline.Passed()) return std::nullopt;
      for (size_t b = n == 1 ? a : a + 1; b < n; ++b) {
        const int pair[] = {open[a], open[b]};
        ScoredConfig config =
            space.Best(layout, std::span<const int>(pair, a == b ? 1 : 2), coverage);
        if (config.score > best.score) best = std::move(config);
      }
    }
  }
  return best;
}

// Gives every unsatisfied service, in index order, the best configurations
// serving it alone until it is satisfied; returns how many services it served.
Result<int> FillAlone(const ConfigSpace& space, Coverage& coverage, Deployment& deployment) {
  const std::vector<int> open = coverage.Unsatisfied();
  for (const int service : open) {
    const int alone[] = {service};
    while (!coverage.Satisfied(service)) {
      ScoredConfig best;
      for (int layout = 0; layout < static_cast<int>(space.layouts().size()); ++layout) {
        ScoredConfig config = space.Best(layout, alone, coverage);
        if (config.score > best.score) best = std::move(config);
      }
      if (best.score <= 0) {
        return Status::Internal("migserving: no GPU configuration helps an unsatisfied service");
      }
      coverage.Add(best.config);
      deployment.push_back(std::move(best.config));
    }
  }
  return static_cast<int>(open.size());
}

}  // namespace

std::optional<ScoredConfig> BestGreedyConfig(const ConfigSpace& space, const Coverage& coverage,
                                             const Deadline& deadline) {
  const std::vector<int> open = coverage.Unsatisfied();
  std::optional<ScoredConfig> best = BestPairConfig(space, open, coverage, deadline);
  if (!best) return std::nullopt;
  for (int service : open) {
    if (!AlmostSatisfied(space, coverage, service)) continue;
    if (deadline.Passed()) return std::nullopt;
    for (int layout = 0; layout < static_cast<int>(space.layouts().size()); ++layout) {
      ScoredConfig widened = space.BestWith(layout, service, open, coverage);
      if (widened.score > best->score) best = std::move(widened);
    }
  }
  return best;
}

Result<GreedyOutcome> GreedyFill(const ConfigSpace& space, Coverage& coverage,
                                 Deployment& deployment, const Deadline& deadline) {
  GreedyOutcome outcome;
  while (!coverage.AllSatisfied()) {
    std::optional<ScoredConfig> best = BestGreedyConfig(space, coverage, deadline);
    if (!best) {
      TESSERA_ASSIGN_OR_RETURN(outcome.alone, FillAlone(space, coverage, deployment));
      return outcome;
    }
    if (best->score <= 0) {
      return Status::Internal("migserving: no GPU configuration helps the unsatisfied services");
    }
    coverage.Add(best->config);
    deployment.push_back(std::move(best->config));
  }
  return outcome;
}

}  // namespace tessera::migserving
