// SchedulerExtender (scheduler_extender.h): kube-scheduler's extender verbs
// over an OnlineCluster whose hosts are the Kubernetes nodes and whose VMs
// are the pods, placed by an OnlinePlacer from the registry `tessera replay`
// uses.
#include "tessera/k8s/scheduler_extender.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "k8s/extender_args.h"
#include "tessera/gpu_catalog.h"
#include "tessera/online/online_cluster.h"
#include "tessera/online/vm_trace.h"
#include "util/json_structure.h"

namespace tessera {
namespace {

using nlohmann::json;

// Appends `text` as a JSON string: as it is when it holds only characters
// that need no escaping (node names do), else through the JSON library
// (invalid UTF-8 replaced).
void AppendJsonString(std::string& out, std::string_view text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
  });
  if (plain) {
    out += '"';
    out += text;
    out += '"';
  } else {
    out += json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

void AppendReasons(std::string& out, const std::map<std::string, std::string>& reasons) {
  out += '{';
  for (const auto& [node, reason] : reasons) {
    if (out.back() != '{') out += ',';
    AppendJsonString(out, node);
    out += ':';
    AppendJsonString(out, reason);
  }
  out += '}';
}

// The JSON text of an ExtenderFilterResult keeping `kept` (indices into the
// candidates), written directly: with thousands of nodes a JSON tree of the
// answer costs more than the decision.
std::string FilterResult(const ExtenderArgs& candidates, const std::vector<size_t>& kept,
                         const std::map<std::string, std::string>& failed,
                         const std::map<std::string, std::string>& unresolvable,
                         const std::string& error = "") {
  std::string out;
  out.reserve(64 + 16 * kept.size());
  out += "{\"Nodes\":";
  if (candidates.by_name) {
    out += "null,\"NodeNames\":[";
    for (size_t k = 0; k < kept.size(); ++k) {
      if (k > 0) out += ',';
      AppendJsonString(out, candidates.names[kept[k]]);
    }
    out += ']';
  } else {
    json list = candidates.list;
    list["items"] = json::array();
    for (size_t i : kept) list["items"].push_back(candidates.objects[i]);
    out += list.dump(-1, ' ', false, json::error_handler_t::replace);
    out += ",\"NodeNames\":null";
  }
  out += ",\"FailedNodes\":";
  AppendReasons(out, failed);
  out += ",\"FailedAndUnresolvableNodes\":";
  AppendReasons(out, unresolvable);
  out += ",\"Error\":";
  AppendJsonString(out, error);
  out += '}';
  return out;
}

std::vector<size_t> AllOf(const ExtenderArgs& candidates) {
  std::vector<size_t> all(candidates.names.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

std::map<std::string, std::string> EveryNode(const ExtenderArgs& candidates,
                                             const std::string& reason) {
  std::map<std::string, std::string> reasons;
  for (const std::string& name : candidates.names) reasons[name] = reason;
  return reasons;
}

}  // namespace

Status ExtenderOptions::Validate() const {
  if (Result<const GpuModel*> model = FindMigGpu(gpu); !model.ok()) {
    return model.status().WithContext("gpu");
  }
  if (Result<std::unique_ptr<OnlinePlacer>> created = BuiltinPlacers().Create(policy, placer);
      !created.ok()) {
    return created.status().WithContext("policy");
  }
  if (Status s = placer.Validate(); !s.ok()) return s;
  if (!(reservation_ttl_s > 0 && reservation_ttl_s <= 3600)) {
    return Status::InvalidArgument("reservation_ttl_s: must be in (0, 3600] seconds");
  }
  if (clock == nullptr) return Status::InvalidArgument("clock: missing");
  return Status::Ok();
}

// Requests in the trace before CompactIfSparse may rebuild it (about 10 MB).
constexpr size_t kCompactAfter = 100'000;

class SchedulerExtender::Impl {
 public:
  Impl(ExtenderOptions options, const GpuModel& model, KubeApi& api)
      : options_(std::move(options)), model_(model), api_(api) {
    options_.placer.defragment = false;
    options_.placer.consolidate_every_s = 0;
    trace_.gpu = &model_;
    for (size_t p = 0; p < model_.profiles.size(); ++p) {
      if (!model_.profiles[p].media_extensions) profile_index_[model_.profiles[p].name] = p;
    }
    Rebuild({});
  }

  // ---- Protocol ----

  Result<std::string> Filter(std::string_view body) {
    TESSERA_ASSIGN_OR_RETURN(const ExtenderArgs candidates, ReadExtenderArgs(body));
    return Filter(candidates);
  }

  Result<std::string> Filter(const ExtenderArgs& candidates) {
    Result<std::optional<PodSlice>> slice = PodSliceFromObject(candidates.pod);
    std::lock_guard lock(mutex_);
    ++counters_.filters;
    if (!slice.ok()) {
      ++counters_.declined;
      return FilterResult(candidates, {}, {},
                          EveryNode(candidates, "tessera: " + slice.status().message()));
    }
    if (!slice->has_value()) return FilterResult(candidates, AllOf(candidates), {}, {});
    if (!synced_) {
      return FilterResult(candidates, {}, {}, {},
                          "tessera: still reading nodes and pods from the API server");
    }
    ExpireReservations();
    CompactIfSparse();
    const PodSlice& request = **slice;
    if (const auto entry = pods_.find(request.uid);
        entry != pods_.end() && entry->second.state != State::kReserved) {
      return FilterResult(
          candidates, {}, {}, {},
          "tessera: pod " + request.ns + "/" + request.name + " is already bound or being bound");
    }
    const auto profile = profile_index_.find(request.profile);
    if (profile == profile_index_.end()) {
      ++counters_.declined;
      return FilterResult(candidates, {}, {}, EveryNode(candidates, UnknownProfile(request)));
    }
    Release(request.uid);

    // Which offered nodes have a legal free placement (and the pod's CPU/RAM).
    const int vm = NewVm(request, static_cast<int>(profile->second));
    std::map<std::string, std::string> failed, unresolvable;
    std::vector<size_t> kept;
    std::fill(offered_.begin(), offered_.end(), false);
    std::vector<int> host_of_candidate(candidates.names.size(), -1);
    for (size_t i = 0; i < candidates.names.size(); ++i) {
      const auto host = host_of_.find(candidates.names[i]);
      if (host == host_of_.end()) {
        unresolvable[candidates.names[i]] = "tessera: node has no " + std::string(kGpusLabel) +
                                            " label (not a GPU node of Tessera's)";
        continue;
      }
      host_of_candidate[i] = host->second;
      offered_[host->second] = true;
    }
    cluster_->RestrictHosts(&offered_);
    for (size_t i = 0; i < candidates.names.size(); ++i) {
      const int host = host_of_candidate[i];
      if (host < 0) continue;
      if (HostHasPlace(vm, host)) {
        kept.push_back(i);
      } else {
        failed[candidates.names[i]] =
            "tessera: no free " + request.profile + " placement on the node's " +
            std::to_string(nodes_[host].gpus) + " GPUs, or its CPU/RAM is taken";
      }
    }
    for (size_t i = 0; i < candidates.names.size(); ++i) {
      if (host_of_candidate[i] >= 0 && failed.count(candidates.names[i]) > 0)
        offered_[host_of_candidate[i]] = false;
    }
    // The policy sees every pod, even one no node can take, as the replay
    // shows it every request: MECC counts each arrival in its profile mix.
    const bool placed = placer_->Place(trace_.vms[vm], *cluster_);
    cluster_->RestrictHosts(nullptr);
    if (!placed) {
      DropUnplacedVm(vm);
      ++counters_.declined;
      if (!kept.empty()) {
        const std::string reason = "tessera: policy " + options_.policy + " declines a " +
                                   request.profile + " slice now" +
                                   (options_.policy == "grmu" || options_.policy == "fair"
                                        ? " (its basket holds its share of the GPUs, all full)"
                                        : "");
        for (size_t i : kept) failed[candidates.names[i]] = reason;
        kept.clear();
      }
      return FilterResult(candidates, kept, failed, unresolvable);
    }
    Reserve(request, vm);
    return FilterResult(candidates, kept, failed, unresolvable);
  }

  Result<std::string> Prioritize(std::string_view body) {
    TESSERA_ASSIGN_OR_RETURN(const ExtenderArgs candidates, ReadExtenderArgs(body));
    Result<std::optional<PodSlice>> slice = PodSliceFromObject(candidates.pod);
    std::string chosen;
    {
      std::lock_guard lock(mutex_);
      ++counters_.prioritizes;
      ExpireReservations();
      if (slice.ok() && slice->has_value()) {
        const auto entry = pods_.find((*slice)->uid);
        if (entry != pods_.end()) chosen = NodeOfVm(entry->second.vm);
      }
    }
    if (chosen.empty() && slice.ok() && slice->has_value()) {
      // No reservation (expired, or the extender restarted after the
      // filter): the filter's placement again, on these candidates.
      TESSERA_ASSIGN_OR_RETURN(const std::string filtered, Filter(candidates));
      (void)filtered;
      std::lock_guard lock(mutex_);
      const auto entry = pods_.find((*slice)->uid);
      if (entry != pods_.end()) chosen = NodeOfVm(entry->second.vm);
    }
    std::string list = "[";
    list.reserve(32 * candidates.names.size());
    for (const std::string& name : candidates.names) {
      if (list.size() > 1) list += ',';
      list += "{\"Host\":";
      AppendJsonString(list, name);
      list += ",\"Score\":";
      list += name == chosen ? std::to_string(kMaxExtenderScore) : "0";
      list += '}';
    }
    return list + "]";
  }

  Result<std::string> Bind(std::string_view body) {
    if (const std::string problem = CheckJsonStructure(body); !problem.empty()) {
      return Status::InvalidArgument(problem);
    }
    const json args = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (!args.is_object()) {
      return Status::InvalidArgument("the body must be an ExtenderBindingArgs object");
    }
    std::string fields[4];
    const char* names[4] = {"PodName", "PodNamespace", "PodUID", "Node"};
    for (int i = 0; i < 4; ++i) {
      const auto it = args.find(names[i]);
      if (it == args.end() || !it->is_string() || it->get<std::string>().empty()) {
        return Status::InvalidArgument(std::string(names[i]) + ": missing or not a string");
      }
      fields[i] = it->get<std::string>();
    }
    const std::string &name = fields[0], &ns = fields[1], &uid = fields[2], &node = fields[3];
    const std::string who = ns + "/" + name;

    PodPlacement placement;
    std::uint64_t ticket = 0;
    {
      std::unique_lock lock(mutex_);
      ++counters_.binds;
      ExpireReservations();
      auto entry = pods_.find(uid);
      if (entry != pods_.end() && entry->second.state == State::kBound) {
        if (NodeOfVm(entry->second.vm) == node) return BindResult("");
        return Failed("tessera: pod " + who + " is already bound to " + NodeOfVm(entry->second.vm));
      }
      if (entry != pods_.end() && entry->second.state == State::kBinding) {
        return Failed("tessera: pod " + who + " is being bound already");
      }
      if (entry != pods_.end() && NodeOfVm(entry->second.vm) != node) {
        Release(uid);
        entry = pods_.end();
      }
      if (entry == pods_.end()) {
        // No reservation here: read the pod and let the policy choose a GPU of `node`.
        lock.unlock();
        Result<json> pod = api_.GetPod(ns, name);
        Result<std::optional<PodSlice>> slice =
            pod.ok() ? PodSliceFromObject(*pod) : Result<std::optional<PodSlice>>(pod.status());
        lock.lock();
        if (!pod.ok()) return Failed("tessera: reading pod " + who + ": " + pod.status().message());
        if (!slice.ok()) return Failed("tessera: " + slice.status().message());
        if (!slice->has_value()) {
          return Failed("tessera: pod " + who + " asks for no " + std::string(kMigResourcePrefix) +
                        "* resource");
        }
        if ((*slice)->uid != uid) return Failed("tessera: pod " + who + " has another UID now");
        if (std::string error = PlaceOnNode(**slice, node); !error.empty()) return Failed(error);
        entry = pods_.find(uid);
      }
      entry->second.state = State::kBinding;
      reserved_.erase(uid);
      placement = PlacementOf(uid, entry->second);
      ticket = entry->second.ticket;
    }
    const Status bound = api_.Bind(placement);
    std::lock_guard lock(mutex_);
    const auto entry = pods_.find(uid);
    // The watch may have adopted the bound pod already (state kBound), and a
    // node change may have rebuilt the cluster.
    const bool still_ours = entry != pods_.end() && entry->second.ticket == ticket;
    if (bound.ok() && still_ours) {
      entry->second.state = State::kBound;
      return BindResult("");
    }
    if (still_ours) Release(uid);
    return Failed(bound.ok() ? "tessera: pod " + who + " was deleted while being bound"
                             : "tessera: binding pod " + who + ": " + bound.message());
  }

  // ---- Cluster state ----

  void SyncNodes(std::vector<KubeNode> nodes) {
    std::lock_guard lock(mutex_);
    std::sort(nodes.begin(), nodes.end(),
              [](const KubeNode& a, const KubeNode& b) { return a.name < b.name; });
    nodes.erase(std::unique(nodes.begin(), nodes.end(),
                            [](const KubeNode& a, const KubeNode& b) { return a.name == b.name; }),
                nodes.end());
    if (SameNodes(nodes)) return;
    Rebuild(std::move(nodes));
  }

  void UpsertNode(KubeNode node) {
    std::lock_guard lock(mutex_);
    std::vector<KubeNode> nodes = nodes_;
    const auto it = std::find_if(nodes.begin(), nodes.end(),
                                 [&](const KubeNode& n) { return n.name == node.name; });
    if (it != nodes.end()) {
      *it = std::move(node);
    } else {
      nodes.insert(
          std::upper_bound(nodes.begin(), nodes.end(), node,
                           [](const KubeNode& a, const KubeNode& b) { return a.name < b.name; }),
          std::move(node));
    }
    if (SameNodes(nodes)) return;
    Rebuild(std::move(nodes));
  }

  void RemoveNode(const std::string& name) {
    std::lock_guard lock(mutex_);
    std::vector<KubeNode> nodes = nodes_;
    const auto it =
        std::find_if(nodes.begin(), nodes.end(), [&](const KubeNode& n) { return n.name == name; });
    if (it == nodes.end()) return;
    nodes.erase(it);
    Rebuild(std::move(nodes));
  }

  void SyncBoundPods(const std::vector<PodPlacement>& pods) {
    std::set<std::string> listed;
    for (const PodPlacement& pod : pods) listed.insert(pod.uid);
    {
      std::lock_guard lock(mutex_);
      std::vector<std::string> gone;
      for (const auto& [uid, entry] : pods_) {
        if (entry.state == State::kBound && listed.count(uid) == 0) gone.push_back(uid);
      }
      for (const std::string& uid : gone) Release(uid);
      std::erase_if(waiting_, [&](const auto& item) { return listed.count(item.first) == 0; });
    }
    for (const PodPlacement& pod : pods) (void)Adopt(pod);
  }

  Status Adopt(const PodPlacement& pod) {
    std::lock_guard lock(mutex_);
    return AdoptLocked(pod);
  }

  void Forget(const std::string& uid) {
    std::lock_guard lock(mutex_);
    waiting_.erase(uid);
    Release(uid);
  }

  void MarkSynced() {
    std::lock_guard lock(mutex_);
    synced_ = true;
  }
  bool synced() const {
    std::lock_guard lock(mutex_);
    return synced_;
  }

  std::optional<SchedulerExtender::NodeSlices> NodeState(const std::string& name) const {
    std::lock_guard lock(mutex_);
    const auto host = host_of_.find(name);
    if (host == host_of_.end()) return std::nullopt;
    SchedulerExtender::NodeSlices slices{nodes_[host->second], {}};
    const int first = cluster_->FirstGpuOf(host->second);
    for (int g = first; g < first + slices.node.gpus; ++g) {
      for (int vm : cluster_->VmsOn(g)) {
        const std::string& uid = uid_of_vm_[vm];
        slices.pods.push_back(PlacementOf(uid, pods_.at(uid)));
      }
    }
    std::sort(slices.pods.begin(), slices.pods.end(),
              [](const PodPlacement& a, const PodPlacement& b) {
                return std::tie(a.gpu, a.start) < std::tie(b.gpu, b.start);
              });
    return slices;
  }

  const GpuModel& gpu() const { return model_; }

  std::vector<PodPlacement> Placements() const {
    std::lock_guard lock(mutex_);
    std::vector<PodPlacement> placements;
    for (const auto& [uid, entry] : pods_) placements.push_back(PlacementOf(uid, entry));
    std::sort(placements.begin(), placements.end(),
              [](const PodPlacement& a, const PodPlacement& b) {
                return std::tie(a.node, a.gpu, a.start) < std::tie(b.node, b.gpu, b.start);
              });
    return placements;
  }

  json StateJson() const {
    std::lock_guard lock(mutex_);
    json nodes = json::array();
    std::map<std::string, json> pods_of;
    for (const auto& [uid, entry] : pods_) {
      const PodPlacement p = PlacementOf(uid, entry);
      pods_of[p.node].push_back({{"uid", uid},
                                 {"namespace", p.ns},
                                 {"name", p.name},
                                 {"gpu", p.gpu},
                                 {"start", p.start},
                                 {"profile", p.profile},
                                 {"state", StateName(entry.state)}});
    }
    for (const KubeNode& node : nodes_) {
      json pods = pods_of.count(node.name) ? pods_of[node.name] : json::array();
      std::sort(pods.begin(), pods.end(), [](const json& a, const json& b) {
        return std::make_pair(a["gpu"].get<int>(), a["start"].get<int>()) <
               std::make_pair(b["gpu"].get<int>(), b["start"].get<int>());
      });
      nodes.push_back({{"name", node.name}, {"gpus", node.gpus}, {"pods", std::move(pods)}});
    }
    const ExtenderCounters& c = counters_;
    return {{"gpu", model_.name},
            {"policy", options_.policy},
            {"synced", synced_},
            {"waiting_for_node", waiting_.size()},
            {"trace_requests", trace_.vms.size()},
            {"counters",
             {{"filters", c.filters},
              {"prioritizes", c.prioritizes},
              {"binds", c.binds},
              {"bind_failures", c.bind_failures},
              {"declined", c.declined},
              {"reservations_expired", c.reservations_expired},
              {"adopted", c.adopted},
              {"adopt_conflicts", c.adopt_conflicts}}},
            {"nodes", std::move(nodes)}};
  }

  ExtenderCounters counters() const {
    std::lock_guard lock(mutex_);
    return counters_;
  }

  Status CheckInvariants() const {
    std::lock_guard lock(mutex_);
    if (Status s = cluster_->CheckInvariants(); !s.ok()) return s;
    int resident = 0;
    for (const auto& [uid, entry] : pods_) {
      if (cluster_->LocationOf(entry.vm).gpu < 0) {
        return Status::Internal("pod " + uid + " holds no slot in the cluster");
      }
      if (uid_of_vm_[entry.vm] != uid)
        return Status::Internal("pod " + uid + ": VM owner mismatch");
      ++resident;
    }
    if (resident != cluster_->resident_vms()) {
      return Status::Internal("the cluster holds " + std::to_string(cluster_->resident_vms()) +
                              " VMs for " + std::to_string(resident) + " pods");
    }
    return Status::Ok();
  }

 private:
  enum class State { kReserved, kBinding, kBound };
  struct Entry {
    int vm = 0;
    std::string ns, name;
    State state = State::kReserved;
    double deadline_ms = 0;  // kReserved: freed after this
    // Tells this hold of the slot from any later one of the pod; unlike
    // `vm`, it survives Rebuild's renumbering.
    std::uint64_t ticket = 0;
  };

  static const char* StateName(State state) {
    switch (state) {
      case State::kReserved:
        return "reserved";
      case State::kBinding:
        return "binding";
      case State::kBound:
        return "bound";
    }
    return "?";
  }

  static std::string BindResult(const std::string& error) {
    std::string out = "{\"Error\":";
    AppendJsonString(out, error);
    return out + "}";
  }
  std::string Failed(const std::string& error) {
    ++counters_.bind_failures;
    return BindResult(error);
  }

  std::string UnknownProfile(const PodSlice& request) const {
    std::string known;
    for (const auto& [name, index] : profile_index_) known += (known.empty() ? "" : ", ") + name;
    return "tessera: unknown MIG profile '" + request.profile + "' (resource " +
           std::string(kMigResourcePrefix) + request.profile + "); the nodes' " + model_.name +
           " offers " + known;
  }

  bool SameNodes(const std::vector<KubeNode>& nodes) const {
    return std::equal(nodes.begin(), nodes.end(), nodes_.begin(), nodes_.end(),
                      [](const KubeNode& a, const KubeNode& b) {
                        return a.name == b.name && a.gpus == b.gpus && a.cpu_milli == b.cpu_milli &&
                               a.memory_mib == b.memory_mib;
                      });
  }

  bool HostHasPlace(int vm, int host) const {
    const int first = cluster_->FirstGpuOf(host);
    for (int g = 0; g < nodes_[host].gpus; ++g) {
      if (cluster_->StartFor(trace_.vms[vm], first + g) >= 0) return true;
    }
    return false;
  }

  // Every filtered pod adds a request to the trace, and released ones stay
  // (the policies index them). Once the trace holds at least
  // kCompactAfter requests and over four per pod holding a slot, a rebuild
  // on the same nodes renumbers the live ones, so memory follows the
  // cluster's pods rather than its history (the policy restarts from the
  // placements, as after a node change).
  void CompactIfSparse() {
    if (trace_.vms.size() < kCompactAfter || trace_.vms.size() <= 4 * pods_.size()) return;
    Rebuild(nodes_);
  }

  // Appends a request for `pod` to the trace (arriving now).
  int NewVm(const PodSlice& pod, int profile) {
    VmRequest vm;
    vm.id = static_cast<int>(trace_.vms.size());
    vm.name = pod.ns + "/" + pod.name;
    vm.profile = profile;
    vm.cpu_milli = pod.cpu_milli;
    vm.memory_mib = pod.memory_mib;
    vm.arrival_s = options_.clock->NowMs() / 1000;
    trace_.vms.push_back(std::move(vm));
    uid_of_vm_.push_back(pod.uid);
    cluster_->RequestsAppended();
    return trace_.vms.back().id;
  }

  // The last request, left unplaced, leaves the trace again.
  void DropUnplacedVm(int vm) {
    if (vm + 1 != static_cast<int>(trace_.vms.size())) return;
    trace_.vms.pop_back();
    uid_of_vm_.pop_back();
    cluster_->RequestsAppended();
  }

  void Reserve(const PodSlice& pod, int vm) {
    pods_[pod.uid] = {vm,
                      pod.ns,
                      pod.name,
                      State::kReserved,
                      options_.clock->NowMs() + options_.reservation_ttl_s * 1000,
                      ++tickets_};
    reserved_.insert(pod.uid);
  }

  // Places `pod` on `node` alone by the policy; "" or why not.
  std::string PlaceOnNode(const PodSlice& pod, const std::string& node) {
    const auto profile = profile_index_.find(pod.profile);
    if (profile == profile_index_.end()) return UnknownProfile(pod);
    const auto host = host_of_.find(node);
    if (host == host_of_.end()) return "tessera: node " + node + " is not a GPU node of Tessera's";
    Release(pod.uid);
    const int vm = NewVm(pod, static_cast<int>(profile->second));
    std::fill(offered_.begin(), offered_.end(), false);
    offered_[host->second] = true;
    cluster_->RestrictHosts(&offered_);
    const bool placed = placer_->Place(trace_.vms[vm], *cluster_);
    cluster_->RestrictHosts(nullptr);
    if (!placed) {
      DropUnplacedVm(vm);
      return "tessera: no free " + pod.profile + " placement on node " + node + " for policy " +
             options_.policy;
    }
    Reserve(pod, vm);
    return "";
  }

  // Frees the slot of `uid` (any state); nothing when it holds none.
  void Release(const std::string& uid) {
    const auto entry = pods_.find(uid);
    if (entry == pods_.end()) return;
    const int vm = entry->second.vm;
    const int gpu = cluster_->LocationOf(vm).gpu;
    reserved_.erase(uid);
    uid_of_vm_[vm].clear();
    pods_.erase(entry);
    if (gpu < 0) return;
    (void)cluster_->Release(vm);
    placer_->Released(vm, gpu, *cluster_);
  }

  // Gives `uid` back the hold `entry` at `where`, which Release() freed just
  // before (nothing took the slot since).
  void Restore(const std::string& uid, const Entry& entry, VmLocation where) {
    (void)cluster_->Place(entry.vm, where.gpu, where.start);
    placer_->Adopted(entry.vm, *cluster_);
    uid_of_vm_[entry.vm] = uid;
    pods_[uid] = entry;
    if (entry.state == State::kReserved) reserved_.insert(uid);
  }

  void ExpireReservations() {
    const double now = options_.clock->NowMs();
    std::vector<std::string> expired;
    for (const std::string& uid : reserved_) {
      if (pods_.at(uid).deadline_ms < now) expired.push_back(uid);
    }
    for (const std::string& uid : expired) Release(uid);
    counters_.reservations_expired += static_cast<long long>(expired.size());
  }

  std::string NodeOfVm(int vm) const {
    const int gpu = cluster_->LocationOf(vm).gpu;
    return gpu < 0 ? "" : nodes_[cluster_->HostOf(gpu)].name;
  }

  PodPlacement PlacementOf(const std::string& uid, const Entry& entry) const {
    const VmLocation where = cluster_->LocationOf(entry.vm);
    const int host = cluster_->HostOf(where.gpu);
    const VmRequest& vm = trace_.vms[entry.vm];
    return {uid,
            entry.ns,
            entry.name,
            nodes_[host].name,
            where.gpu - cluster_->FirstGpuOf(host),
            where.start,
            model_.profiles[vm.profile].name,
            vm.cpu_milli,
            vm.memory_mib};
  }

  Status AdoptLocked(const PodPlacement& pod) {
    const std::string who = "pod " + pod.ns + "/" + pod.name;
    const auto profile = profile_index_.find(pod.profile);
    if (profile == profile_index_.end()) {
      ++counters_.adopt_conflicts;
      return Status::InvalidArgument(who + ": annotated profile '" + pod.profile + "' is not a " +
                                     model_.name + " profile");
    }
    // The pod's hold elsewhere, given up for the annotated slot (the
    // annotations are the truth) and taken back if that slot is refused.
    std::optional<std::pair<Entry, VmLocation>> previous;
    if (const auto entry = pods_.find(pod.uid); entry != pods_.end()) {
      const PodPlacement held = PlacementOf(pod.uid, entry->second);
      if (held.node == pod.node && held.gpu == pod.gpu && held.start == pod.start &&
          held.profile == pod.profile) {
        entry->second.state = State::kBound;
        reserved_.erase(pod.uid);
        return Status::Ok();
      }
      previous.emplace(entry->second, cluster_->LocationOf(entry->second.vm));
    }
    const auto host = host_of_.find(pod.node);
    if (host == host_of_.end()) {
      Release(pod.uid);
      waiting_[pod.uid] = pod;
      return Status::Ok();
    }
    if (pod.gpu >= nodes_[host->second].gpus) {
      ++counters_.adopt_conflicts;
      return Status::InvalidArgument(who + ": annotated GPU " + std::to_string(pod.gpu) +
                                     " is beyond node " + pod.node + "'s " +
                                     std::to_string(nodes_[host->second].gpus) + " GPUs");
    }
    Release(pod.uid);
    const int vm = NewVm({pod.uid, pod.ns, pod.name, pod.profile, pod.cpu_milli, pod.memory_mib},
                         static_cast<int>(profile->second));
    const int gpu = cluster_->FirstGpuOf(host->second) + pod.gpu;
    Status placed = cluster_->Place(vm, gpu, pod.start);
    if (!placed.ok() && !cluster_->HostFits(host->second, trace_.vms[vm])) {
      // The node's CPU or RAM no longer covers the pods bound there (its
      // allocatable shrank): the pod runs there all the same and keeps its
      // slot; its CPU and RAM are left to kube-scheduler's accounting.
      trace_.vms[vm].cpu_milli = 0;
      trace_.vms[vm].memory_mib = 0;
      placed = cluster_->Place(vm, gpu, pod.start);
    }
    if (!placed.ok()) {
      DropUnplacedVm(vm);
      if (previous) Restore(pod.uid, previous->first, previous->second);
      ++counters_.adopt_conflicts;
      return Status::InvalidArgument(who + ": annotated slot GPU " + std::to_string(pod.gpu) +
                                     " start " + std::to_string(pod.start) + " on node " +
                                     pod.node + " cannot be taken: " + placed.message());
    }
    placer_->Adopted(vm, *cluster_);
    waiting_.erase(pod.uid);
    pods_[pod.uid] = {vm, pod.ns, pod.name, State::kBound, 0, ++tickets_};
    ++counters_.adopted;
    return Status::Ok();
  }

  // A new cluster of `nodes` (sorted by name), the policy started afresh, and
  // every pod that holds a slot on a node still there placed again where it
  // is (bound pods of a node that left wait for it to return; reservations
  // there are dropped). Requests are renumbered in their old order.
  void Rebuild(std::vector<KubeNode> nodes) {
    struct Held {
      std::string uid;
      Entry entry;
      PodPlacement placement;
    };
    std::vector<Held> held;
    for (const auto& [uid, entry] : pods_) held.push_back({uid, entry, PlacementOf(uid, entry)});
    std::sort(held.begin(), held.end(),
              [](const Held& a, const Held& b) { return a.entry.vm < b.entry.vm; });

    nodes_ = std::move(nodes);
    host_of_.clear();
    trace_.hosts.clear();
    for (size_t h = 0; h < nodes_.size(); ++h) {
      host_of_[nodes_[h].name] = static_cast<int>(h);
      trace_.hosts.push_back(
          {nodes_[h].name, nodes_[h].cpu_milli, nodes_[h].memory_mib, nodes_[h].gpus});
    }
    trace_.vms.clear();
    uid_of_vm_.clear();
    pods_.clear();
    reserved_.clear();
    offered_.assign(nodes_.size(), false);
    cluster_ = std::make_unique<OnlineCluster>(trace_);
    placer_ = BuiltinPlacers().Create(options_.policy, options_.placer).value();
    placer_->Start(*cluster_);
    std::vector<PodPlacement> waiting;
    for (auto& [uid, pod] : waiting_) waiting.push_back(pod);
    for (Held& h : held) {
      if (host_of_.count(h.placement.node) == 0) {
        if (h.entry.state == State::kBound) waiting_[h.uid] = h.placement;
        continue;
      }
      if (!AdoptLocked(h.placement).ok()) continue;
      Entry& entry = pods_[h.uid];
      entry.state = h.entry.state;
      entry.deadline_ms = h.entry.deadline_ms;
      entry.ticket = h.entry.ticket;
      if (entry.state == State::kReserved) reserved_.insert(h.uid);
      --counters_.adopted;  // not news from the API server
    }
    for (const PodPlacement& pod : waiting) {
      if (host_of_.count(pod.node) == 0) continue;
      waiting_.erase(pod.uid);  // its node is here: taken now or refused for good
      (void)AdoptLocked(pod);
    }
  }

  ExtenderOptions options_;
  const GpuModel& model_;
  KubeApi& api_;
  std::map<std::string, size_t> profile_index_;  // name -> index, no +me profiles

  mutable std::mutex mutex_;
  bool synced_ = false;
  std::vector<KubeNode> nodes_;  // by name: the policy's host order
  std::unordered_map<std::string, int> host_of_;
  VmTrace trace_;  // hosts = nodes_, requests = pods seen since the last rebuild
  std::unique_ptr<OnlineCluster> cluster_;
  std::unique_ptr<OnlinePlacer> placer_;
  std::vector<bool> offered_;                    // per host, for RestrictHosts
  std::vector<std::string> uid_of_vm_;           // "" once released
  std::unordered_map<std::string, Entry> pods_;  // pods holding a slot, by UID
  std::set<std::string> reserved_;               // the UIDs of pods_ in State::kReserved
  std::map<std::string, PodPlacement> waiting_;  // bound pods of unknown nodes
  std::uint64_t tickets_ = 0;                    // the last Entry::ticket given
  ExtenderCounters counters_;
};

Result<std::unique_ptr<SchedulerExtender>> SchedulerExtender::Create(ExtenderOptions options,
                                                                     KubeApi& api) {
  if (Status valid = options.Validate(); !valid.ok()) return valid;
  TESSERA_ASSIGN_OR_RETURN(const GpuModel* model, FindMigGpu(options.gpu));
  return std::unique_ptr<SchedulerExtender>(
      new SchedulerExtender(std::make_unique<Impl>(std::move(options), *model, api)));
}

SchedulerExtender::SchedulerExtender(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SchedulerExtender::~SchedulerExtender() = default;

Result<std::string> SchedulerExtender::Filter(std::string_view body) { return impl_->Filter(body); }
Result<std::string> SchedulerExtender::Prioritize(std::string_view body) {
  return impl_->Prioritize(body);
}
Result<std::string> SchedulerExtender::Bind(std::string_view body) { return impl_->Bind(body); }
void SchedulerExtender::SyncNodes(std::vector<KubeNode> nodes) {
  impl_->SyncNodes(std::move(nodes));
}
void SchedulerExtender::UpsertNode(KubeNode node) { impl_->UpsertNode(std::move(node)); }
void SchedulerExtender::RemoveNode(const std::string& name) { impl_->RemoveNode(name); }
void SchedulerExtender::SyncBoundPods(const std::vector<PodPlacement>& pods) {
  impl_->SyncBoundPods(pods);
}
Status SchedulerExtender::Adopt(const PodPlacement& pod) { return impl_->Adopt(pod); }
void SchedulerExtender::Forget(const std::string& uid) { impl_->Forget(uid); }
void SchedulerExtender::MarkSynced() { impl_->MarkSynced(); }
bool SchedulerExtender::synced() const { return impl_->synced(); }
std::vector<PodPlacement> SchedulerExtender::Placements() const { return impl_->Placements(); }
std::optional<SchedulerExtender::NodeSlices> SchedulerExtender::NodeState(
    const std::string& name) const {
  return impl_->NodeState(name);
}
const GpuModel& SchedulerExtender::gpu() const { return impl_->gpu(); }
json SchedulerExtender::StateJson() const { return impl_->StateJson(); }
ExtenderCounters SchedulerExtender::counters() const { return impl_->counters(); }
Status SchedulerExtender::CheckInvariants() const { return impl_->CheckInvariants(); }

}  // namespace tessera
