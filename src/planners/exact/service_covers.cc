#include "planners/exact/service_covers.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

namespace tessera {
namespace {

// True iff `a` is the better best triplet: more capacity, then the
// smaller batch, then fewer processes.
bool Better(const Triplet& a, const Triplet& b) {
  if (a.capacity_rps != b.capacity_rps) return a.capacity_rps > b.capacity_rps;
  return std::tie(a.batch, a.procs) < std::tie(b.batch, b.procs);
}

std::vector<Resource> ResourcesOf(const Problem& problem) {
  std::vector<Resource> resources;
  for (const ServiceSpec& spec : problem.services()) {
    for (const Triplet& t : spec.feasible) resources.push_back({t.pool, t.profile});
  }
  std::sort(resources.begin(), resources.end());
  resources.erase(std::unique(resources.begin(), resources.end()), resources.end());
  return resources;
}

std::vector<std::optional<Triplet>> BestTriplets(const ServiceSpec& spec,
                                                 const std::vector<Resource>& resources) {
  std::vector<std::optional<Triplet>> best(resources.size());
  for (const Triplet& t : spec.feasible) {
    const Resource key{t.pool, t.profile};
    const auto r = std::lower_bound(resources.begin(), resources.end(), key) - resources.begin();
    if (!best[r] || Better(t, *best[r])) best[r] = t;
  }
  return best;
}

// Enumerates count vectors by depth-first search over the class's usable
// resources, largest capacity first; the last resource takes the fewest
// segments that cover what is left.
class CoverEnumerator {
 public:
  CoverEnumerator(const ServiceClass& c, int max_generated) : class_(c), budget_(max_generated) {
    for (size_t r = 0; r < c.best.size(); ++r) {
      if (c.best[r]) order_.push_back(static_cast<int>(r));
    }
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
      return c.best[a]->capacity_rps > c.best[b]->capacity_rps;
    });
    counts_.assign(c.best.size(), 0);
  }

  // The minimal covers, or empty when the budget ran out.
  std::vector<std::vector<int>> Run() {
    if (!order_.empty()) Visit(0, 0.0);
    if (budget_ < 0) covers_.clear();
    return std::move(covers_);
  }

 private:
  double Throughput(int r) const { return class_.best[r]->capacity_rps; }

  // The fewest segments of resource `r` that bring `capacity` to the rate.
  int FewestToCover(int r, double capacity) const {
    const double t = Throughput(r);
    int n = std::max(0, static_cast<int>(std::ceil((class_.rate_rps - capacity) / t)));
    while (n > 0 && CoversRate(capacity + (n - 1) * t, class_.rate_rps)) --n;
    while (!CoversRate(capacity + n * t, class_.rate_rps)) ++n;
    return n;
  }

  void Visit(size_t depth, double capacity) {
    if (budget_ < 0) return;
    const int r = order_[depth];
    const int most = FewestToCover(r, capacity);
    if (depth + 1 == order_.size()) {
      counts_[r] = most;
      Emit(capacity + most * Throughput(r));
    } else {
      for (int n = 0; n <= most && budget_ >= 0; ++n) {
        counts_[r] = n;
        Visit(depth + 1, capacity + n * Throughput(r));
      }
    }
    counts_[r] = 0;
  }

  void Emit(double capacity) {
    --budget_;
    for (int r : order_) {
      if (counts_[r] > 0 && CoversRate(capacity - Throughput(r), class_.rate_rps)) return;
    }
    covers_.push_back(counts_);
  }

  const ServiceClass& class_;
  int budget_;
  std::vector<int> order_;
  std::vector<int> counts_;
  std::vector<std::vector<int>> covers_;
};

}  // namespace

CoverSet BuildCoverSet(const Problem& problem, int max_covers) {
  CoverSet set;
  set.resources = ResourcesOf(problem);
  // Key: the rate, then per resource the best triplet's capacity,
  // throughput, batch, procs and latency: all a placed segment claims.
  std::map<std::vector<double>, int> class_of;
  for (size_t i = 0; i < problem.services().size(); ++i) {
    const ServiceSpec& spec = problem.services()[i];
    if (spec.feasible.empty()) continue;
    std::vector<std::optional<Triplet>> best = BestTriplets(spec, set.resources);
    std::vector<double> key{spec.service.rate_rps};
    for (const std::optional<Triplet>& t : best) {
      key.insert(key.end(),
                 {t ? t->capacity_rps : -1, t ? t->throughput_rps : 0, t ? double(t->batch) : 0,
                  t ? double(t->procs) : 0, t ? t->latency_ms : 0});
    }
    auto [it, added] = class_of.try_emplace(std::move(key), static_cast<int>(set.classes.size()));
    if (added) set.classes.push_back({{}, std::move(best), spec.service.rate_rps, {}});
    set.classes[it->second].services.push_back(static_cast<int>(i));
  }
  for (ServiceClass& c : set.classes) c.covers = CoverEnumerator(c, max_covers).Run();
  return set;
}

int SegmentCount(const std::vector<int>& counts) {
  return std::accumulate(counts.begin(), counts.end(), 0);
}

int ComputeSlices(const Problem& problem, const CoverSet& set, const std::vector<int>& counts) {
  int slices = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    const Resource& res = set.resources[r];
    slices += counts[r] * problem.pool()[res.pool].gpu->profiles[res.profile].compute_slices;
  }
  return slices;
}

}  // namespace tessera
