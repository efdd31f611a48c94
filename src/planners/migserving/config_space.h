// The search space of MIG-serving's optimizer (Tan et al., "Serving DNN
// Models with Multi-Instance GPUs: A Case of the Reconfigurable Machine
// Scheduling Problem", section 5): GPU configurations, their utilities and
// their heuristic score.
//
//  * An instance of profile p serving service s runs one triplet: among the
//    service's feasible triplets on p with at most `max_procs` processes, the
//    one with the most capacity (ties: the first in profile-table order). The
//    latency rule has already kept only batches that meet the SLO, so this is
//    the largest feasible batch wherever a larger batch means more capacity
//    (section 7). A service with no triplet of at most `max_procs` processes
//    runs its fewest-process ones instead, so it is still served.
//  * Its utility is that capacity over the service's rate: the share of the
//    service's requirement one instance meets (section 5.1).
//  * A GPU configuration is a maximal legal layout of the profiles some
//    service can run on, plus the service of each instance (or none).
//  * Completion rates are what a deployment covers of each rate. The score
//    of a configuration is sum_i (1 - completion_i)+ x utility_i (section
//    5.3). Under MigServingScore::kCapped (the default) each service's
//    utility counts up to (1 - completion_i)+, what it still needs:
//    satisfied services count for nothing, as the paper says, and neither
//    does capacity beyond a service's need. Without that cap (kPaper, the
//    formula as the paper writes it) a GPU of seven 1g instances serving one
//    service that needs one of them scores seven times what it gives.
//
// A configuration for a layout and a set of services is built instance by
// instance, largest first: each goes to the service it adds most score to
// (ties: the first in the set), or stays idle when it adds nothing. The
// families the paper enumerates (mixing at most two services, or one almost
// satisfied service with any others) are searched through their best
// members built this way.
//
// Internal to the migserving planners. Thread-safety: a ConfigSpace is
// immutable after Build; a Coverage belongs to one search.
#ifndef TESSERA_PLANNERS_MIGSERVING_CONFIG_SPACE_H_
#define TESSERA_PLANNERS_MIGSERVING_CONFIG_SPACE_H_

#include <algorithm>
#include <span>
#include <vector>

#include "tessera/gpu/mig_layout.h"
#include "tessera/planner.h"

namespace tessera::migserving {

inline constexpr int kIdle = -1;  // an instance of a configuration serving no service

struct GpuConfig {
  int layout = 0;             // index into ConfigSpace::layouts()
  std::vector<int> services;  // per placement of the layout: a service, or kIdle
  friend bool operator==(const GpuConfig&, const GpuConfig&) = default;
};

// A plan under construction: GPU configurations in GPU order.
using Deployment = std::vector<GpuConfig>;

class ConfigSpace;

// The capacity a set of configurations gives each service, and so its
// completion rate.
class Coverage {
 public:
  explicit Coverage(const ConfigSpace& space);

  void Add(const GpuConfig& config);
  void Remove(const GpuConfig& config);
  // Takes one instance of `profile` serving `service` away.
  void RemoveInstance(int service, int profile);
  // (1 - completion)+: the share of the service's rate not yet covered.
  double Need(int service) const;
  bool Satisfied(int service) const;
  bool AllSatisfied() const { return unsatisfied_ == 0; }
  // The services not yet satisfied, in index order.
  std::vector<int> Unsatisfied() const;
  int unsatisfied() const { return unsatisfied_; }
  double capacity(int service) const { return capacity_[service]; }

 private:
  void Change(int service, double delta);

  const ConfigSpace* space_;
  std::vector<double> capacity_;
  int unsatisfied_ = 0;
};

// A configuration and its score.
struct ScoredConfig {
  GpuConfig config;
  double score = 0;
};

class ConfigSpace {
 public:
  // REQUIRES: max_procs >= 1. Uses problem.gpu() only.
  static ConfigSpace Build(const Problem& problem, int max_procs,
                           MigServingScore score = MigServingScore::kCapped);

  // What one more instance of `utility` adds to a configuration's score for
  // a service that needs `need` and has `added` utility from it already:
  // the service's need times the part of the utility it still needs
  // (kCapped), or times the whole utility (kPaper; 0 when need is 0). Every
  // configuration is scored through this, so that gains computed apart add
  // up to exactly the scores ConfigSpace gives.
  double Gain(double need, double added, double utility) const {
    if (score_ == MigServingScore::kPaper) return need * utility;
    return need * (std::min(added + utility, need) - std::min(added, need));
  }

  const GpuModel& gpu() const { return *gpu_; }
  int num_services() const { return static_cast<int>(rates_.size()); }
  int num_profiles() const { return static_cast<int>(gpu_->profiles.size()); }
  double rate(int service) const { return rates_[service]; }
  // True iff some instance can serve the service (it has a feasible triplet).
  bool servable(int service) const { return servable_[service]; }
  // Maximal legal layouts of the profiles some service can run on.
  const std::vector<Layout>& layouts() const { return layouts_; }
  // The triplet an instance of `profile` runs for `service`; nullptr if none.
  const Triplet* TripletFor(int service, int profile) const;
  // Capacity of that triplet over the service's rate; 0 without one or for a
  // rate of 0.
  double Utility(int service, int profile) const { return utility_[Index(service, profile)]; }
  // The most utility one GPU serving only `service` has.
  double WholeGpuUtility(int service) const { return whole_gpu_utility_[service]; }

  double Score(const GpuConfig& config, const Coverage& coverage) const;
  // The configuration of `layout` built for the services of `allowed`.
  ScoredConfig Best(int layout, std::span<const int> allowed, const Coverage& coverage) const;
  // Best(layout, allowed, coverage).score, given needs[j] =
  // coverage.Need(allowed[j]): the same number, without building the
  // configuration.
  double BestScore(int layout, std::span<const int> allowed, std::span<const double> needs) const;
  // The same with `service` (one of `allowed`) given the instance it gains
  // most from first, so that it serves at least one; score 0 if it can run
  // on no instance of the layout.
  ScoredConfig BestWith(int layout, int service, std::span<const int> allowed,
                        const Coverage& coverage) const;
  // The placements of `layout` in the order configurations are built:
  // largest first, then by start.
  const std::vector<int>& FillOrder(int layout) const { return fill_order_[layout]; }
  // The configuration's segments, in placement order.
  std::vector<PlacedSegment> Segments(const GpuConfig& config) const;

 private:
  int Index(int service, int profile) const { return service * num_profiles() + profile; }
  // Builds a configuration of `layout` over `allowed`, giving `first` (an
  // index into `allowed`, or -1) its best instance before the others.
  ScoredConfig Assemble(int layout, std::span<const int> allowed, int first,
                        const Coverage& coverage) const;
  // Assemble's work given the needs: returns the score, and writes each
  // placement's service (or leaves it) to `services` unless null.
  double Fill(int layout, std::span<const int> allowed, std::span<const double> needs, int first,
              int* services) const;

  const GpuModel* gpu_ = nullptr;
  MigServingScore score_ = MigServingScore::kCapped;
  std::vector<double> rates_;
  std::vector<bool> servable_;
  std::vector<Triplet> triplets_;  // [service x profile]; capacity 0 = none
  std::vector<double> utility_;    // [service x profile]
  std::vector<Layout> layouts_;
  // Per layout, its placements largest first (then by start): the order
  // configurations are built in.
  std::vector<std::vector<int>> fill_order_;
  std::vector<double> whole_gpu_utility_;
};

// Configurations serving at least one service, with each instance no
// deployment needs idled: visits GPUs from the last, and an instance whose
// service stays covered without it is dropped. Keeps the earlier GPUs full.
void Trim(const ConfigSpace& space, Deployment& deployment);

// (GPUs holding an instance, compute slices of busy instances): the fitness
// a plan is ranked by, fewer first.
struct Cost {
  int gpus = 0;
  int slices = 0;
  friend auto operator<=>(const Cost&, const Cost&) = default;
};
Cost CostOf(const ConfigSpace& space, const Deployment& deployment);

}  // namespace tessera::migserving

#endif  // TESSERA_PLANNERS_MIGSERVING_CONFIG_SPACE_H_
