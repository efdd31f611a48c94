#include "planners/static/static_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "plan/time_limit.h"

namespace tessera {
namespace {

// The "4-2-1" mix generalised: each instance takes the largest power of two
// below the compute slices not yet cut, so 7 -> 4, 2, 1 and 4 -> 2, 1, 1.
std::vector<int> HalvingSizes(int compute_slices) {
  std::vector<int> sizes;
  for (int left = compute_slices; left > 0; left -= sizes.back()) {
    int size = 1;
    while (size * 2 < left) size *= 2;
    sizes.push_back(size);
  }
  return sizes;
}

// Compute slices of each instance of the cut.
std::vector<int> InstanceSizes(const GpuModel& gpu, StaticPartition partition) {
  switch (partition) {
    case StaticPartition::kWhole:
      return {gpu.compute_slices};
    case StaticPartition::kSingles:
      return std::vector<int>(gpu.compute_slices, 1);
    case StaticPartition::kMix:
      return HalvingSizes(gpu.compute_slices);
  }
  return {};
}

// The processes of `t` beyond `max_procs` (0 = no limit): 0 when within.
int ProcsOver(const Triplet& t, int max_procs) {
  return max_procs > 0 && t.procs > max_procs ? t.procs : 0;
}

// For each profile of `cut`, the service's triplet of at most `max_procs`
// processes with the most capacity (ties: the first in profile-table order).
// Profiles it cannot run on are absent.
std::map<int, Triplet> BestTriplets(const ServiceSpec& spec, const std::vector<Placement>& cut,
                                    int max_procs) {
  std::map<int, Triplet> best;
  for (const Triplet& t : spec.feasible) {
    const bool in_cut = std::any_of(cut.begin(), cut.end(),
                                    [&](const Placement& p) { return p.profile == t.profile; });
    if (ProcsOver(t, max_procs) > 0 || !in_cut) continue;
    auto [it, inserted] = best.try_emplace(t.profile, t);
    if (!inserted && t.capacity_rps > it->second.capacity_rps) it->second = t;
  }
  return best;
}

// What a service no instance of the cut can serve runs on: its
// highest-capacity triplet within `max_procs`, or when it has none within,
// its fewest-process, then highest-capacity one (ties: the first in
// profile-table order). nullopt iff it has no feasible triplet.
std::optional<Triplet> OwnGpuTriplet(const ServiceSpec& spec, int max_procs) {
  auto it = std::min_element(spec.feasible.begin(), spec.feasible.end(),
                             [&](const Triplet& a, const Triplet& b) {
                               const int over_a = ProcsOver(a, max_procs);
                               const int over_b = ProcsOver(b, max_procs);
                               if (over_a != over_b) return over_a < over_b;
                               return a.capacity_rps > b.capacity_rps;
                             });
  return it == spec.feasible.end() ? std::nullopt : std::optional<Triplet>(*it);
}

// Hands out the instances of identically cut GPUs in order, opening a GPU
// (appended to the plan) when the one being filled is used up.
class InstanceStream {
 public:
  InstanceStream(std::vector<Placement> cut, bool share_gpus, PlanResult& plan)
      : cut_(std::move(cut)), share_gpus_(share_gpus), plan_(plan), next_(cut_.size()) {}

  // Gives service `index` the next instances until they cover `rate`,
  // skipping (and leaving idle) those of profiles `best` lacks.
  // REQUIRES: `best` has a triplet for some profile of the cut, each with
  // capacity > 0 (feasible triplets have), else this never ends.
  void Serve(int index, double rate, const std::map<int, Triplet>& best) {
    if (!share_gpus_) next_ = cut_.size();
    double capacity = 0;
    while (!CoversRate(capacity, rate)) {
      if (next_ == cut_.size()) {
        gpu_ = plan_.mig().size();
        plan_.mig().emplace_back();
        next_ = 0;
      }
      const Placement& instance = cut_[next_++];
      auto it = best.find(instance.profile);
      if (it == best.end()) continue;
      plan_.mig()[gpu_].push_back({index, it->second, instance.start});
      capacity += it->second.capacity_rps;
    }
  }

 private:
  const std::vector<Placement> cut_;
  const bool share_gpus_;  // may a GPU serve several services
  PlanResult& plan_;
  size_t gpu_ = 0;  // the GPU being filled
  size_t next_;     // its next instance; cut_.size() = none left
};

class StaticPlanner : public Planner {
 public:
  StaticPlanner(const StaticOptions& options, std::string name)
      : options_(options), name_(std::move(name)) {}

  std::string_view Name() const override { return name_; }

  Result<PlanResult> Plan(const Problem& problem, const PlanContext& context) const override {
    const Deadline deadline = PlanDeadline(context);
    const GpuModel& gpu = problem.gpu();
    TESSERA_ASSIGN_OR_RETURN(std::vector<Placement> cut, StaticCut(gpu, options_.partition));
    PlanResult plan;
    InstanceStream stream(cut, options_.partition == StaticPartition::kSingles, plan);
    for (size_t i = 0; i < problem.services().size(); ++i) {
      if (deadline.Passed()) return TimeLimitPassed(context, "while placing services");
      const ServiceSpec& spec = problem.services()[i];
      const int index = static_cast<int>(i);
      const std::map<int, Triplet> best = BestTriplets(spec, cut, options_.max_procs);
      if (!best.empty()) {
        stream.Serve(index, spec.service.rate_rps, best);
      } else if (std::optional<Triplet> own = OwnGpuTriplet(spec, options_.max_procs)) {
        const Placement alone{own->profile, gpu.profiles[own->profile].starts.front()};
        InstanceStream({alone}, false, plan)
            .Serve(index, spec.service.rate_rps, {{own->profile, *own}});
      }
    }
    return plan;
  }

 private:
  const StaticOptions options_;
  const std::string name_;
};

}  // namespace

Result<std::vector<Placement>> StaticCut(const GpuModel& gpu, StaticPartition partition) {
  std::vector<int> profiles;
  for (int size : InstanceSizes(gpu, partition)) {
    const int profile = gpu.PrimaryProfileWithComputeSlices(size);
    if (profile < 0) {
      return Status::Internal(
          fmt::format("{} has no primary {}-slice profile to cut its GPUs with", gpu.name, size));
    }
    profiles.push_back(profile);
  }
  std::optional<std::vector<Placement>> cut = PackProfiles(gpu, profiles);
  if (!cut) return Status::Internal(fmt::format("no legal layout of {} holds the cut", gpu.name));
  std::stable_sort(cut->begin(), cut->end(), [&](const Placement& a, const Placement& b) {
    const int ca = gpu.profiles[a.profile].compute_slices;
    const int cb = gpu.profiles[b.profile].compute_slices;
    return ca != cb ? ca > cb : a.start < b.start;
  });
  return *cut;
}

std::unique_ptr<Planner> NewStaticPlanner(const StaticOptions& options, std::string name) {
  return std::make_unique<StaticPlanner>(options, std::move(name));
}

}  // namespace tessera
