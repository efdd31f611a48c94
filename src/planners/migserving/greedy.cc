#include "planners/migserving/greedy.h"

namespace tessera::migserving {
namespace {

bool AlmostSatisfied(const ConfigSpace& space, const Coverage& coverage, int service) {
  const double need = coverage.Need(service);
  return need > 0 && need < space.WholeGpuUtility(service);
}

// The best configuration mixing at most two services of `open`.
ScoredConfig BestPairConfig(const ConfigSpace& space, const std::vector<int>& open,
                            const Coverage& coverage) {
  ScoredConfig best;
  const size_t n = open.size();
  for (int layout = 0; layout < static_cast<int>(space.layouts().size()); ++layout) {
    for (size_t a = 0; a < n; ++a) {
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

}  // namespace

ScoredConfig BestGreedyConfig(const ConfigSpace& space, const Coverage& coverage) {
  const std::vector<int> open = coverage.Unsatisfied();
  ScoredConfig best = BestPairConfig(space, open, coverage);
  for (int service : open) {
    if (!AlmostSatisfied(space, coverage, service)) continue;
    for (int layout = 0; layout < static_cast<int>(space.layouts().size()); ++layout) {
      ScoredConfig widened = space.BestWith(layout, service, open, coverage);
      if (widened.score > best.score) best = std::move(widened);
    }
  }
  return best;
}

Status GreedyFill(const ConfigSpace& space, Coverage& coverage, Deployment& deployment) {
  while (!coverage.AllSatisfied()) {
    ScoredConfig best = BestGreedyConfig(space, coverage);
    if (best.score <= 0) {
      return Status::Internal("migserving: no GPU configuration helps the unsatisfied services");
    }
    coverage.Add(best.config);
    deployment.push_back(std::move(best.config));
  }
  return Status::Ok();
}

}  // namespace tessera::migserving
