#include "planners/parva/parva_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "plan/time_limit.h"
#include "tessera/gpu/mig_layout.h"

namespace tessera {
namespace {

struct Segment {
  int service = 0;
  Triplet triplet;
};

// What the Segment Configurator decides for one service.
struct Configuration {
  std::map<int, Triplet> best;  // profile index -> best feasible triplet
  std::optional<Triplet> optimal;
  // The best triplets of the primary 1g and 2g profiles: what allocation
  // optimization re-serves freed throughput with.
  std::optional<Triplet> small_1g, small_2g;
  std::vector<Segment> segments;  // n optimal ones, then the last one
};

// Section III-E start preferences on 8-memory-slice GPUs, by compute slices.
const std::map<int, std::vector<int>>& PreferredStarts() {
  static const std::map<int, std::vector<int>> kStarts = {
      {1, {0, 6, 4, 1, 2, 3, 5}}, {2, {0, 4, 2}}, {3, {4}}, {4, {0}}, {7, {0}}};
  return kStarts;
}

// The starts to try for every profile of `gpu`: the preferred ones it allows,
// then its other allowed starts, ascending. A 3g keeps only its high start:
// a 3g at 0 blocks a 1g at slice 3 (paper, section III-E).
std::vector<std::vector<int>> StartOrder(const GpuModel& gpu) {
  std::vector<std::vector<int>> order(gpu.profiles.size());
  for (size_t i = 0; i < gpu.profiles.size(); ++i) {
    const MigProfile& p = gpu.profiles[i];
    auto allowed = [&](int s) { return std::count(p.starts.begin(), p.starts.end(), s) > 0; };
    if (p.compute_slices == 3) {
      order[i] = {p.starts.back()};
      continue;
    }
    auto preferred = PreferredStarts().find(p.compute_slices);
    if (preferred != PreferredStarts().end()) {
      for (int s : preferred->second) {
        if (allowed(s)) order[i].push_back(s);
      }
    }
    for (int s : p.starts) {
      if (std::find(order[i].begin(), order[i].end(), s) == order[i].end()) order[i].push_back(s);
    }
  }
  return order;
}

// Smaller profiles first: by compute slices, then memory slices.
bool SmallerProfile(const GpuModel& gpu, int a, int b) {
  const MigProfile& pa = gpu.profiles[a];
  const MigProfile& pb = gpu.profiles[b];
  if (pa.compute_slices != pb.compute_slices) return pa.compute_slices < pb.compute_slices;
  return pa.memory_slices < pb.memory_slices;
}

class Configurator {
 public:
  Configurator(const Problem& problem, bool use_mps)
      : problem_(problem),
        use_mps_(use_mps),
        primary_1g_(problem.gpu().PrimaryProfileWithComputeSlices(1)),
        primary_2g_(problem.gpu().PrimaryProfileWithComputeSlices(2)) {}

  // Algorithm 1, TRIPLETDECISION + DEMANDMATCHING, for service `index`.
  Configuration Configure(int index) const {
    Configuration c;
    c.best = BestTriplets(problem_.services()[index]);
    if (c.best.empty()) return c;
    c.optimal = Optimal(c.best);
    c.small_1g = Find(c.best, primary_1g_);
    c.small_2g = Find(c.best, primary_2g_);
    const double rate = problem_.services()[index].service.rate_rps;
    const double t_opt = c.optimal->capacity_rps;
    long n = static_cast<long>(std::floor(rate / t_opt));
    if (n > 0 && n * t_opt >= rate) --n;  // exact multiple: the last segment covers one
    for (long k = 0; k < n; ++k) c.segments.push_back({index, *c.optimal});
    c.segments.push_back({index, LastSegment(c.best, rate - n * t_opt)});
    return c;
  }

 private:
  std::map<int, Triplet> BestTriplets(const ServiceSpec& spec) const {
    std::vector<Triplet> scan = spec.feasible;
    std::stable_sort(scan.begin(), scan.end(), [](const Triplet& a, const Triplet& b) {
      if (a.batch != b.batch) return a.batch < b.batch;
      return a.procs < b.procs;
    });
    std::map<int, Triplet> best;
    for (const Triplet& t : scan) {
      if (!use_mps_ && t.procs > 1) continue;
      auto it = best.find(t.profile);
      if (it == best.end() || t.capacity_rps > it->second.capacity_rps) best[t.profile] = t;
    }
    return best;
  }

  Triplet Optimal(const std::map<int, Triplet>& best) const {
    const GpuModel& gpu = problem_.gpu();
    const Triplet* optimal = nullptr;
    double optimal_ratio = 0;
    for (const auto& [profile, t] : Sorted(best)) {
      const double ratio = t->capacity_rps / gpu.profiles[profile].compute_slices;
      if (!optimal || ratio > optimal_ratio) {
        optimal = t;
        optimal_ratio = ratio;
      }
    }
    return *optimal;
  }

  // The smallest profile whose best segment covers `remaining`.
  Triplet LastSegment(const std::map<int, Triplet>& best, double remaining) const {
    const std::vector<std::pair<int, const Triplet*>> sorted = Sorted(best);
    for (const auto& [profile, t] : sorted) {
      if (CoversRate(t->capacity_rps, remaining)) return *t;
    }
    return *sorted.back().second;  // unreachable: the optimal one covers any remainder
  }

  std::vector<std::pair<int, const Triplet*>> Sorted(const std::map<int, Triplet>& best) const {
    std::vector<std::pair<int, const Triplet*>> sorted;
    for (const auto& [profile, t] : best) sorted.push_back({profile, &t});
    std::sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
      return SmallerProfile(problem_.gpu(), a.first, b.first);
    });
    return sorted;
  }

  static std::optional<Triplet> Find(const std::map<int, Triplet>& best, int profile) {
    auto it = best.find(profile);
    return it == best.end() ? std::nullopt : std::optional<Triplet>(it->second);
  }

  const Problem& problem_;
  bool use_mps_;
  int primary_1g_;
  int primary_2g_;
};

struct GpuState {
  MigSlots slots;
  std::vector<PlacedSegment> segments;
  int state = 0;  // its entry in Allocator's states
};

// Algorithm 2's ALLOCATION: best fit over the whole pool of GPUs. Whether a
// segment fits a GPU depends only on what the GPU holds, and a pool has few
// distinct contents, so GPUs are indexed by content: each distinct content
// (a state) knows its free compute slices and the start each profile would
// take, and holds its GPUs in index order. Best fit then visits states, not
// GPUs: the fullest state with room gives its lowest GPU, and ties between
// states go to the lowest GPU, as a scan of every GPU would choose.
class Allocator {
 public:
  explicit Allocator(const GpuModel& gpu)
      : gpu_(gpu), start_order_(StartOrder(gpu)), by_free_(gpu.compute_slices + 1) {}

  void Place(const Segment& seg) {
    const int profile = seg.triplet.profile;
    int chosen = -1, chosen_start = -1;
    for (int free = gpu_.profiles[profile].compute_slices;
         free <= gpu_.compute_slices && chosen < 0; ++free) {
      for (int state : by_free_[free]) {
        const State& s = states_[state];
        if (s.gpus.empty() || s.first_start[profile] < 0) continue;
        const int lowest = *s.gpus.begin();
        if (chosen < 0 || lowest < chosen) {
          chosen = lowest;
          chosen_start = s.first_start[profile];
        }
      }
    }
    if (chosen < 0) {
      chosen = static_cast<int>(gpus_.size());
      gpus_.push_back({MigSlots(gpu_), {}, StateOf(MigSlots(gpu_))});
      states_[gpus_.back().state].gpus.insert(chosen);
      chosen_start = states_[gpus_.back().state].first_start[profile];
    }
    GpuState& g = gpus_[chosen];
    g.slots.Place(profile, chosen_start);
    g.segments.push_back({seg.service, seg.triplet, chosen_start});
    Move(chosen);
  }

  void Remove(int gpu_index, const PlacedSegment& seg) {
    GpuState& g = gpus_[gpu_index];
    g.slots.Remove(seg.triplet.profile, seg.start);
    auto it = std::find_if(g.segments.begin(), g.segments.end(), [&](const PlacedSegment& s) {
      return s.start == seg.start && s.triplet.profile == seg.triplet.profile;
    });
    g.segments.erase(it);
    Move(gpu_index);
  }

  std::vector<GpuState>& gpus() { return gpus_; }

 private:
  struct State {
    std::vector<int> first_start;  // per profile: FirstStart, -1 if it does not fit
    std::set<int> gpus;            // the GPUs in this state
  };

  int FirstStart(const MigSlots& slots, int profile) const {
    for (int s : start_order_[profile]) {
      if (slots.CanPlace(profile, s)) return s;
    }
    return -1;
  }

  // The state of a GPU holding `slots`, created on first sight.
  int StateOf(const MigSlots& slots) {
    std::vector<Placement> key = slots.placements();
    std::sort(key.begin(), key.end(), [](const Placement& a, const Placement& b) {
      return a.start != b.start ? a.start < b.start : a.profile < b.profile;
    });
    std::vector<int> flat;
    for (const Placement& p : key) flat.insert(flat.end(), {p.profile, p.start});
    auto [it, inserted] = state_of_.try_emplace(std::move(flat), static_cast<int>(states_.size()));
    if (inserted) {
      State s;
      for (size_t p = 0; p < gpu_.profiles.size(); ++p) {
        s.first_start.push_back(FirstStart(slots, static_cast<int>(p)));
      }
      states_.push_back(std::move(s));
      by_free_[slots.free_compute_slices()].push_back(it->second);
    }
    return it->second;
  }

  // Re-files GPU `index` under the state of what it now holds.
  void Move(int index) {
    GpuState& g = gpus_[index];
    states_[g.state].gpus.erase(index);
    g.state = StateOf(g.slots);
    states_[g.state].gpus.insert(index);
  }

  const GpuModel& gpu_;
  std::vector<std::vector<int>> start_order_;
  std::vector<GpuState> gpus_;
  std::vector<State> states_;
  std::map<std::vector<int>, int> state_of_;  // sorted (profile, start) pairs -> state
  std::vector<std::vector<int>> by_free_;     // free compute slices -> states
};

class ParvaPlanner : public Planner {
 public:
  ParvaPlanner(const ParvaOptions& options, std::string name)
      : options_(options), name_(std::move(name)) {}

  std::string_view Name() const override { return name_; }

  Result<PlanResult> Plan(const Problem& problem, const PlanContext& context) const override {
    const Deadline deadline = PlanDeadline(context);
    const Configurator configurator(problem, options_.use_mps);
    std::vector<Configuration> configs;
    std::vector<Segment> queue;
    for (size_t i = 0; i < problem.services().size(); ++i) {
      if (deadline.Passed()) return TimeLimitPassed(context, "while configuring segments");
      configs.push_back(configurator.Configure(static_cast<int>(i)));
      queue.insert(queue.end(), configs.back().segments.begin(), configs.back().segments.end());
    }
    Allocator allocator(problem.gpu());
    if (!Relocate(problem.gpu(), queue, allocator, deadline)) {
      return TimeLimitPassed(context, "while placing segments");
    }
    if (options_.optimize && !Optimize(problem.gpu(), configs, allocator, deadline) &&
        context.progress) {
      context.progress(fmt::format(
          "{}: the time limit ({:g} s) passed during the allocation optimization: the GPUs it "
          "had not reached keep their segments; a longer --time-limit gives a better plan",
          name_, context.time_limit_s));
    }
    PlanResult result;
    for (GpuState& g : allocator.gpus()) result.mig().push_back(std::move(g.segments));
    return result;
  }

 private:
  // SEGMENTRELOCATION: the queues by size, the largest first; false if
  // `deadline` passes first.
  static bool Relocate(const GpuModel& gpu, std::vector<Segment> queue, Allocator& allocator,
                       const Deadline& deadline) {
    std::stable_sort(queue.begin(), queue.end(), [&](const Segment& a, const Segment& b) {
      return SmallerProfile(gpu, b.triplet.profile, a.triplet.profile);
    });
    for (const Segment& seg : queue) {
      if (deadline.Passed()) return false;
      allocator.Place(seg);
    }
    return true;
  }

  // ALLOCATIONOPTIMIZATION; false if `deadline` passes first (the GPUs not
  // yet visited are left as they are, and the plan still covers every
  // service: each removed segment is re-served before the next is removed).
  bool Optimize(const GpuModel& gpu, const std::vector<Configuration>& configs,
                Allocator& allocator, const Deadline& deadline) const {
    const int threshold =
        options_.optimize_threshold > 0 ? options_.optimize_threshold : 4 * gpu.compute_slices / 7;
    std::vector<double> freed(configs.size(), 0.0);
    for (int i = static_cast<int>(allocator.gpus().size()) - 1; i >= 0; --i) {
      const GpuState& g = allocator.gpus()[i];
      if (g.segments.empty() || g.slots.used_compute_slices() > threshold) continue;
      if (deadline.Passed()) return false;
      const std::vector<PlacedSegment> removed = g.segments;
      for (const PlacedSegment& seg : removed) {
        allocator.Remove(i, seg);
        freed[seg.service] += seg.triplet.capacity_rps;
        for (const Segment& small : SmallSegments(configs[seg.service], seg, freed[seg.service])) {
          freed[seg.service] -= small.triplet.capacity_rps;
          allocator.Place(small);
        }
      }
    }
    return true;
  }

  // SMALLSEGMENTS: 1g and 2g segments covering `freed`; the removed segment
  // itself when the service can run on neither.
  static std::vector<Segment> SmallSegments(const Configuration& config,
                                            const PlacedSegment& removed, double freed) {
    const std::optional<Triplet>& t1 = config.small_1g;
    const std::optional<Triplet>& t2 = config.small_2g;
    std::vector<Segment> out;
    auto add = [&](const Triplet& t, long count) {
      for (long k = 0; k < count; ++k) out.push_back({removed.service, t});
    };
    auto ceil_count = [](double rate, double tp) {
      return rate > 0 ? static_cast<long>(std::ceil(rate / tp - 1e-9)) : 0L;
    };
    if (!t1 && !t2) {
      if (freed > 0) add(removed.triplet, 1);
      return out;
    }
    if (t1 && t2 && t2->capacity_rps / 2 > t1->capacity_rps) {
      const long twos = freed > 0 ? static_cast<long>(std::floor(freed / t2->capacity_rps)) : 0;
      add(*t2, twos);
      add(*t1, ceil_count(freed - twos * t2->capacity_rps, t1->capacity_rps));
      return out;
    }
    const Triplet& only = t1 ? *t1 : *t2;
    add(only, ceil_count(freed, only.capacity_rps));
    return out;
  }

  ParvaOptions options_;
  std::string name_;
};

}  // namespace

Status ParvaOptions::Validate() const {
  if (optimize_threshold < 0) {
    return Status::InvalidArgument("optimize threshold must be >= 0 (0 = the paper's default)");
  }
  return Status::Ok();
}

std::unique_ptr<Planner> NewParvaPlanner(const ParvaOptions& options, std::string name) {
  return std::make_unique<ParvaPlanner>(options, std::move(name));
}

}  // namespace tessera
