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
// segments that cover what is left. Gives up (no covers) after generating
// `max_generated` candidates, listing more than `max_listed` covers, or when
// `deadline` passes (read every kDeadlineStride candidates).
class CoverEnumerator {
 public:
  CoverEnumerator(const ServiceClass& c, long max_generated, long max_listed,
                  const Deadline& deadline)
      : class_(c), budget_(max_generated), max_listed_(max_listed), deadline_(deadline) {
    for (size_t r = 0; r < c.best.size(); ++r) {
      if (c.best[r]) order_.push_back(static_cast<int>(r));
    }
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
      return c.best[a]->capacity_rps > c.best[b]->capacity_rps;
    });
    counts_.assign(c.best.size(), 0);
  }

  // log of an upper bound on the candidates Run() generates: the product,
  // over every resource of the search but the last, of the counts it tries.
  double LogCandidates() const {
    double log = 0;
    for (size_t d = 0; d + 1 < order_.size(); ++d) log += std::log1p(FewestToCover(order_[d], 0));
    return log;
  }

  // The minimal covers, or empty when it gave up.
  std::vector<std::vector<int>> Run() {
    if (!order_.empty()) Visit(0, 0.0);
    if (gave_up_) covers_.clear();
    return std::move(covers_);
  }

 private:
  static constexpr long kDeadlineStride = 4096;

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
    if (gave_up_) return;
    const int r = order_[depth];
    const int most = FewestToCover(r, capacity);
    if (depth + 1 == order_.size()) {
      counts_[r] = most;
      Emit(capacity + most * Throughput(r));
    } else {
      for (int n = 0; n <= most && !gave_up_; ++n) {
        counts_[r] = n;
        Visit(depth + 1, capacity + n * Throughput(r));
      }
    }
    counts_[r] = 0;
  }

  void Emit(double capacity) {
    ++generated_;
    if (generated_ > budget_ || (generated_ % kDeadlineStride == 0 && deadline_.Passed())) {
      gave_up_ = true;
      return;
    }
    for (int r : order_) {
      if (counts_[r] > 0 && CoversRate(capacity - Throughput(r), class_.rate_rps)) return;
    }
    if (static_cast<long>(covers_.size()) >= max_listed_) {
      gave_up_ = true;
      return;
    }
    covers_.push_back(counts_);
  }

  const ServiceClass& class_;
  const long budget_;
  const long max_listed_;
  const Deadline& deadline_;
  long generated_ = 0;
  bool gave_up_ = false;
  std::vector<int> order_;
  std::vector<int> counts_;
  std::vector<std::vector<int>> covers_;
};

}  // namespace

CoverSet BuildCoverSet(const Problem& problem, const CoverLimits& limits,
                       const Deadline& deadline) {
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
  // Smallest classes first, so that the total limit lists as many as it can.
  std::vector<std::pair<double, size_t>> by_size;
  for (size_t c = 0; c < set.classes.size(); ++c) {
    by_size.push_back({CoverEnumerator(set.classes[c], 0, 0, deadline).LogCandidates(), c});
  }
  std::sort(by_size.begin(), by_size.end());
  long left = limits.total;
  for (const auto& [log_candidates, c] : by_size) {
    if (left <= 0 || deadline.Passed()) break;
    ServiceClass& sc = set.classes[c];
    sc.covers = CoverEnumerator(sc, limits.per_class, left, deadline).Run();
    // A class the total could not hold: the larger ones after it cannot either.
    if (sc.covers.empty() && left < limits.per_class) break;
    left -= static_cast<long>(sc.covers.size());
  }
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
