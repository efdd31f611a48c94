// Deployment artifacts: every file `tessera deploy` writes for a MIG plan,
// built in memory so that the CLI only writes them (docs/deployment.md):
//
//   nodes/<node>.json                 the NodePlan of each node (node_plan.h)
//   triton/<service>/config.pbtxt     Triton's model configuration at the
//                                     service's largest batch
//   triton/<service>/configs/b<B>.pbtxt  one custom configuration per batch
//                                     the service's instances use (Triton's
//                                     --model-config-name b<B>)
//   mig-parted.yaml                   one mig-parted config per node
//                                     ("tessera-<node>"): MIG mode and profile
//                                     counts only; mig-parted cannot pin
//                                     placements, `tessera agent` does
//   k8s/00-namespace.yaml             the Namespace
//   k8s/10-nodeplan-<node>.yaml       one ConfigMap per node (nodeplan.json)
//   k8s/20-agent-daemonset.yaml       the node agent's DaemonSet
//   router/haproxy.cfg                the router (router_config.h), each
//                                     process at <node>:<its http port>
//   k8s/30-service-<service>.yaml     one Service per model: port 8000 of
//                                     the router's frontend for the model
//   k8s/35-router-config.yaml         the router's ConfigMap (haproxy.cfg,
//                                     each process behind its Service)
//   k8s/36-router.yaml                the router's Deployment (HAProxy)
//   k8s/37-router-metrics.yaml        the router's metrics Service (8404)
//   k8s/40-serving-<process>.yaml     one Deployment per serving process
//   k8s/45-process-<process>.yaml     one Service per serving process
//
// Triton's queue delay (QueueDelayMicros): the plan rule's QueueDelayMs
// (latency_rule.h), the simulator's batcher's: the batch budget less the
// planned batch's latency, floored at 0, in whole microseconds (rounded
// down).
//
// Names: every Kubernetes name is a DNS-1123 label (KubernetesName); two
// services whose names map to one label are an InvalidArgument naming both.
// Service names also name directories (triton/<service>/): a name that is
// empty, "." or "..", or holds '/', a control character or a NUL is an
// InvalidArgument.
//
// Output is deterministic: files in a fixed order, YAML and pbtxt written
// by Tessera's own small writers.
//
// Thread-safety: values and pure functions.
#ifndef TESSERA_DEPLOY_ARTIFACTS_H_
#define TESSERA_DEPLOY_ARTIFACTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/emit/node_plan.h"
#include "tessera/status.h"

namespace tessera {

// One file: its path relative to the output directory, and its content.
struct DeployFile {
  std::string path;
  std::string content;
};

struct DeployArtifactOptions {
  DeployOptions deploy;  // nodes, serving settings, gpu_map
  std::string namespace_name = "tessera";
  std::string agent_image = "tessera:0.1.0";
  std::string triton_image = "nvcr.io/nvidia/tritonserver:24.08-py3";
  // The host directory holding the NVIDIA driver's user-space libraries; the
  // agent loads <dir>/libnvidia-ml.so.1.
  std::string driver_lib_dir = "/usr/lib/x86_64-linux-gnu";
  // The agent's --state-dir; it writes <state_dir>/mig/gpu<g>-start<s>.uuid.
  std::string state_dir = "/var/lib/tessera";
  // The router (router_config.h): its image, and the port of the first
  // service's frontend (the next services' follow, in deployment order).
  std::string router_image = "haproxy:2.6";
  int router_base_port = 9000;
};

// True iff `name` is a DNS-1123 label: 1 to 63 characters of [a-z0-9-],
// starting and ending with a letter or digit.
bool IsDns1123Label(std::string_view name);

// `name` as a DNS-1123 label: lower case, every run of other characters
// than [a-z0-9] one '-', no '-' at either end ("BERT_large" ->
// "bert-large"); longer than `max_length` (<= 63, >= 16): cut and ended with
// '-' and 8 hex digits of a stable hash of `name`; nothing left: "x-" and
// that hash.
std::string KubernetesName(std::string_view name, size_t max_length = 63);

// The where the agent writes the MIG device UUID of the instance at `start`
// on local GPU `gpu`: "<state_dir>/mig/gpu<gpu>-start<start>.uuid".
std::string MigUuidPath(std::string_view state_dir, int gpu, int start);

// The outcome of `instance`'s service in deployment.services;
// InvalidArgument naming the service when it is not there.
Result<const ServiceOutcome*> ServiceOfInstance(const Deployment& deployment,
                                                const Instance& instance);

// Triton's max_queue_delay_microseconds for `instance` of `deployment`
// (rule above; the SLO truncated first under the rule's truncate_slo).
// InvalidArgument when the service is not in deployment.services.
Result<int64_t> QueueDelayMicros(const Deployment& deployment, const Instance& instance);

// The Triton model configuration (protobuf text) of `service` at `batch`.
std::string FormatTritonConfig(std::string_view service, int batch, int64_t queue_delay_us);

// The triton/ files of the listing above for every service with instances,
// in deployment order, batches ascending. InvalidArgument for a service
// name that cannot name a directory, or an instance of a service not in
// deployment.services. Instances may overlap (a transition's lives).
Result<std::vector<DeployFile>> BuildTritonConfigs(const Deployment& deployment);

// mig-parted's config file for `plans` (one config per node).
std::string FormatMigPartedYaml(const std::vector<NodePlan>& plans);

// Every artifact, in the order of the listing above (nodes by index,
// services in deployment order, batches ascending). InvalidArgument for a
// plan whose router cannot be shipped (CheckShippable: jsq), a router port
// past 65535,
// what BuildNodePlans rejects, a bad name (above), a namespace that is not
// a DNS-1123 label, an image that is empty or holds whitespace, or a
// directory (driver_lib_dir, state_dir, model repository, MPS root) that is
// not an absolute path.
Result<std::vector<DeployFile>> BuildDeployArtifacts(const Deployment& deployment,
                                                     const DeployArtifactOptions& options);

}  // namespace tessera

#endif  // TESSERA_DEPLOY_ARTIFACTS_H_
