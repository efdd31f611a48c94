#include "planners/migserving/genetic.h"

#include <algorithm>
#include <optional>
#include <random>

#include "util/random_draws.h"

namespace tessera::migserving {
namespace {

struct Member {
  Deployment deployment;
  Cost cost;
};

// Swaps the services of one to three random pairs of equal-profile instances
// serving different services; gives up on a pair after a few draws.
void Mutate(const ConfigSpace& space, Deployment& d, std::mt19937_64& rng) {
  constexpr int kDrawsPerPair = 16;
  const int pairs = 1 + static_cast<int>(UniformIndex(rng, 3));
  for (int pair = 0; pair < pairs; ++pair) {
    for (int draw = 0; draw < kDrawsPerPair; ++draw) {
      GpuConfig& a = d[UniformIndex(rng, d.size())];
      GpuConfig& b = d[UniformIndex(rng, d.size())];
      const size_t i = UniformIndex(rng, a.services.size()),
                   j = UniformIndex(rng, b.services.size());
      const bool same_size =
          space.layouts()[a.layout][i].profile == space.layouts()[b.layout][j].profile;
      if (same_size && a.services[i] != kIdle && b.services[j] != kIdle &&
          a.services[i] != b.services[j]) {
        std::swap(a.services[i], b.services[j]);
        break;
      }
    }
  }
}

// Erases random GPUs and refills what they served; nullopt at the deadline.
std::optional<Deployment> Crossover(const ConfigSpace& space, Deployment d, int max_erased,
                                    TreeSearch& search, std::mt19937_64& rng,
                                    const Deadline& deadline) {
  const size_t most = std::clamp<size_t>(d.size() / 2, 1, max_erased);
  const size_t erase = 1 + UniformIndex(rng, most);
  for (size_t k = 0; k < erase && !d.empty(); ++k) d.erase(d.begin() + UniformIndex(rng, d.size()));
  Coverage coverage(space);
  for (const GpuConfig& config : d) coverage.Add(config);
  std::optional<Deployment> refill = search.Fill(coverage, rng, deadline);
  if (!refill) return std::nullopt;
  d.insert(d.end(), refill->begin(), refill->end());
  Trim(space, d);
  return d;
}

}  // namespace

Status GeneticOptions::Validate() const {
  if (parents < 1 || children_per_parent < 1 || max_erased < 1) {
    return Status::InvalidArgument(
        "genetic: parents, children_per_parent and max_erased must be >= 1");
  }
  if (stall_rounds < 0) return Status::InvalidArgument("genetic: stall_rounds must be >= 0");
  return search.Validate();
}

Deployment Evolve(const ConfigSpace& space, Deployment start, const GeneticOptions& options,
                  std::uint64_t seed, const Deadline& deadline,
                  const std::function<void(const GeneticProgress&)>& on_round) {
  std::mt19937_64 rng(seed);
  TreeSearch search(space, options.search);
  GeneticProgress progress;
  progress.start = progress.best = CostOf(space, start);
  std::vector<Member> population{{std::move(start), progress.best}};
  if (population.front().deployment.empty()) return {};
  auto by_cost = [](const Member& a, const Member& b) { return a.cost < b.cost; };
  while (options.stall_rounds == 0 || progress.stalled < options.stall_rounds) {
    std::vector<Member> next = population;
    for (const Member& parent : population) {
      for (int c = 0; c < options.children_per_parent; ++c) {
        Deployment child = parent.deployment;
        if (rng() & 1) Mutate(space, child, rng);
        std::optional<Deployment> crossed =
            Crossover(space, std::move(child), options.max_erased, search, rng, deadline);
        if (!crossed) {  // the deadline: the best of what this round made
          return std::min_element(next.begin(), next.end(), by_cost)->deployment;
        }
        const Cost cost = CostOf(space, *crossed);
        next.push_back({std::move(*crossed), cost});
      }
    }
    std::stable_sort(next.begin(), next.end(), by_cost);
    next.resize(std::min<size_t>(next.size(), options.parents));
    population = std::move(next);
    ++progress.round;
    const bool improved = population.front().cost < progress.best;
    progress.stalled = improved ? 0 : progress.stalled + 1;
    progress.best = population.front().cost;
    if (on_round) on_round(progress);
  }
  return population.front().deployment;
}

}  // namespace tessera::migserving
