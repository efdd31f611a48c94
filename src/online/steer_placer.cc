// steer: the policy Tessera steers with (docs/online-placement.md). frag
// chooses every placement, GPU and start; when nothing fits, lfr's fallback
// rearranges one GPU; and the full-GPU requests may hold every GPU but a
// reserve kept for the others: the GPUs fair's learned cap keeps from them,
// weighted by the share of the GPU demand accepted so far that still holds
// its GPUs. Where VMs never leave, the reserve is fair's, whose cap is what
// accepts the most on a cluster that fills for good; as VMs leave, the
// capacity comes back and the reserve fades, so that a full-GPU request is
// not turned away from a GPU that would otherwise stay idle.
#include <cmath>
#include <memory>

#include "online/placers.h"
#include "online/rearrange.h"

namespace tessera {
namespace {

class SteerPlacer : public OnlinePlacer {
 public:
  explicit SteerPlacer(const PlacerOptions& options)
      : options_(options), frag_(NewScanPlacer(ScanRule::kLeastFragmentation, options)) {}
  SteerPlacer(const SteerPlacer& other)
      : options_(other.options_),
        frag_(other.frag_->Clone()),
        demand_(other.demand_),
        accepted_(other.accepted_),
        resident_(other.resident_),
        heavy_resident_(other.heavy_resident_) {}

  std::string_view Name() const override { return "steer"; }

  void Start(const OnlineCluster& cluster) override { frag_->Start(cluster); }

  bool Place(const VmRequest& vm, OnlineCluster& cluster) override {
    demand_.Count(cluster.gpu_model(), vm.profile);
    if (IsFullGpuProfile(cluster.gpu_model(), vm.profile) && heavy_resident_ >= HeavyCap(cluster)) {
      return false;
    }
    if (!frag_->Place(vm, cluster) && !(options_.defragment && PlaceByRearranging(vm, cluster))) {
      return false;
    }
    Admit(vm, cluster);
    return true;
  }

  void Released(int vm, int gpu, const OnlineCluster& cluster) override {
    frag_->Released(vm, gpu, cluster);
    const VmRequest& left = cluster.vm(vm);
    resident_ -= GpuShareOf(cluster.gpu_model().profiles[left.profile]);
    heavy_resident_ -= IsFullGpuProfile(cluster.gpu_model(), left.profile);
  }

  // An adopted VM counts as seen, accepted and resident.
  void Adopted(int vm, const OnlineCluster& cluster) override {
    frag_->Adopted(vm, cluster);
    demand_.Count(cluster.gpu_model(), cluster.vm(vm).profile);
    Admit(cluster.vm(vm), cluster);
  }

  std::unique_ptr<OnlinePlacer> Clone() const override {
    return std::make_unique<SteerPlacer>(*this);
  }

 private:
  void Admit(const VmRequest& vm, const OnlineCluster& cluster) {
    const double share = GpuShareOf(cluster.gpu_model().profiles[vm.profile]);
    accepted_ += share;
    resident_ += share;
    heavy_resident_ += IsFullGpuProfile(cluster.gpu_model(), vm.profile);
  }

  // GPUs the full-GPU VMs may hold: every GPU but the reserve, fair's
  // reserve (the GPUs its cap keeps from them) x the share of the accepted
  // demand still resident (1 before anything is accepted).
  int HeavyCap(const OnlineCluster& cluster) const {
    const int gpus = cluster.num_gpus();
    const double retained = accepted_ > 0 ? resident_ / accepted_ : 1;
    const int fair_reserve = gpus - demand_.HeavyCap(options_.fair_factor, gpus);
    return gpus - static_cast<int>(std::lround(fair_reserve * retained));
  }

  PlacerOptions options_;
  std::unique_ptr<OnlinePlacer> frag_;
  ClassDemand demand_;      // every request seen, as fair counts it
  double accepted_ = 0;     // GPU demand (GpuShareOf) accepted or adopted so far
  double resident_ = 0;     // ... and still resident
  int heavy_resident_ = 0;  // resident full-GPU VMs, one GPU each
};

}  // namespace

std::unique_ptr<OnlinePlacer> NewSteerPlacer(const PlacerOptions& options) {
  return std::make_unique<SteerPlacer>(options);
}

}  // namespace tessera
