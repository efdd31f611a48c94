// OnlineCluster: the live state of a MIG cluster during an online replay:
// hosts with CPU and RAM in use, GPUs with their MIG instances as memory-slice
// masks, where every resident VM is, and the migrations done so far.
//
// GPUs carry a global index: hosts in trace order, each host's GPUs in order
// (GRMU Algorithm 2). Every mutation keeps the state legal (MIG geometry,
// host CPU/RAM) or is refused with a Status; CheckInvariants() re-derives the
// whole state from the placed VMs, for tests.
//
// A value: a copy is an independent cluster in the same state, sharing the
// trace (and the RestrictHosts limit), so a caller can try placements on a
// copy without touching the original.
//
// Thread-safety: not synchronised; one replay owns one cluster.
#ifndef TESSERA_ONLINE_CLUSTER_H_
#define TESSERA_ONLINE_CLUSTER_H_

#include <set>
#include <string>
#include <vector>

#include "tessera/gpu/mig_layout.h"
#include "tessera/online/mig_capability.h"
#include "tessera/online/vm_trace.h"
#include "tessera/status.h"

namespace tessera {

enum class MigrationKind { kIntraGpu, kInterGpu };

// One live migration of a resident VM, an explicit event of the replay.
struct MigrationEvent {
  double time_s = 0;
  int vm = 0;
  int from_gpu = 0;
  int from_start = 0;
  int to_gpu = 0;
  int to_start = 0;
  MigrationKind kind = MigrationKind::kIntraGpu;
};

// A resident VM's place.
struct VmLocation {
  int gpu = -1;  // -1: not resident
  int start = 0;
};

class OnlineCluster {
 public:
  // REQUIRES: trace.gpu set; the cluster keeps a pointer to `trace`'s VMs, so
  // the trace must outlive it.
  explicit OnlineCluster(const VmTrace& trace);

  const CapabilityTable& capability() const { return table_; }
  const GpuModel& gpu_model() const { return table_.gpu(); }
  int num_hosts() const { return static_cast<int>(hosts_.size()); }
  int num_gpus() const { return static_cast<int>(gpus_.size()); }

  // ---- GPUs (by global index) ----
  int HostOf(int gpu) const { return gpus_[gpu].host; }
  SliceMask UsedMask(int gpu) const { return gpus_[gpu].used; }
  // Resident VMs of `gpu`, in the order they were placed there.
  const std::vector<int>& VmsOn(int gpu) const { return gpus_[gpu].vms; }
  bool GpuEmpty(int gpu) const { return gpus_[gpu].vms.empty(); }
  // Every GPU whose occupancy is exactly `used`, ascending: policies score
  // each distinct occupancy once instead of every GPU.
  const std::set<int>& GpusWithMask(SliceMask used) const { return by_mask_[used]; }

  // ---- Hosts ----
  const HostSpec& host(int host) const { return trace_->hosts[host]; }
  // True iff `host` has the CPU and RAM `vm` asks for free (and is offered,
  // see RestrictHosts).
  bool HostFits(int host, const VmRequest& vm) const;
  // Limits placements to the hosts marked true in `offered` (one entry per
  // host), as a scheduler's candidate list does; nullptr lifts the limit.
  // Every policy sees the limit through HostFits and StartFor. `offered`
  // must outlive its use.
  void RestrictHosts(const std::vector<bool>* offered) { offered_ = offered; }
  // Resident VMs on any GPU of `host`.
  int VmsOnHost(int host) const { return hosts_[host].vms; }
  // First global GPU index of `host`; its GPUs are consecutive.
  int FirstGpuOf(int host) const { return hosts_[host].first_gpu; }

  // ---- VMs ----
  const VmRequest& vm(int id) const { return trace_->vms[id]; }
  // Call after appending requests to the trace (a scheduler learning of new
  // pods); they start unplaced.
  void RequestsAppended() { location_.resize(trace_->vms.size()); }
  VmLocation LocationOf(int vm) const { return location_[vm]; }
  int resident_vms() const { return resident_; }

  // The start the driver would give `vm` on `gpu` (CapabilityTable::
  // AssignStart), or -1 when its profile does not fit there or the host lacks
  // CPU/RAM.
  int StartFor(const VmRequest& vm, int gpu) const;

  // Places `vm` (not resident) at `start` on `gpu`. InvalidArgument when the
  // slices are taken, the start is not allowed, or the host lacks CPU/RAM.
  Status Place(int vm, int gpu, int start);
  // Removes resident `vm`; InvalidArgument if it is not resident.
  Status Release(int vm);
  // Live-migrates resident `vm` to `start` on `gpu` (the same GPU or another)
  // and records a MigrationEvent at `now_s`. Refused, with the state
  // unchanged, when the target is not free or its host lacks CPU/RAM.
  Status Migrate(int vm, int gpu, int start, double now_s);

  // Re-creates the instances of every VM on `gpu` at `starts` (one per
  // VmsOn(gpu) entry, same order), as a driver does when GIs are destroyed and
  // created again; every VM whose start changes counts as one intra-GPU
  // migration at `now_s`. Refused, with the state unchanged, unless the new
  // layout is legal.
  Status Rearrange(int gpu, const std::vector<int>& starts, double now_s);

  const std::vector<MigrationEvent>& migrations() const { return migrations_; }

  // ---- Active hardware (GRMU: a host and all its GPUs count while the host
  // runs any VM) ----
  int active_hosts() const { return active_hosts_; }
  int active_gpus() const { return active_gpus_; }

  // Re-derives masks, host usage and counters from the VM locations and
  // compares: OK, or Internal naming the first inconsistency (overlapping or
  // misplaced instances, CPU/RAM over capacity, a VM on two GPUs).
  Status CheckInvariants() const;

 private:
  struct GpuState {
    int host = 0;
    SliceMask used = 0;
    std::vector<int> vms;
  };
  struct HostState {
    int first_gpu = 0;
    double cpu_used = 0;
    double memory_used = 0;
    int vms = 0;
  };

  bool Resident(int vm) const;  // a valid id, placed on some GPU
  void Attach(int vm, int gpu, int start);
  void Detach(int vm);

  const VmTrace* trace_;
  CapabilityTable table_;
  const std::vector<bool>* offered_ = nullptr;
  void SetMask(int gpu, SliceMask used);

  std::vector<GpuState> gpus_;
  std::vector<std::set<int>> by_mask_;  // occupancy mask -> GPUs
  std::vector<HostState> hosts_;
  std::vector<VmLocation> location_;
  std::vector<MigrationEvent> migrations_;
  int resident_ = 0;
  int active_hosts_ = 0;
  int active_gpus_ = 0;
};

}  // namespace tessera

#endif  // TESSERA_ONLINE_CLUSTER_H_
