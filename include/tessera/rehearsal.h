// Rehearsal: a plan's whole data path run on this machine with real
// requests (docs/rehearse.md), beside the serving simulator's prediction
// for the same plan, router and duration.
//
//  1. node plans of the deployment (16 GPUs per node; node k's ports from
//     its own base, so that nodes sharing this host never collide) and the
//     Triton model configurations deploy writes;
//  2. one `tessera agent --once` per node applies its plan on the fake NVML
//     library (one state file per node), starting one `tessera emulate` per
//     serving process (the node plan's command, with --dilation) and an
//     MPS placeholder (no MPS exists without a GPU);
//  3. HAProxy runs the router deploy ships for the plan's router, on
//     127.0.0.1, each server at its process's port;
//  4. the open-loop generator (load_generator.h) sends every service's
//     rate / dilation to its frontend for duration x dilation seconds;
//     HAProxy logs every request to a RouterObserver, whose counts are
//     reported beside the generator's: what the router measures, the
//     figures a control plane can be fed;
//  5. the agents are run again with empty plans (stopping every process and
//     destroying every instance), HAProxy is stopped, and any process left
//     carrying the rehearsal's state directory is killed.
// Latencies are reported in the plan's time (wall time / dilation), so they
// compare with the SLOs and the simulator directly.
//
// With a transition (transition.h) the load runs through it, as
// SimulateTransition's run does: one step_s window in A, one per phase, one
// after, in the plan's time. HAProxy holds a server for every process that
// lives during the run (BuildTransitionLives), those a step starts in
// maintenance. At phase k's window start: the servers of the instances the
// phase destroys or reconfigures are drained through the runtime API, put
// in maintenance once nothing is outstanding at them, and every node's
// agent runs phase k (`tessera agent --transition T --phase k`, its plan
// the node after the transition); at the window's end (or once the agents
// are done, if later: reported as late) the servers of the instances the
// phase started get their weight and are made ready, so that each window
// runs the phase's worst state, as the simulator's does; then the next
// phase begins. Requests count in the window of their scheduled send time,
// beside the simulated window.
//
// Thread-safety: RunRehearsal blocks; it starts child processes in a
// process group of their own and stops them all before it returns.
#ifndef TESSERA_REHEARSAL_H_
#define TESSERA_REHEARSAL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/problem.h"
#include "tessera/simulator.h"
#include "tessera/status.h"
#include "tessera/transition.h"

namespace tessera {

// A transition to run under the load.
struct RehearsalTransition {
  Transition transition;  // from the request's deployment
  Problem problem;        // the scenario (every service a step starts) and profiles
  double step_s = 60;     // each window, in the plan's time
};

struct RehearsalRequest {
  Deployment deployment;  // a MIG plan whose router deploy can ship
  ServingModel model;     // BuildServingModel of it (the prediction's)
  // When set, the load runs through it for (phases + 2) x step_s of the
  // plan's time; duration_s is not used.
  std::optional<RehearsalTransition> transition;
  std::string gpu;         // the catalog GPU of its profiles
  std::string profiles;    // the emulators' --profiles; empty: the embedded ones
  double duration_s = 60;  // of the plan's time
  double dilation = 1;     // k >= 1: rates / k, latencies x k
  uint64_t seed = 1;
  std::string work_dir;           // created; holds every file and log
  std::string tessera_binary;     // runs `agent` and `emulate`
  std::string fake_nvml_library;  // libtessera-fake-nvml.so
  std::string haproxy_binary = "haproxy";
  int process_base_port = 10000;  // node 0's serving ports start here
  int router_base_port = 9000;    // the first service's frontend
  int router_metrics_port = 8404;
  std::function<void(std::string_view)> progress;  // one line per step; may be empty
  // Set (by a signal handler) to end the load early: everything is stopped
  // and the rehearsal answers InvalidArgument("interrupted").
  const std::atomic<bool>* stop = nullptr;
};

struct RehearsedService {
  std::string name;
  double rate_rps = 0, slo_ms = 0;
  long offered = 0, served = 0, failed = 0;
  double p50_ms = 0, p99_ms = 0;  // the plan's time
  double compliance = 0;          // within the SLO / offered
  ServiceReport predicted;        // the simulator's
  // As the router saw them (its request log, router_observer.h): requests
  // it logged, those not answered 2xx, p99 of the answered ones and the
  // share within the SLO (the plan's time); whole runs only.
  long router_requests = 0, router_failed = 0;
  double router_p99_ms = 0, router_compliance = 0;
};

// Requests scheduled in one window of a transition run.
struct RehearsedWindow {
  std::string name;               // "before", "phase 1", ..., "after" (SimulateTransition's)
  double start_s = 0, end_s = 0;  // the plan's time
  std::vector<RehearsedService> services;  // scenario order; predicted: the window's
};

// What one phase took, in wall seconds from the start of the load.
struct RehearsedPhase {
  int phase = 0;  // 1-based
  int steps = 0;
  int drained_servers = 0, started_servers = 0;
  double began_s = 0;    // the drain began
  double drained_s = 0;  // nothing outstanding at the drained servers
  double applied_s = 0;  // every agent ran the phase
  double ready_s = 0;    // the started servers take requests
  bool late = false;     // the agents finished after its window ended
};

struct RehearsalReport {
  std::string router;          // the plan's router
  std::string router_version;  // the first line of `haproxy -v`
  double duration_s = 0, dilation = 1, wall_s = 0;
  std::vector<RehearsedService> services;                 // scenario order
  std::vector<RehearsedWindow> windows;                   // transition runs
  std::vector<RehearsedPhase> phases;                     // transition runs
  double send_jitter_p50_ms = 0, send_jitter_p99_ms = 0;  // wall time
  int connections = 0;
};

// Runs the rehearsal. InvalidArgument for a plan deploy refuses, a
// transition that does not apply to it (SimulateTransition's errors) or bad
// options (work_dir, binaries, ports, dilation, step_s); IoError naming the
// process and its log when an agent or HAProxy fails, or the runtime API's
// answer when HAProxy refuses a command.
Result<RehearsalReport> RunRehearsal(const RehearsalRequest& request);

std::string FormatRehearsalTable(const RehearsalReport& report);
std::string FormatRehearsalJson(const RehearsalReport& report);

}  // namespace tessera

#endif  // TESSERA_REHEARSAL_H_
