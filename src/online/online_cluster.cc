#include "tessera/online/online_cluster.h"

#include <algorithm>
#include <string>

namespace tessera {
namespace {

std::string VmName(const VmRequest& vm) {
  return "VM " + std::to_string(vm.id) + " (" + vm.name + ")";
}

}  // namespace

OnlineCluster::OnlineCluster(const VmTrace& trace)
    : trace_(&trace), table_(*trace.gpu), location_(trace.vms.size()) {
  hosts_.resize(trace.hosts.size());
  for (size_t h = 0; h < trace.hosts.size(); ++h) {
    hosts_[h].first_gpu = num_gpus();
    for (int g = 0; g < trace.hosts[h].gpus; ++g) gpus_.push_back({static_cast<int>(h), 0, {}});
  }
  by_mask_.resize(size_t{1} << gpu_model().memory_slices);
  for (int g = 0; g < num_gpus(); ++g) by_mask_[0].insert(g);
}

void OnlineCluster::SetMask(int gpu, SliceMask used) {
  by_mask_[gpus_[gpu].used].erase(gpu);
  gpus_[gpu].used = used;
  by_mask_[used].insert(gpu);
}

bool OnlineCluster::Resident(int vm) const {
  return vm >= 0 && vm < static_cast<int>(location_.size()) && location_[vm].gpu >= 0;
}

bool OnlineCluster::HostFits(int host, const VmRequest& vm) const {
  if (offered_ != nullptr && !(*offered_)[host]) return false;
  const HostState& h = hosts_[host];
  const HostSpec& spec = trace_->hosts[host];
  return h.cpu_used + vm.cpu_milli <= spec.cpu_milli &&
         h.memory_used + vm.memory_mib <= spec.memory_mib;
}

int OnlineCluster::StartFor(const VmRequest& vm, int gpu) const {
  const int start = table_.AssignStart(gpus_[gpu].used, vm.profile);
  if (start < 0 || !HostFits(gpus_[gpu].host, vm)) return -1;
  return start;
}

void OnlineCluster::Attach(int vm, int gpu, int start) {
  GpuState& g = gpus_[gpu];
  HostState& h = hosts_[g.host];
  const VmRequest& request = trace_->vms[vm];
  SetMask(gpu, g.used | MaskOf(gpu_model(), {request.profile, start}));
  g.vms.push_back(vm);
  h.cpu_used += request.cpu_milli;
  h.memory_used += request.memory_mib;
  if (h.vms++ == 0) {
    ++active_hosts_;
    active_gpus_ += trace_->hosts[g.host].gpus;
  }
  location_[vm] = {gpu, start};
  ++resident_;
}

void OnlineCluster::Detach(int vm) {
  const VmLocation where = location_[vm];
  GpuState& g = gpus_[where.gpu];
  HostState& h = hosts_[g.host];
  const VmRequest& request = trace_->vms[vm];
  SetMask(where.gpu, g.used & ~MaskOf(gpu_model(), {request.profile, where.start}));
  g.vms.erase(std::find(g.vms.begin(), g.vms.end(), vm));
  h.cpu_used -= request.cpu_milli;
  h.memory_used -= request.memory_mib;
  if (--h.vms == 0) {
    --active_hosts_;
    active_gpus_ -= trace_->hosts[g.host].gpus;
    h.cpu_used = h.memory_used = 0;  // no drift from float sums on an idle host
  }
  location_[vm] = {};
  --resident_;
}

Status OnlineCluster::Place(int vm, int gpu, int start) {
  if (vm < 0 || vm >= static_cast<int>(trace_->vms.size()) || gpu < 0 || gpu >= num_gpus()) {
    return Status::InvalidArgument("place: VM or GPU index out of range");
  }
  const VmRequest& request = trace_->vms[vm];
  if (location_[vm].gpu >= 0)
    return Status::InvalidArgument(VmName(request) + " is already placed");
  const MigProfile& profile = gpu_model().profiles[request.profile];
  if (std::find(profile.starts.begin(), profile.starts.end(), start) == profile.starts.end()) {
    return Status::InvalidArgument(VmName(request) + ": " + profile.name + " may not start at " +
                                   std::to_string(start));
  }
  if (MaskOf(gpu_model(), {request.profile, start}) & gpus_[gpu].used) {
    return Status::InvalidArgument(VmName(request) + ": slices of GPU " + std::to_string(gpu) +
                                   " from " + std::to_string(start) + " are taken");
  }
  if (!HostFits(gpus_[gpu].host, request)) {
    return Status::InvalidArgument(VmName(request) + ": host " +
                                   trace_->hosts[gpus_[gpu].host].name + " lacks CPU or RAM");
  }
  Attach(vm, gpu, start);
  return Status::Ok();
}

Status OnlineCluster::Release(int vm) {
  if (!Resident(vm)) {
    return Status::InvalidArgument("release: VM " + std::to_string(vm) + " is not resident");
  }
  Detach(vm);
  return Status::Ok();
}

Status OnlineCluster::Migrate(int vm, int gpu, int start, double now_s) {
  if (!Resident(vm)) {
    return Status::InvalidArgument("migrate: VM " + std::to_string(vm) + " is not resident");
  }
  const VmLocation from = location_[vm];
  Detach(vm);
  if (Status placed = Place(vm, gpu, start); !placed.ok()) {
    Attach(vm, from.gpu, from.start);  // its old place is free again: restore it
    return placed;
  }
  migrations_.push_back({now_s, vm, from.gpu, from.start, gpu, start,
                         from.gpu == gpu ? MigrationKind::kIntraGpu : MigrationKind::kInterGpu});
  return Status::Ok();
}

Status OnlineCluster::Rearrange(int gpu, const std::vector<int>& starts, double now_s) {
  if (gpu < 0 || gpu >= num_gpus() || starts.size() != gpus_[gpu].vms.size()) {
    return Status::InvalidArgument("rearrange: one start per VM of a valid GPU is needed");
  }
  Layout layout;
  for (size_t i = 0; i < starts.size(); ++i) {
    layout.push_back({trace_->vms[gpus_[gpu].vms[i]].profile, starts[i]});
  }
  if (Status legal = CheckLayout(gpu_model(), layout); !legal.ok()) {
    return legal.WithContext("rearrange GPU " + std::to_string(gpu));
  }
  SliceMask used = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int vm = gpus_[gpu].vms[i];
    used |= MaskOf(gpu_model(), layout[i]);
    if (location_[vm].start == starts[i]) continue;
    migrations_.push_back(
        {now_s, vm, gpu, location_[vm].start, gpu, starts[i], MigrationKind::kIntraGpu});
    location_[vm].start = starts[i];
  }
  SetMask(gpu, used);
  return Status::Ok();
}

Status OnlineCluster::CheckInvariants() const {
  std::vector<SliceMask> used(gpus_.size(), 0);
  std::vector<double> cpu(hosts_.size(), 0), memory(hosts_.size(), 0);
  std::vector<int> on_gpu(gpus_.size(), 0), on_host(hosts_.size(), 0);
  int resident = 0;
  for (size_t v = 0; v < location_.size(); ++v) {
    const VmLocation where = location_[v];
    if (where.gpu < 0) continue;
    ++resident;
    const VmRequest& request = trace_->vms[v];
    const MigProfile& profile = gpu_model().profiles[request.profile];
    if (std::find(profile.starts.begin(), profile.starts.end(), where.start) ==
        profile.starts.end()) {
      return Status::Internal(VmName(request) + " sits at a start its profile does not allow");
    }
    const SliceMask mask = MaskOf(gpu_model(), {request.profile, where.start});
    if (used[where.gpu] & mask) return Status::Internal(VmName(request) + " overlaps another VM");
    used[where.gpu] |= mask;
    ++on_gpu[where.gpu];
    const int host = gpus_[where.gpu].host;
    ++on_host[host];
    cpu[host] += request.cpu_milli;
    memory[host] += request.memory_mib;
  }
  if (resident != resident_) return Status::Internal("resident VM count drifted");
  for (size_t g = 0; g < gpus_.size(); ++g) {
    if (used[g] != gpus_[g].used || on_gpu[g] != static_cast<int>(gpus_[g].vms.size()) ||
        by_mask_[used[g]].count(static_cast<int>(g)) == 0) {
      return Status::Internal("GPU " + std::to_string(g) + " disagrees with its VMs' locations");
    }
  }
  int active_hosts = 0, active_gpus = 0;
  for (size_t h = 0; h < hosts_.size(); ++h) {
    const HostSpec& spec = trace_->hosts[h];
    constexpr double kSlack = 1e-6;  // float sums of CPU/RAM requests
    if (cpu[h] > spec.cpu_milli + kSlack || memory[h] > spec.memory_mib + kSlack) {
      return Status::Internal("host " + spec.name + " is over its CPU or RAM");
    }
    if (on_host[h] != hosts_[h].vms)
      return Status::Internal("host " + spec.name + " miscounts its VMs");
    if (on_host[h] > 0) ++active_hosts, active_gpus += spec.gpus;
  }
  if (active_hosts != active_hosts_ || active_gpus != active_gpus_) {
    return Status::Internal("active hardware counters drifted");
  }
  return Status::Ok();
}

}  // namespace tessera
