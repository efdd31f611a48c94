// GRMU (Siavashi and Momtazpour): dual-basket pooling, intra-GPU
// defragmentation and inter-GPU consolidation (Algorithms 2-5); and "fair",
// the same placer with the heavy basket's cap learned online.
//
// Choices the paper leaves open, made here (docs/online-placement.md):
//  - basket capacities: heavy = round(heavy_share x GPUs), light = the rest;
//    a basket takes a pool GPU only while it holds fewer than its capacity
//    (Algorithm 3 writes |basket| <= capacity, which lets each basket exceed
//    its cap by one);
//  - the pool GPU taken is the lowest-index one whose host has the VM's CPU
//    and RAM free;
//  - a GPU that empties returns to the pool, so the caps bound the GPUs each
//    class holds rather than every GPU it ever touched;
//  - defragmentation re-creates the most fragmented non-empty light GPU's
//    instances on an empty mock GPU with the driver's placement, in arrival
//    order and in largest-first order, keeps the arrangement with the higher
//    CC and migrates only if it beats the current CC;
//  - consolidation pairs single-VM half-GPU light GPUs: from the highest
//    index down, each source moves into the lowest-index partner its instance
//    fits, and the emptied source returns to the pool.
//
// fair (BasketCap::kLearnedShare) differs in one thing: before each request
// the caps are recomputed from the requests seen so far, that one included.
// Each request counts 1 / max_instances of its profile (the share of a GPU
// it takes at its densest: a whole GPU for 7g.40gb and 4g.20gb on an A100);
// the heavy share of that demand times fair_factor times the GPUs is the heavy
// cap, the light basket may hold the rest. A basket above a cap that shrank
// keeps its GPUs and only stops growing. No GPU seeds the baskets: a basket
// takes GPUs from the pool as it needs them, so an early cap of 0 (only
// light requests seen) holds no GPU back from the light basket.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "online/placers.h"

namespace tessera {
namespace {

// A set of GPU global indices, iterated in ascending order: one bit per GPU
// of the cluster. The baskets' first-fit scans run over tens of thousands of
// GPUs per request (the Kubernetes extender's clusters), and moving a GPU
// between baskets is O(1), so rebuilding the baskets for every adopted pod
// stays linear.
class GpuSet {
 public:
  class Iterator {
   public:
    Iterator(const GpuSet* set, int gpu) : set_(set), gpu_(gpu) {}
    int operator*() const { return gpu_; }
    Iterator& operator++() {
      gpu_ = set_->NextFrom(gpu_ + 1);
      return *this;
    }
    bool operator!=(const Iterator& other) const { return gpu_ != other.gpu_; }

   private:
    const GpuSet* set_;
    int gpu_;
  };

  void Resize(int gpus) {
    words_.assign((gpus + 63) / 64, 0);
    end_ = gpus;
    size_ = 0;
  }
  Iterator begin() const { return {this, NextFrom(0)}; }
  Iterator end() const { return {this, end_}; }
  bool empty() const { return size_ == 0; }
  int size() const { return size_; }
  int front() const { return NextFrom(0); }  // REQUIRES: !empty()
  bool contains(int gpu) const { return (words_[gpu / 64] >> (gpu % 64)) & 1; }
  void insert(int gpu) {
    if (contains(gpu)) return;
    words_[gpu / 64] |= std::uint64_t{1} << (gpu % 64);
    ++size_;
  }
  // 1 when `gpu` was in the set.
  int erase(int gpu) {
    if (!contains(gpu)) return 0;
    words_[gpu / 64] &= ~(std::uint64_t{1} << (gpu % 64));
    --size_;
    return 1;
  }

 private:
  // The first member >= gpu, or end_.
  int NextFrom(int gpu) const {
    if (gpu >= end_) return end_;
    size_t word = gpu / 64;
    std::uint64_t bits = words_[word] & (~std::uint64_t{0} << (gpu % 64));
    while (bits == 0) {
      if (++word == words_.size()) return end_;
      bits = words_[word];
    }
    return static_cast<int>(word * 64) + std::countr_zero(bits);
  }

  std::vector<std::uint64_t> words_;
  int end_ = 0;  // the number of GPUs
  int size_ = 0;
};

class GrmuPlacer : public OnlinePlacer {
 public:
  GrmuPlacer(BasketCap cap, const PlacerOptions& options) : cap_(cap), options_(options) {}

  std::string_view Name() const override {
    return cap_ == BasketCap::kFixedShare ? "grmu" : "fair";
  }

  void Start(const OnlineCluster& cluster) override {
    const int gpus = cluster.num_gpus();
    for (GpuSet* set : {&pool_, &heavy_, &light_}) set->Resize(gpus);
    for (int g = 0; g < gpus; ++g) pool_.insert(g);
    gpu_ = &cluster.gpu_model();
    if (cap_ == BasketCap::kLearnedShare) return;
    SetHeavyCapacity(options_.heavy_share, gpus);
    // Algorithm 2: each basket starts with one empty GPU from the pool.
    if (heavy_capacity_ > 0) MoveFromPool(pool_.front(), heavy_);
    if (light_capacity_ > 0 && !pool_.empty()) MoveFromPool(pool_.front(), light_);
  }

  bool Place(const VmRequest& vm, OnlineCluster& cluster) override {
    if (cap_ == BasketCap::kLearnedShare) LearnDemand(vm, cluster);
    if (PlaceInBasket(vm, cluster)) return true;
    if (IsHeavy(vm) || !options_.defragment) return false;
    Defragment(vm.arrival_s, cluster);
    return PlaceInBasket(vm, cluster);  // one retry
  }

  void Released(int, int gpu, const OnlineCluster& cluster) override {
    if (!cluster.GpuEmpty(gpu)) return;
    if (heavy_.erase(gpu) + light_.erase(gpu) > 0) pool_.insert(gpu);
  }

  // A GPU of the pool that holds an adopted VM joins the VM's basket, as if
  // the VM had been placed there by Algorithm 3 (beyond the cap if need be:
  // the VM is there); fair counts the VM in the demand it has seen, so a
  // restarted extender caps the heavy basket as before its restart (from the
  // live VMs: the departed ones are forgotten).
  void Adopted(int vm, const OnlineCluster& cluster) override {
    if (cap_ == BasketCap::kLearnedShare) LearnDemand(cluster.vm(vm), cluster);
    const int gpu = cluster.LocationOf(vm).gpu;
    if (pool_.contains(gpu)) MoveFromPool(gpu, IsHeavy(cluster.vm(vm)) ? heavy_ : light_);
  }

  double MaintenanceIntervalS() const override { return options_.consolidate_every_s; }

  std::unique_ptr<OnlinePlacer> Clone() const override {
    return std::make_unique<GrmuPlacer>(*this);
  }

  void Maintain(double now_s, OnlineCluster& cluster) override { Consolidate(now_s, cluster); }

 private:
  bool IsHeavy(const VmRequest& vm) const { return IsFullGpuProfile(*gpu_, vm.profile); }

  void SetHeavyCapacity(double share, int gpus) {
    heavy_capacity_ = static_cast<int>(std::lround(share * gpus));
    light_capacity_ = gpus - heavy_capacity_;
  }

  // fair: counts `vm` in the demand of its class, 1 / max_instances of a GPU,
  // and caps the heavy basket at fair_factor x the heavy share of the demand.
  void LearnDemand(const VmRequest& vm, const OnlineCluster& cluster) {
    demand_.Count(cluster.gpu_model(), vm.profile);
    heavy_capacity_ = demand_.HeavyCap(options_.fair_factor, cluster.num_gpus());
    light_capacity_ = cluster.num_gpus() - heavy_capacity_;
  }

  void MoveFromPool(int gpu, GpuSet& basket) {
    pool_.erase(gpu);
    basket.insert(gpu);
  }

  // Algorithm 3: first fit in the VM's basket, else a new GPU from the pool
  // while the basket is under its cap.
  bool PlaceInBasket(const VmRequest& vm, OnlineCluster& cluster) {
    GpuSet& basket = IsHeavy(vm) ? heavy_ : light_;
    const int capacity = IsHeavy(vm) ? heavy_capacity_ : light_capacity_;
    for (int gpu : basket) {
      const int start = cluster.StartFor(vm, gpu);
      if (start >= 0) return cluster.Place(vm.id, gpu, start).ok();
    }
    if (static_cast<int>(basket.size()) >= capacity) return false;
    for (int gpu : pool_) {
      const int start = cluster.StartFor(vm, gpu);
      if (start < 0) continue;
      MoveFromPool(gpu, basket);
      return cluster.Place(vm.id, gpu, start).ok();
    }
    return false;
  }

  // Algorithm 4: rearrange the most fragmented light GPU to raise its CC.
  void Defragment(double now_s, OnlineCluster& cluster) {
    const CapabilityTable& table = cluster.capability();
    int worst = -1;
    for (int gpu : light_) {
      if (cluster.GpuEmpty(gpu)) continue;
      if (worst < 0 || table.Fragmentation(cluster.UsedMask(gpu)) >
                           table.Fragmentation(cluster.UsedMask(worst))) {
        worst = gpu;
      }
    }
    if (worst < 0) return;
    std::vector<int> starts = BestMockArrangement(cluster, worst);
    if (!starts.empty()) (void)cluster.Rearrange(worst, starts, now_s);
  }

  // The starts the driver gives the GPU's VMs when re-created on an empty GPU,
  // in arrival order or largest first, whichever leaves the higher CC; empty
  // when neither beats the current CC.
  static std::vector<int> BestMockArrangement(const OnlineCluster& cluster, int gpu) {
    const std::vector<int>& vms = cluster.VmsOn(gpu);
    std::vector<int> arrival(vms.size()), largest_first;
    for (size_t i = 0; i < vms.size(); ++i) arrival[i] = static_cast<int>(i);
    largest_first = arrival;
    const GpuModel& model = cluster.gpu_model();
    std::stable_sort(largest_first.begin(), largest_first.end(), [&](int a, int b) {
      return model.profiles[cluster.vm(vms[a]).profile].memory_slices >
             model.profiles[cluster.vm(vms[b]).profile].memory_slices;
    });
    int best_cc = cluster.capability().Capability(cluster.UsedMask(gpu));
    std::vector<int> best;
    for (const std::vector<int>& order : {arrival, largest_first}) {
      SliceMask mock = 0;
      std::vector<int> starts(vms.size(), -1);
      for (int i : order) {
        const int profile = cluster.vm(vms[i]).profile;
        starts[i] = cluster.capability().AssignStart(mock, profile);
        if (starts[i] < 0) break;
        mock |= MaskOf(model, {profile, starts[i]});
      }
      if (std::find(starts.begin(), starts.end(), -1) != starts.end()) continue;
      const int cc = cluster.capability().Capability(mock);
      if (cc > best_cc) best_cc = cc, best = starts;
    }
    return best;
  }

  // Algorithm 5: light GPUs holding one VM in exactly one half of their
  // memory are paired; the source's VM moves to its partner.
  void Consolidate(double now_s, OnlineCluster& cluster) {
    std::vector<int> candidates;
    for (int gpu : light_) {
      if (IsHalfFullSingle(cluster, gpu)) candidates.push_back(gpu);
    }
    std::vector<bool> used(candidates.size(), false);
    for (size_t s = candidates.size(); s-- > 0;) {
      if (used[s]) continue;
      const int source = candidates[s];
      const int vm = cluster.VmsOn(source).front();
      for (size_t t = 0; t < s; ++t) {
        if (used[t]) continue;
        const int start = cluster.capability().AssignStart(cluster.UsedMask(candidates[t]),
                                                           cluster.vm(vm).profile);
        if (start < 0 || !cluster.Migrate(vm, candidates[t], start, now_s).ok()) continue;
        used[s] = used[t] = true;
        light_.erase(source);
        pool_.insert(source);
        break;
      }
    }
  }

  static bool IsHalfFullSingle(const OnlineCluster& cluster, int gpu) {
    if (cluster.VmsOn(gpu).size() != 1) return false;
    const int slices = cluster.gpu_model().memory_slices;
    const SliceMask lower = (SliceMask{1} << (slices / 2)) - 1;
    const SliceMask used = cluster.UsedMask(gpu);
    return used == lower || used == (lower << (slices / 2));
  }

  BasketCap cap_;
  PlacerOptions options_;
  ClassDemand demand_;  // fair: GPUs' worth of requests seen, per class
  int heavy_capacity_ = 0;
  int light_capacity_ = 0;
  const GpuModel* gpu_ = nullptr;
  GpuSet pool_, heavy_, light_;
};

}  // namespace

std::unique_ptr<OnlinePlacer> NewGrmuPlacer(BasketCap cap, const PlacerOptions& options) {
  return std::make_unique<GrmuPlacer>(cap, options);
}

}  // namespace tessera
