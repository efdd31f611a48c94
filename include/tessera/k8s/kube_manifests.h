// Kubernetes documents for running Tessera's scheduler extender
// (docs/kubernetes.md):
//  - the KubeSchedulerConfiguration that points kube-scheduler at the
//    extender: its filter, prioritize and bind verbs, nodeCacheCapable, one
//    managed resource tessera.io/mig-<profile> (ignoredByScheduler) per MIG
//    profile of the catalog, and a weight that lets the policy's choice
//    outweigh every scoring plugin;
//  - a VM trace (Alibaba node and pod lists, `tessera replay`'s input) as
//    Node and Pod objects in trace order, so that the same sequence can be
//    replayed offline and submitted to a real cluster.
//
// Thread-safety: pure functions.
#ifndef TESSERA_KUBE_MANIFESTS_H_
#define TESSERA_KUBE_MANIFESTS_H_

#include <nlohmann/json.hpp>
#include <string>

#include "tessera/online/vm_trace.h"

namespace tessera {

struct SchedulerConfigOptions {
  std::string extender_url = "http://127.0.0.1:8080/scheduler";  // urlPrefix
  std::string kubeconfig;  // clientConnection.kubeconfig; "" leaves it out
  bool leader_elect = true;
  // kube-scheduler adds weight x score x 10 (its 0-100 scale over the
  // extender's 0-10); 100 puts the policy's node 10,000 ahead, above the
  // ~1,300 that every default scoring plugin can add.
  int weight = 100;
  int http_timeout_s = 5;
};

// The `percentageOfNodesToScore: 100` and `extenders:` part of a
// KubeSchedulerConfiguration (to append to one).
std::string SchedulerExtenderYaml(const SchedulerConfigOptions& options);
// A whole KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1).
std::string SchedulerConfigYaml(const SchedulerConfigOptions& options);

// Every tessera.io/mig-<profile> resource name the configuration manages:
// the catalog's MIG profiles without media extensions, sorted, unique.
std::vector<std::string> ManagedMigResources();

struct ManifestOptions {
  std::string ns = "default";
  std::string image = "registry.k8s.io/pause:3.10";
  bool nodes = true;
  bool pods = true;
};

// {"apiVersion": "v1", "kind": "List", "items": [Nodes in trace order, then
// Pods in arrival order]}. A Node carries the label tessera.io/gpus, its CPU
// and memory as capacity and allocatable, room for every pod of the trace,
// and a Ready condition; a Pod asks for one tessera.io/mig-<profile> (limit
// 1) and its CPU and memory (requests). Names are the trace's, lowercased,
// with characters Kubernetes refuses replaced by '-'.
nlohmann::json TraceAsKubeObjects(const VmTrace& trace, const ManifestOptions& options);

}  // namespace tessera

#endif  // TESSERA_KUBE_MANIFESTS_H_
