// NodePlan: what one node must run for a MIG deployment to be real, and the
// file the node agent reconciles its node to (`tessera deploy` writes one per
// node as DIR/nodes/<node>.json; docs/deployment.md).
//
// Nodes: a deployment's cluster GPU `index` lies on node index / G, as its
// local GPU index % G (G = gpus_per_node, 8 by default), which is the NVML
// device index on that node. Node k is named names[k] when names are given,
// else "node-<k>". Spare GPUs of a transition follow the same rule.
//
// Per GPU: its MIG instances (profile, its nvidia-smi ID, start memory
// slice). Per instance: one MPS control daemon (its own pipe and log
// directories under serving.mps_root) and `procs` serving processes, each a
// Triton server of the service's model at the instance's batch, with its own
// ports and CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = ceil(100 / procs). The
// serving command is a template (ServingSettings::command) whose
// placeholders ExpandCommand fills; the NodePlan also carries each process's
// expanded argv so that a person can read what runs.
//
// Ports: process p of the instance at `start` of local GPU g gets
// http = base_port + 3 k, grpc = http + 1, metrics = http + 2, with
// k = (g * 8 + start) * kMaxProcessesPerInstance + p: unique on a node, and
// a function of the place alone, so a transition's create step gets the same
// ports as the NodePlan lists for that instance.
//
// MIG UUID files: once an instance exists, the agent (--state-dir D) writes
// its MIG device UUID to D/mig/gpu<g>-start<s>.uuid (MigUuidPath,
// deploy_artifacts.h); the serving pods of `tessera deploy` read it for
// CUDA_VISIBLE_DEVICES (docs/deployment.md).
//
// JSON ("format": "tessera-nodeplan", "version": 1): 2-space indent, a final
// newline, doubles rounded to 4 decimals (integers when integral).
//
// Thread-safety: values and pure functions.
#ifndef TESSERA_NODE_PLAN_H_
#define TESSERA_NODE_PLAN_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/gpu_catalog.h"
#include "tessera/status.h"

namespace tessera {

// The most serving processes one MIG instance runs (MPS's client limit).
inline constexpr int kMaxProcessesPerInstance = 48;

// How serving processes and MPS daemons are started on a node.
struct ServingSettings {
  std::string model_repository = "/models";   // Triton's --model-repository
  int base_port = 20000;                      // first port of the node's processes
  std::string mps_root = "/run/tessera/mps";  // <root>/gpu<g>-start<s>/{pipe,log}
  // argv templates; placeholders (ExpandCommand): {model_repository},
  // {model} (the Triton model name: the service), {model_config} ("b<batch>",
  // Triton's --model-config-name), {batch}, {http_port}, {grpc_port},
  // {metrics_port}, {service}, {gpu}, {start}, {process}, {pipe_directory},
  // {log_directory}, {profile} (the instance's MIG profile), {procs} (its
  // MPS processes).
  std::vector<std::string> command = {"tritonserver",
                                      "--model-repository={model_repository}",
                                      "--model-control-mode=explicit",
                                      "--load-model={model}",
                                      "--model-config-name={model_config}",
                                      "--http-port={http_port}",
                                      "--grpc-port={grpc_port}",
                                      "--metrics-port={metrics_port}"};
  std::vector<std::string> mps_command = {"nvidia-cuda-mps-control", "-d"};
};

struct NodeProcess {
  int index = 0;     // 0 .. procs - 1 within its instance
  std::string name;  // unique on the node: "<service>-gpu<g>-start<s>-p<index>"
  int batch = 1;
  int active_thread_percentage = 100;  // CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
  int http_port = 0;
  int grpc_port = 0;
  int metrics_port = 0;
  std::string model_config;          // "b<batch>"
  std::vector<std::string> command;  // ExpandCommand(serving.command, ...)
};

// One MIG instance of the plan as its node runs it: the plan's instance and
// what the node needs beside it.
struct NodeInstance {
  Instance instance;   // profile, start, service, model, batch, procs, predictions
  int profile_id = 0;  // nvidia-smi / NVML profile ID
  int memory_slices = 0;
  int compute_slices = 0;
  std::string pipe_directory;  // CUDA_MPS_PIPE_DIRECTORY of its daemon and clients
  std::string log_directory;   // CUDA_MPS_LOG_DIRECTORY of its daemon
  std::vector<NodeProcess> processes;
};

struct NodeGpu {
  int index = 0;                        // local: the NVML device index on the node
  int cluster_index = 0;                // the deployment's (or transition's) GPU index
  std::vector<NodeInstance> instances;  // sorted by start
};

struct NodePlan {
  std::string node;  // node name
  int node_index = 0;
  int gpus_per_node = 8;
  std::string gpu;  // catalog GPU model of every GPU of the node
  ServingSettings serving;
  std::vector<NodeGpu> gpus;  // GPUs holding instances, by local index
};

struct DeployOptions {
  int gpus_per_node = 8;
  std::vector<std::string> node_names;  // names[k] for node k; empty: "node-<k>"
  ServingSettings serving;
  // B's GPU index -> cluster GPU index (a transition's gpu_map), applied
  // before nodes are formed; empty: the deployment's own indices.
  std::map<int, int> gpu_map;
};

// The node name of node `k`.
std::string NodeName(const DeployOptions& options, int k);

// One NodePlan per node that holds an instance, in node order.
// InvalidArgument for an MPS deployment (GPUs shared whole have no MIG
// instances to run), a profile the catalog does not know for the GPU, a
// GPU index that gpu_map does not map, fewer node names than nodes, or a
// name that is not a DNS-1123 label.
Result<std::vector<NodePlan>> BuildNodePlans(const Deployment& deployment,
                                             const DeployOptions& options);

// The node instance for a plan instance on local GPU `local_gpu`: what
// BuildNodePlans lists for it, and what the agent runs for a transition's
// create step (the step's service, model, batch, procs and throughput).
Result<NodeInstance> BuildNodeInstance(const ServingSettings& serving, const GpuModel& gpu,
                                       int local_gpu, const Instance& instance);

// `command` with every placeholder filled from the process, its instance and
// the settings. InvalidArgument naming an unknown "{...}" placeholder.
Result<std::vector<std::string>> ExpandCommand(const std::vector<std::string>& command,
                                               const ServingSettings& serving,
                                               const NodeInstance& instance,
                                               const NodeProcess& process, int local_gpu);

std::string FormatNodePlanJson(const NodePlan& plan);

// Strict, as every Tessera JSON parser: unknown, duplicate or missing keys,
// wrong types, numbers outside their input limits, a GPU model or profile
// the catalog does not know, a profile_id, memory_slices or compute_slices
// that contradicts the catalog, an instance overlapping another on its GPU or
// at a start the profile does not allow, a local GPU index outside
// 0..gpus_per_node - 1, a processes list whose length is not procs or whose
// index is not its position, duplicate local GPU indices or process names,
// and ports out of 1..65535 or used twice are InvalidArgument naming `source`
// and the JSON path, e.g. "n.json: gpus[0].instances[1].start: ...".
Result<NodePlan> ParseNodePlanJson(std::string_view text, std::string_view source);

}  // namespace tessera

#endif  // TESSERA_NODE_PLAN_H_
