// SchedulerExtender: Tessera's online MIG placement policies behind
// kube-scheduler's extender protocol (docs/kubernetes.md). A pod asks for
// one MIG slice with the extended resource `tessera.io/mig-<profile>`
// (`tessera.io/mig-3g.40gb: 1`); the extender decides the node, the GPU on
// it and the start slice, with the same OnlinePlacer code as `tessera
// replay`.
//
// The protocol (kube-scheduler's extender/v1 JSON, field names as Go writes
// them):
//  - Filter(ExtenderArgs {Pod, Nodes | NodeNames}) -> ExtenderFilterResult
//    {Nodes | NodeNames, FailedNodes, FailedAndUnresolvableNodes, Error}.
//    The policy places the pod among the offered nodes that have a legal
//    free placement and the pod's CPU and RAM free; its choice is reserved
//    for the pod (kube-scheduler binds asynchronously, so the next pod's
//    filter must already see it). The kept nodes are those with a legal free
//    placement; when the policy declines the pod (GRMU's basket caps), every
//    node fails with that reason. A pod without a tessera.io/mig-* resource
//    passes every node untouched.
//  - Prioritize(ExtenderArgs) -> HostPriorityList [{Host, Score}]: the
//    policy's node scores kMaxExtenderScore, every other node 0 (with the
//    extender's weight above the plugins' scores, the scheduler takes the
//    policy's node).
//  - Bind(ExtenderBindingArgs {PodName, PodNamespace, PodUID, Node}) ->
//    ExtenderBindingResult {Error}: commits the reservation (or places the
//    pod on Node by the policy when it has none, e.g. after a restart), then
//    creates the Binding through the API server with the annotations
//    tessera.io/gpu (local GPU index, the NVML index on the node),
//    tessera.io/mig-start (first memory slice) and tessera.io/mig-profile.
//    The API call runs outside the extender's lock; until it returns the
//    slot counts as taken.
//
// Cluster state: nodes carry the label tessera.io/gpus (the number of GPUs
// of the extender's model); nodes are ordered by name (host order of the
// policies, as a node list's order in `tessera replay`). Pods bound by
// Tessera are known by their annotations, which are the truth: ClusterWatch
// (cluster_watch.h) lists and watches the API server and calls Sync*/Adopt/
// Forget; a restarted extender rebuilds every placement from them before it
// answers (until MarkSynced, Filter answers an Error that the scheduler
// retries). A node change rebuilds the policy's state from the placements
// (OnlinePlacer::Adopted).
//
// Pods never move once bound, so the policy runs without migrations
// (GRMU's defragmentation and consolidation are off).
//
// Thread-safety: every method may be called from several threads (the HTTP
// server's workers and the watch threads); one mutex guards the state.
#ifndef TESSERA_SCHEDULER_EXTENDER_H_
#define TESSERA_SCHEDULER_EXTENDER_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/online/online_placer.h"
#include "tessera/status.h"
#include "tessera/util/clock.h"

namespace tessera {

inline constexpr std::string_view kMigResourcePrefix = "tessera.io/mig-";
inline constexpr std::string_view kGpusLabel = "tessera.io/gpus";
inline constexpr std::string_view kGpuAnnotation = "tessera.io/gpu";
inline constexpr std::string_view kStartAnnotation = "tessera.io/mig-start";
inline constexpr std::string_view kProfileAnnotation = "tessera.io/mig-profile";
// kube-scheduler's MaxExtenderPriority.
inline constexpr int kMaxExtenderScore = 10;

// A node Tessera places on: its tessera.io/gpus label and its allocatable
// CPU and memory.
struct KubeNode {
  std::string name;
  int gpus = 0;
  double cpu_milli = 0;
  double memory_mib = 0;
};

// A Node object as a KubeNode; nullopt when it has no tessera.io/gpus label
// (not a node of Tessera's); InvalidArgument naming the field when the label
// or a quantity is malformed.
Result<std::optional<KubeNode>> KubeNodeFromObject(const nlohmann::json& node);

// Parses a Kubernetes quantity ("500m", "4", "16Gi", "1.5G") into units
// (cores, bytes). InvalidArgument naming `field` when malformed.
Result<double> ParseKubeQuantity(std::string_view text, std::string_view field);

// What a pod asks of Tessera: one MIG slice of `profile` plus CPU and RAM.
struct PodSlice {
  std::string uid;
  std::string ns;  // namespace
  std::string name;
  std::string profile;  // as written after tessera.io/mig- (may be unknown)
  double cpu_milli = 0;
  double memory_mib = 0;
};

// A Pod object as a PodSlice: its containers' tessera.io/mig-* resources
// (limits, or requests when no limit) must total exactly one slice of one
// profile; CPU and memory are the containers' requests. nullopt when the pod
// asks for no tessera.io/mig-* resource; InvalidArgument naming the field
// otherwise (two profiles, a count other than 1, a bad quantity).
Result<std::optional<PodSlice>> PodSliceFromObject(const nlohmann::json& pod);

// Where a pod's slice is: node, local GPU index, start slice.
struct PodPlacement {
  std::string uid;
  std::string ns;
  std::string name;
  std::string node;
  int gpu = 0;
  int start = 0;
  std::string profile;
  double cpu_milli = 0;  // the pod's CPU and memory requests
  double memory_mib = 0;
};

// A bound pod's placement from spec.nodeName and Tessera's annotations;
// nullopt when the pod carries none of them, is not bound, or has finished
// (phase Succeeded or Failed: its slot is free); InvalidArgument
// naming the annotation when they are partial or malformed.
Result<std::optional<PodPlacement>> PlacementFromPod(const nlohmann::json& pod);

// What the extender needs of the API server.
class KubeApi {
 public:
  virtual ~KubeApi() = default;
  // The Pod object (for a bind without a reservation).
  virtual Result<nlohmann::json> GetPod(const std::string& ns, const std::string& name) = 0;
  // Binds the pod to placement.node with Tessera's annotations (one POST of
  // a Binding, precondition on the pod's UID).
  virtual Status Bind(const PodPlacement& placement) = 0;
};

struct ExtenderOptions {
  std::string gpu = "A100-80GB";  // catalog GPU model of every node's GPUs
  std::string policy = "grmu";    // a BuiltinPlacers() name
  PlacerOptions placer;           // migrations are turned off whatever it says
  // Seconds a filter's reservation waits for its bind before it is freed.
  double reservation_ttl_s = 30;
  const Clock* clock = &SystemClock();

  // InvalidArgument naming the field (an unknown GPU or one without MIG, an
  // unknown policy, a bad TTL).
  Status Validate() const;
};

// Counters for /metrics and the state JSON.
struct ExtenderCounters {
  long long filters = 0;
  long long prioritizes = 0;
  long long binds = 0;
  long long bind_failures = 0;
  long long declined = 0;  // pods the policy or the cluster could not place
  long long reservations_expired = 0;
  long long adopted = 0;  // bound pods learnt from the API server
  long long adopt_conflicts = 0;
};

class SchedulerExtender {
 public:
  // `api` must outlive the extender.
  static Result<std::unique_ptr<SchedulerExtender>> Create(ExtenderOptions options, KubeApi& api);
  ~SchedulerExtender();

  // ---- The protocol: each verb takes the request body as kube-scheduler
  // sent it and returns the answer's JSON text. Neither side builds a JSON
  // tree of the node names: over thousands of nodes that would cost more
  // than the decision. InvalidArgument (HTTP 400) names the syntax error or
  // the bad field of a malformed body; the answers themselves carry the
  // scheduling outcome.
  Result<std::string> Filter(std::string_view body);
  Result<std::string> Prioritize(std::string_view body);
  Result<std::string> Bind(std::string_view body);

  // ---- Cluster state, fed by ClusterWatch.
  // Replaces the node set (a list); nodes that left lose their pods.
  void SyncNodes(std::vector<KubeNode> nodes);
  void UpsertNode(KubeNode node);
  void RemoveNode(const std::string& name);
  // Replaces the set of bound pods (a list): adopts each, forgets bound pods
  // absent from it (pods reserved or being bound are kept).
  void SyncBoundPods(const std::vector<PodPlacement>& pods);
  // A bound pod seen on the API server takes its slot. InvalidArgument (and
  // nothing changes) when the slot is illegal or taken by another pod; a pod
  // on a node not known yet waits for that node.
  Status Adopt(const PodPlacement& pod);
  // A pod deleted or finished: its slot is free.
  void Forget(const std::string& uid);
  // The state is complete (the first lists are in): Filter answers.
  void MarkSynced();
  bool synced() const;

  // Every pod holding a slot (reserved, binding or bound), by node, GPU and
  // start.
  std::vector<PodPlacement> Placements() const;
  // One node and the pods holding a slot on it (by GPU and start), read from
  // that node's GPUs alone; nullopt when it is not a node of the extender's.
  struct NodeSlices {
    KubeNode node;
    std::vector<PodPlacement> pods;
  };
  std::optional<NodeSlices> NodeState(const std::string& name) const;
  // The catalog model of every node's GPUs.
  const GpuModel& gpu() const;
  // {"gpu", "policy", "synced", "waiting_for_node", "trace_requests" (the
  // policy's requests held in memory), "counters", "nodes": [{"name", "gpus",
  // "pods": [{"uid", "namespace", "name", "gpu", "start", "profile",
  // "state"}]}]}, for GET /scheduler/state.
  nlohmann::json StateJson() const;
  ExtenderCounters counters() const;
  // Re-derives occupancy from the placements; Internal on a contradiction.
  Status CheckInvariants() const;

  class Impl;

 private:
  explicit SchedulerExtender(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_SCHEDULER_EXTENDER_H_
