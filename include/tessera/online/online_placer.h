// OnlinePlacer: one small interface for every online VM placement policy
// (First-Fit, Best-Fit, MCC, MECC, GRMU, "fair", GRMU's baskets with a heavy
// cap learned from the demand seen so far, the field's largest-free-run and
// fragmentation greedies) and a name-keyed registry of them.
//
// A placer chooses the GPU for each arriving VM; FF, BF, MCC, MECC, GRMU and
// fair leave the start slice inside the GPU to the driver
// (CapabilityTable::AssignStart), lfr and frag choose it too. A placer may
// migrate resident VMs (OnlineCluster::Migrate, Rearrange), which the replay
// reports as explicit events. Placers keep per-replay state (baskets, arrival
// windows), so one instance serves one replay; Clone() copies it.
//
// Thread-safety: not synchronised; one replay owns one placer.
#ifndef TESSERA_ONLINE_PLACER_H_
#define TESSERA_ONLINE_PLACER_H_

#include <memory>
#include <string_view>

#include "tessera/online/online_cluster.h"
#include "tessera/online/vm_trace.h"
#include "tessera/registry.h"
#include "tessera/status.h"

namespace tessera {

// Settings of the policies that have any; each policy reads its own.
struct PlacerOptions {
  // GRMU: share of all GPUs the heavy basket (full-GPU profile) may hold.
  double heavy_share = 0.3;
  // fair: the heavy basket may hold this fraction of the full-GPU requests'
  // demand-proportional share of the GPUs (docs/online-placement.md); steer:
  // the cap its full-GPU reserve starts from. In (0, 1].
  double fair_factor = 0.55;
  // GRMU and fair: seconds between inter-GPU consolidations; 0 = off (the paper's
  // choice for the Alibaba trace).
  double consolidate_every_s = 0;
  // GRMU and fair: defragment the most fragmented light-basket GPU after a
  // rejection; lfr and steer: rearrange one GPU when nothing fits.
  bool defragment = true;
  // MECC and frag: look-back window of the arrivals that estimate profile
  // probabilities; within limits::kMeccWindowS.
  double mecc_window_s = 24 * 3600.0;

  // InvalidArgument naming the first bad field.
  Status Validate() const;
};

class OnlinePlacer {
 public:
  virtual ~OnlinePlacer() = default;
  virtual std::string_view Name() const = 0;
  // Called once, with the empty cluster, before the first request.
  virtual void Start(const OnlineCluster& cluster) { (void)cluster; }
  // Places `vm` (arriving at vm.arrival_s) through cluster.Place and returns
  // true, or returns false (rejected) leaving it unplaced. May migrate
  // resident VMs first.
  virtual bool Place(const VmRequest& vm, OnlineCluster& cluster) = 0;
  // Told after `vm` left `gpu` (already released from the cluster).
  virtual void Released(int vm, int gpu, const OnlineCluster& cluster) {
    (void)vm, (void)gpu, (void)cluster;
  }
  // Told that `vm` was placed without the policy (a scheduler rebuilding its
  // state from bound pods after a restart or a node change), so that
  // policies keeping per-GPU state take its GPU in.
  virtual void Adopted(int vm, const OnlineCluster& cluster) { (void)vm, (void)cluster; }
  // Seconds between Maintain() calls; 0 = never.
  virtual double MaintenanceIntervalS() const { return 0; }
  // Periodic work such as consolidation, at replay time `now_s`.
  virtual void Maintain(double now_s, OnlineCluster& cluster) { (void)now_s, (void)cluster; }
  // A placer with the same options and per-replay state: given a copy of the
  // cluster (OnlineCluster is a value; copies share the trace), it makes the
  // decisions this one would, and neither changes the other. Lets a caller
  // ask what the policy would do next without doing it.
  virtual std::unique_ptr<OnlinePlacer> Clone() const = 0;
};

using PlacerRegistry = NamedRegistry<OnlinePlacer, const PlacerOptions&>;

// Every built-in policy: bf, fair, ff, frag, grmu, lfr, mcc, mecc.
const PlacerRegistry& BuiltinPlacers();

}  // namespace tessera

#endif  // TESSERA_ONLINE_PLACER_H_
