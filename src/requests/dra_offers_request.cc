// The DRA driver's offers: the log replayed through the policy, then one
// more VM of each profile asked for (dra_offers_request.h).
#include "tessera/dra_offers_request.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "tessera/online/online_cluster.h"
#include "tessera/online/vm_trace.h"
#include "util/json_reader.h"
#include "util/json_structure.h"

namespace tessera {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kSource = "body";
constexpr InputRange kNodeGpus{1, 64, false, true};
constexpr size_t kMaxNodes = 100'000;
constexpr int kMaxGpus = 100'000;
constexpr size_t kMaxEvents = 1'000'000;
// Hosts give the kube-scheduler's CPU and memory no say here.
constexpr double kUnlimited = 1e15;

Result<DraEvent> EventFromJson(const JsonReader& r, const Json& j, const std::string& path) {
  static constexpr std::array<std::string_view, 2> kRequired = {"op", "claim"};
  static constexpr std::array<std::string_view, 4> kOptional = {"profile", "node", "gpu", "start"};
  TESSERA_RETURN_IF_ERROR(r.Keys(j, path, kRequired, kOptional));
  DraEvent event;
  TESSERA_ASSIGN_OR_RETURN(const std::string op, r.String(j, path, "op", true));
  TESSERA_ASSIGN_OR_RETURN(event.claim, r.String(j, path, "claim", true));
  if (op == "release") {
    event.op = DraEvent::Op::kRelease;
    return event;
  }
  if (op != "place") {
    return r.Error(JoinJsonPath(path, "op"),
                   "must be \"place\" or \"release\", got " + DescribeJson(j["op"]));
  }
  for (std::string_view key : {"profile", "node", "gpu", "start"}) {
    if (!j.contains(key)) {
      return r.Error(JoinJsonPath(path, key), "missing: a place event names its placement");
    }
  }
  TESSERA_ASSIGN_OR_RETURN(event.profile, r.String(j, path, "profile", true));
  TESSERA_ASSIGN_OR_RETURN(event.node, r.String(j, path, "node", true));
  TESSERA_ASSIGN_OR_RETURN(event.gpu, r.Int(j, path, "gpu", 0));
  TESSERA_ASSIGN_OR_RETURN(event.start, r.Int(j, path, "start", 0));
  return event;
}

// An event with its names resolved against the request's cluster.
struct Resolved {
  const DraEvent* event = nullptr;
  int profile = -1;  // catalog index (place)
  int host = -1;     // -1: the node is not listed
  int gpu = -1;      // global GPU index; -1: not one of the node's GPUs
  int vm = -1;       // the VM of a place event
};

std::vector<std::string> ProfileNames(const CapabilityTable& table) {
  std::vector<std::string> names;
  for (int index : table.profiles()) names.push_back(table.gpu().profiles[index].name);
  return names;
}

// Whole MiB of `gib` GiB.
long long MemoryMib(double gib) { return std::llround(gib * 1024); }

// One replay of the log, then asked where one more VM would go.
class LogReplay {
 public:
  LogReplay(const VmTrace& trace, const std::vector<Resolved>& events,
            std::unique_ptr<OnlinePlacer> placer)
      : trace_(trace), events_(events), cluster_(trace_), placer_(std::move(placer)) {}

  void Run(DraOffers& counts) {
    placer_->Start(cluster_);
    std::map<std::string, int> resident;
    for (size_t i = 0; i < events_.size(); ++i) {
      const Resolved& e = events_[i];
      const std::string& claim = e.event->claim;
      const auto ignore = [&](std::string_view why) {
        counts.ignored.push_back(fmt::format("events[{}] ({}): {}", i, claim, why));
      };
      if (e.event->op == DraEvent::Op::kRelease) {
        const auto it = resident.find(claim);
        if (it == resident.end()) {
          ignore("released, but not placed");
          continue;
        }
        const int gpu = cluster_.LocationOf(it->second).gpu;
        (void)cluster_.Release(it->second);
        placer_->Released(it->second, gpu, cluster_);
        resident.erase(it);
        continue;
      }
      if (e.host < 0 || e.gpu < 0) {
        ignore(e.host < 0 ? "its node is not listed" : "its GPU is not one of the node's");
        continue;
      }
      if (resident.count(claim)) {
        ignore("placed twice");
        continue;
      }
      const bool placed = placer_->Place(trace_.vms[e.vm], cluster_);
      const VmLocation at = cluster_.LocationOf(e.vm);
      if (placed && at.gpu == e.gpu && at.start == e.event->start) {
        ++counts.followed;
        resident[claim] = e.vm;
        continue;
      }
      if (placed) {
        (void)cluster_.Release(e.vm);
        placer_->Released(e.vm, at.gpu, cluster_);
      }
      if (Status forced = cluster_.Place(e.vm, e.gpu, e.event->start); !forced.ok()) {
        ignore(forced.message());
        continue;
      }
      placer_->Adopted(e.vm, cluster_);
      ++counts.adopted;
      resident[claim] = e.vm;
    }
  }

  // Where the policy would put `vm` (not in the log) now, asked of a copy
  // of the cluster and a clone of the placer; gpu -1 when it refuses.
  VmLocation Ask(int vm) const {
    OnlineCluster cluster = cluster_;
    std::unique_ptr<OnlinePlacer> placer = placer_->Clone();
    if (!placer->Place(trace_.vms[vm], cluster)) return {};
    return cluster.LocationOf(vm);
  }

 private:
  const VmTrace& trace_;
  const std::vector<Resolved>& events_;
  OnlineCluster cluster_;
  std::unique_ptr<OnlinePlacer> placer_;
};

}  // namespace

Result<DraOffersRequest> ParseDraOffersRequest(std::string_view text) {
  if (std::string problem = CheckJsonStructure(text); !problem.empty()) {
    return Status::InvalidArgument(std::string(kSource) + ": " + problem);
  }
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(std::string(kSource) + ": not JSON");
  static constexpr std::array<std::string_view, 4> kRequired = {"gpu", "policy", "nodes", "events"};
  static constexpr std::array<std::string_view, 2> kOptional = {"heavy_share", "fair_factor"};
  const JsonReader r(kSource);
  TESSERA_RETURN_IF_ERROR(r.Keys(j, "", kRequired, kOptional));
  DraOffersRequest request;
  TESSERA_ASSIGN_OR_RETURN(request.gpu, r.String(j, "", "gpu", true));
  TESSERA_ASSIGN_OR_RETURN(request.policy, r.String(j, "", "policy", true));
  if (j.contains("heavy_share")) {
    TESSERA_ASSIGN_OR_RETURN(request.options.heavy_share,
                             r.In(j, "", "heavy_share", InputRange{0, 1}));
  }
  if (j.contains("fair_factor")) {
    TESSERA_ASSIGN_OR_RETURN(request.options.fair_factor,
                             r.In(j, "", "fair_factor", limits::kFairFactor));
  }
  TESSERA_RETURN_IF_ERROR(r.Array(j, "", "nodes"));
  if (j["nodes"].size() > kMaxNodes) {
    return r.Error("nodes", fmt::format("more than {} nodes", kMaxNodes));
  }
  for (size_t i = 0; i < j["nodes"].size(); ++i) {
    const std::string path = fmt::format("nodes[{}]", i);
    static constexpr std::array<std::string_view, 2> kNodeKeys = {"name", "gpus"};
    const Json& node = j["nodes"][i];
    TESSERA_RETURN_IF_ERROR(r.Keys(node, path, kNodeKeys));
    DraNode parsed;
    TESSERA_ASSIGN_OR_RETURN(parsed.name, r.String(node, path, "name", true));
    TESSERA_ASSIGN_OR_RETURN(parsed.gpus, r.IntIn(node, path, "gpus", kNodeGpus));
    request.nodes.push_back(std::move(parsed));
  }
  TESSERA_RETURN_IF_ERROR(r.Array(j, "", "events"));
  if (j["events"].size() > kMaxEvents) {
    return r.Error("events", fmt::format("more than {} events", kMaxEvents));
  }
  for (size_t i = 0; i < j["events"].size(); ++i) {
    TESSERA_ASSIGN_OR_RETURN(DraEvent event,
                             EventFromJson(r, j["events"][i], fmt::format("events[{}]", i)));
    request.events.push_back(std::move(event));
  }
  return request;
}

Result<DraOffers> RunDraOffers(const DraOffersRequest& request) {
  Result<const GpuModel*> gpu = FindMigGpu(request.gpu);
  if (!gpu.ok()) return gpu.status().WithContext("gpu");
  PlacerOptions options = request.options;
  options.defragment = false;
  options.consolidate_every_s = 0;
  TESSERA_RETURN_IF_ERROR(options.Validate());
  const auto make_placer = [&] { return BuiltinPlacers().Create(request.policy, options); };
  if (auto placer = make_placer(); !placer.ok()) return placer.status().WithContext("policy");

  VmTrace trace;
  trace.gpu = *gpu;
  std::map<std::string, int> host_of;
  std::vector<int> first_gpu;
  int gpus = 0;
  for (size_t i = 0; i < request.nodes.size(); ++i) {
    const DraNode& node = request.nodes[i];
    if (!kNodeGpus.Contains(node.gpus)) {
      return Status::InvalidArgument(
          fmt::format("nodes[{}].gpus: {}", i, OutOfRange(kNodeGpus, node.gpus)));
    }
    if (!host_of.emplace(node.name, static_cast<int>(i)).second) {
      return Status::InvalidArgument(
          fmt::format("nodes[{}].name: '{}' is listed twice", i, node.name));
    }
    trace.hosts.push_back({node.name, kUnlimited, kUnlimited, node.gpus});
    first_gpu.push_back(gpus);
    gpus += node.gpus;
    if (gpus > kMaxGpus) {
      return Status::InvalidArgument(
          fmt::format("nodes: more than {} GPUs in all (at nodes[{}])", kMaxGpus, i));
    }
  }
  const CapabilityTable table(**gpu);
  std::vector<Resolved> events;
  events.reserve(request.events.size());
  for (size_t i = 0; i < request.events.size(); ++i) {
    const DraEvent& event = request.events[i];
    Resolved resolved{&event};
    if (event.op == DraEvent::Op::kPlace) {
      resolved.profile = (*gpu)->ProfileIndex(event.profile);
      if (resolved.profile < 0 || table.Slot(resolved.profile) < 0) {
        return Status::InvalidArgument(
            fmt::format("events[{}].profile: unknown profile '{}' of {} (known: {})", i,
                        event.profile, (*gpu)->name, fmt::join(ProfileNames(table), ", ")));
      }
      if (const auto host = host_of.find(event.node); host != host_of.end()) {
        resolved.host = host->second;
        if (event.gpu < request.nodes[host->second].gpus) {
          resolved.gpu = first_gpu[host->second] + event.gpu;
        }
      }
      resolved.vm = static_cast<int>(trace.vms.size());
      trace.vms.push_back({resolved.vm, event.claim, resolved.profile, 0, 0, static_cast<double>(i),
                           kNeverDeparts});
    }
    events.push_back(resolved);
  }

  // One probe VM, given each profile in turn, after the log.
  const int probe = static_cast<int>(trace.vms.size());
  trace.vms.push_back({probe, "probe", 0, 0, 0, static_cast<double>(events.size()), kNeverDeparts});
  DraOffers out;
  out.gpu = *gpu;
  LogReplay replay(trace, events, make_placer().value());
  replay.Run(out);
  for (int profile : table.profiles()) {
    trace.vms[probe].profile = profile;
    const VmLocation at = replay.Ask(probe);
    if (at.gpu < 0) continue;
    const int host = static_cast<int>(std::upper_bound(first_gpu.begin(), first_gpu.end(), at.gpu) -
                                      first_gpu.begin() - 1);
    out.offers.push_back({(*gpu)->profiles[profile].name, request.nodes[host].name,
                          at.gpu - first_gpu[host], at.start});
  }
  return out;
}

std::string FormatDraOffersJson(const DraOffers& offers) {
  const GpuModel& gpu = *offers.gpu;
  const CapabilityTable table(gpu);
  nlohmann::ordered_json placements = nlohmann::ordered_json::array();
  for (int index : table.profiles()) {
    const MigProfile& p = gpu.profiles[index];
    for (int start : p.starts) {
      placements.push_back({{"profile", p.name},
                            {"profile_id", p.id},
                            {"start", start},
                            {"size", p.memory_slices},
                            {"compute_slices", p.compute_slices},
                            {"memory_mib", MemoryMib(p.memory_gib)}});
    }
  }
  nlohmann::ordered_json doc;
  doc["geometry"] = {{"model", gpu.name},
                     {"memory_slices", gpu.memory_slices},
                     {"compute_slices", gpu.compute_slices},
                     {"memory_mib", MemoryMib(gpu.memory_gib)},
                     {"placements", std::move(placements)}};
  doc["offers"] = nlohmann::ordered_json::array();
  for (const DraOffer& offer : offers.offers) {
    doc["offers"].push_back({{"profile", offer.profile},
                             {"node", offer.node},
                             {"gpu", offer.gpu},
                             {"start", offer.start}});
  }
  doc["followed"] = offers.followed;
  doc["adopted"] = offers.adopted;
  doc["ignored"] = offers.ignored;
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tessera
