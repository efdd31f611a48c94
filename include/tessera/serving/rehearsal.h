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
#include "tessera/scenario.h"
#include "tessera/simulator.h"
#include "tessera/status.h"
#include "tessera/transition.h"
#include "tessera/workload/day_rates.h"

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

// A rehearsal under the control plane (docs/rehearse.md, "Under tessera
// serve"): the loop that moves a live cluster when its traffic moves.
//
//  1. `tessera serve` (auto mode, its own SQLite store, --router-agent
//     edge and models) with the scenario; it plans it, and its first
//     transition, from the empty cluster, deploys it;
//  2. one `tessera agent --server` per node (4 GPUs each, on the fake
//     NVML, serving ports from each node's own base) starts the emulators;
//     `tessera router-agent --name edge` runs HAProxy in step with the
//     control plane and reports what its request log counts; the rehearsal
//     itself takes part in every phase as the router "models": before a
//     phase's processes start it writes the model configurations of the
//     plan the transition moves to (deploy's triton/ files);
//  3. the open-loop generator sends every service's rate, one service's
//     stepped by `step_factor` from `step_at_s`: the router measures it,
//     serve re-plans once the move has held for `replan_hold_s`, and the
//     transition runs phase by phase (router drain, node steps, router
//     ready) under the load;
//  4. everything is stopped; the report has every window's measured
//     compliance and each transition's timing.
// Times are the plan's (wall / dilation) but replan_hold_s and
// report_interval_s, which are the wall seconds serve and the router agent
// are given.
//
// A compressed day (`day`) in place of the step: every service follows
// the day's per-minute rates, each minute `minute_s` of the plan's time,
// and serve runs the autoscaling policy (`--autoscale`, its minute the
// day's minute in wall time, its policy flags `autoscale_args`). Every
// window is then predicted too: each of its minutes simulated at the
// minute's rates on the plan serve ran (a minute a transition ran through:
// the lower of its two plans' compliance, service by service), the
// window's share within the SLO weighted by rate.
struct ServedRehearsalRequest {
  Scenario scenario;                    // the services loaded (rates, SLOs)
  std::vector<std::string> serve_args;  // serve's input flags ("--scenario", path, ...)
  std::string gpu = "a100-80gb";        // the fake NVML's GPUs
  std::string profiles;                 // the emulators' --profiles; empty: the embedded ones
  std::string step_service;             // the stepped service (in the scenario)
  double step_factor = 1.5;
  double step_at_s = 20;   // the plan's time from the load's start
  double duration_s = 60;  // the plan's time
  double window_s = 10;    // the plan's time
  double dilation = 1;
  uint64_t seed = 1;
  double replan_threshold = 0.10;
  double replan_hold_s = 3;      // wall
  double report_interval_s = 2;  // wall
  std::string work_dir;
  std::string tessera_binary;
  std::string fake_nvml_library;
  std::string haproxy_binary = "haproxy";
  int process_base_port = 10000;
  int router_base_port = 9000;
  int router_metrics_port = 8404;
  std::function<void(std::string_view)> progress;
  const std::atomic<bool>* stop = nullptr;
  // The compressed day (scenario order); duration_s is then its length.
  std::optional<DayRates> day;
  double minute_s = 0.25;                   // the plan's time per minute of the day
  std::vector<std::string> autoscale_args;  // serve's policy flags
  std::optional<Problem> problem;           // profiles and SLOs of the prediction
};

// A transition serve started during the load.
struct ServedTransition {
  int64_t id = 0;
  int phases = 0, steps = 0;
  int gpus_before = 0, gpus_after = 0;
  int64_t from_plan = 0, to_plan = 0;
  std::string state;   // as last seen
  double seen_s = 0;   // the plan's time from the load's start it was first seen
  double done_s = -1;  // when it was seen done; -1: not done
};

struct ServedRehearsalReport {
  std::string router, router_version;
  std::string step_service;
  double step_factor = 1, step_at_s = 0;
  double duration_s = 0, dilation = 1, wall_s = 0;
  int nodes = 0, gpus_deployed = 0;
  std::vector<RehearsedService> services;  // whole run; predicted: unset
  std::vector<RehearsedWindow> windows;    // every window_s; predicted: unset
  std::vector<ServedTransition> transitions;
  double send_jitter_p99_ms = 0;
  // A compressed day: its minutes, each minute_s of the plan's time; the
  // windows' predicted compliance is set; each window's GPUs at its start;
  // what serve's policy last said.
  int day_minutes = 0;
  double minute_s = 0;
  std::vector<int> window_gpus;
  std::string autoscale_note;
};

// InvalidArgument for bad options (a step service not in the scenario,
// paths, times); IoError naming the process and its log when serve, an
// agent, the router agent or HAProxy fails.
Result<ServedRehearsalReport> RunServedRehearsal(const ServedRehearsalRequest& request);
std::string FormatServedRehearsalTable(const ServedRehearsalReport& report);
std::string FormatServedRehearsalJson(const ServedRehearsalReport& report);

}  // namespace tessera

#endif  // TESSERA_REHEARSAL_H_
