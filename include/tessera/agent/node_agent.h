// The node agent: makes one node run its NodePlan (node_plan.h) through NVML
// (nvml.h), MPS control daemons and serving processes, and runs the node's
// part of a transition (transition.h) phase by phase. It applies plans and
// never makes them (docs/deployment.md, "The node agent").
//
// Reconcile: the agent observes the node (every GPU instance, compute
// instance and MIG UUID through NVML; every process it started, found by the
// environment it gave them, TESSERA_AGENT_STATE_DIR and TESSERA_AGENT_UNIT,
// in /proc) and converges it to the plan, keyed by (GPU, profile, start):
//   what the plan lacks:  drain -> stop processes -> stop the MPS daemon
//                         -> destroy compute instances -> destroy the GPU instance
//   what the plan adds:   create the GPU instance at its start -> create its
//                         full-size compute instance -> start the MPS daemon
//                         -> start the serving processes -> wait until ready
//   same place, other service, batch or procs: the processes are replaced.
// It owns the MIG state of every GPU of the node with MIG on: an instance no
// plan lists is destroyed. It never changes the MIG mode: a GPU the plan uses
// with MIG off is an input error naming the GPU and how to provision it.
//
// Crash safety: every step is written to <state-dir>/journal.jsonl (one JSON
// object a line, flushed before the step runs and after it ends); the state
// is what NVML and /proc say, never what the journal remembers, so an agent
// killed at any point and started again converges to the plan: no orphan or
// duplicate instance, no process left behind. A step left open by a crash is
// closed on restart with "interrupted": true. A transition's finished phases
// are kept in <state-dir>/transition.json, so a restarted transition resumes
// at its first unfinished phase (every step is idempotent: a create whose
// instance is there, a destroy whose instance is gone, do nothing). Running
// twice, the second run does nothing. One agent per state directory (a lock).
//
// Thread-safety: one NodeAgent per thread and per state directory.
#ifndef TESSERA_NODE_AGENT_H_
#define TESSERA_NODE_AGENT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/emit/node_plan.h"
#include "tessera/nvml/nvml.h"
#include "tessera/status.h"
#include "tessera/transition.h"
#include "tessera/util/clock.h"

namespace tessera {

struct AgentOptions {
  std::string state_dir;  // journal, lock, logs, MIG UUID files; created if missing
  // Override the NodePlan's serving and MPS command templates (node_plan.h
  // placeholders); empty = the plan's.
  std::vector<std::string> serve_command;
  std::vector<std::string> mps_command;
  // Override the NodePlan's serving layout on this node: the first port of
  // its processes (0 = the plan's) and the root of its MPS directories
  // (empty = the plan's); ports and directories are derived again from them
  // as BuildNodeInstance derives them. For several agents on one host.
  int base_port = 0;
  std::string mps_root;
  // The MPS control command, run in a daemon's CUDA_MPS_PIPE_DIRECTORY with
  // one command on its stdin: "get_server_list" until it succeeds, before
  // any client starts (a client that finds no daemon runs without MPS), and
  // "quit" to stop the daemon before any process left is signalled. Empty:
  // neither (the daemon is only started and signalled).
  std::vector<std::string> mps_control_command = {"nvidia-cuda-mps-control"};
  bool serving = true;           // false: MIG and MPS only (pods run the servers)
  double ready_timeout_s = 120;  // per serving process
  double drain_timeout_s = 30;   // SIGTERM, then SIGKILL after this long
  const Clock* clock = &SystemClock();
};

// One step the agent ran, as the journal records it.
struct AgentStep {
  std::string op;  // "create-gpu-instance", "start-process", ...
  int gpu = 0;
  std::string profile;
  int start = 0;
  std::string detail;  // the process, the instance ID, ...
  bool ok = true;
  std::string error;  // when !ok: NVML's or the process's error
};

struct AgentReport {
  std::vector<AgentStep> steps;    // in the order run
  std::vector<std::string> notes;  // recovered steps, GPUs skipped, ...
  int phases_run = 0;              // transitions: phases this run executed
  int phases_skipped = 0;          // transitions: phases done by an earlier run
  // True iff every step succeeded and the node now matches the target.
  bool converged = false;
};

// One MIG instance of the node as the agent observes it: NVML's GPU
// instances and the processes the agent started (the control plane's
// "inventory", docs/control-plane.md).
struct AgentInstance {
  int gpu = 0;  // cluster GPU index: node_index * gpus_per_node + local index
  std::string profile;
  int start = 0;
  // The service its serving processes run (from their unit names); without
  // serving processes (AgentOptions::serving false) the plan's service there.
  std::string service;
  // Its one compute instance, its MPS daemon and (with serving) a serving
  // process run. No health request is made.
  bool ready = false;
};

// Called with one line per step as it starts and ends (progress).
using AgentProgress = std::function<void(const std::string&)>;

class NodeAgent {
 public:
  // Loads NVML, takes the state directory's lock, closes any step a killed
  // agent left open, and checks `plan` against the machine: each of its GPUs
  // exists, has MIG on (else InvalidArgument naming the GPU and the
  // provisioning step) and offers each profile at each start. The plan's
  // `node` must equal `node`.
  static Result<std::unique_ptr<NodeAgent>> Open(const std::string& node, NodePlan plan,
                                                 const std::string& nvml_library,
                                                 AgentOptions options, AgentProgress progress);
  ~NodeAgent();

  // Converges the node to the plan (see the file comment).
  Result<AgentReport> Reconcile();

  // Replaces the plan (a running agent whose plan file changed), checked
  // against the machine as Open checks it; on error the old plan stays.
  Status SetPlan(NodePlan plan);

  // Runs the steps of `transition` whose cluster GPU lies on this node,
  // phase by phase (only phase `only_phase`, 1-based, when given; a
  // coordinator runs every node's phase k before any node's phase k + 1),
  // then, after the last phase, reconciles to the plan (the NodePlan of B
  // after the transition, `tessera deploy --transition`).
  Result<AgentReport> RunTransition(const Transition& transition, const std::string& source,
                                    std::optional<int> only_phase);

  // Every GPU instance on the node's GPUs with MIG on, by GPU and start,
  // read afresh; changes nothing.
  Result<std::vector<AgentInstance>> Observe();

  class Impl;

 private:
  explicit NodeAgent(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// `tessera agent inventory`: every GPU with its MIG mode, profiles and
// instances (placements, compute instances, MIG UUIDs), as text for people
// (laid out like `nvidia-smi mig -lgi` / `-lci`) or JSON.
std::string FormatInventoryText(const std::vector<NvmlGpu>& gpus);
std::string FormatInventoryJson(const std::vector<NvmlGpu>& gpus);

}  // namespace tessera

#endif  // TESSERA_NODE_AGENT_H_
