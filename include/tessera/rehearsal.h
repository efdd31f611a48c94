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
//  5. the agents are run again with empty plans (stopping every process and
//     destroying every instance), HAProxy is stopped, and any process left
//     carrying the rehearsal's state directory is killed.
// Latencies are reported in the plan's time (wall time / dilation), so they
// compare with the SLOs and the simulator directly.
//
// Thread-safety: RunRehearsal blocks; it starts child processes in a
// process group of their own and stops them all before it returns.
#ifndef TESSERA_REHEARSAL_H_
#define TESSERA_REHEARSAL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/simulator.h"
#include "tessera/status.h"

namespace tessera {

struct RehearsalRequest {
  Deployment deployment;   // a MIG plan whose router deploy can ship
  ServingModel model;      // BuildServingModel of it (the prediction's)
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
};

struct RehearsalReport {
  std::string router;          // the plan's router
  std::string router_version;  // the first line of `haproxy -v`
  double duration_s = 0, dilation = 1, wall_s = 0;
  std::vector<RehearsedService> services;                 // scenario order
  double send_jitter_p50_ms = 0, send_jitter_p99_ms = 0;  // wall time
  int connections = 0;
};

// Runs the rehearsal. InvalidArgument for a plan deploy refuses or bad
// options (work_dir, binaries, ports, dilation); IoError naming the
// process and its log when an agent or HAProxy fails.
Result<RehearsalReport> RunRehearsal(const RehearsalRequest& request);

std::string FormatRehearsalTable(const RehearsalReport& report);
std::string FormatRehearsalJson(const RehearsalReport& report);

}  // namespace tessera

#endif  // TESSERA_REHEARSAL_H_
