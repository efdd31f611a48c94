// The parts the rehearsals (rehearsal.h: of a plan, and under `tessera
// serve`) share: the emulator command the node plans run, the ports the
// kernel hands out, stopping what the agents started, 1 MiB stacks for the
// processes started, and what was measured of a service.
//
// Thread-safety: pure functions, but SmallStacks, which changes this
// process's stack limit while it lives (one at a time).
#ifndef TESSERA_SERVING_REHEARSAL_PARTS_H_
#define TESSERA_SERVING_REHEARSAL_PARTS_H_

#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "serving/load_generator.h"
#include "tessera/serving/rehearsal.h"
#include "tessera/simulator.h"
#include "tessera/status.h"

namespace tessera::serving {

// `tessera emulate` as a node plan's serving command (node_plan.h
// placeholders): the model repository `model_repository` (a path, or the
// plan's "{model_repository}"), the catalog GPU, the profiles (empty: the
// embedded ones), the time dilation and the seed.
std::vector<std::string> EmulatorCommand(const std::string& tessera_binary,
                                         const std::string& model_repository,
                                         const std::string& gpu, const std::string& profiles,
                                         double dilation, uint64_t seed);

// The kernel's ephemeral port range (net.ipv4.ip_local_port_range), or
// Linux's default when it cannot be read.
std::pair<int, int> EphemeralPorts();

// Kills every unit an agent of `state_dirs` started and its stop did not
// end, found as the agent finds them (agent::Supervisor::Scan); the first
// unit that would not die is the error.
Status KillUnits(const std::vector<std::string>& state_dirs);

// `error`, the reason a rehearsal ends, saying so if stopping what it
// started (`stopped`) failed too.
Status AfterStopping(const Status& error, const Status& stopped);

// A plan's emulators hold thousands of request threads (S6: about 14,000
// for 97 processes): while one lives, every process started from here gets
// 1 MiB stacks instead of glibc's default of the stack limit (8 MiB).
class SmallStacks {
 public:
  SmallStacks();
  ~SmallStacks();
  SmallStacks(const SmallStacks&) = delete;
  SmallStacks& operator=(const SmallStacks&) = delete;

 private:
  rlimit saved_{};
};

// The generator's target for service `s` at its router frontend `port`,
// dilated: its rate / dilation, its SLO x dilation, Triton's infer path.
LoadTarget DilatedTarget(const ServingService& s, int port, double dilation);

// How long a request may wait before it fails, in wall seconds: 20 times
// the longest SLO, dilated, and at least a minute.
double RequestTimeoutS(const std::vector<ServingService>& services, double dilation);

// The p99 of `c`'s answered requests in the plan's time (0 when none), and
// its share of requests within the SLO (1 when none).
double P99Ms(const LoadCounts& c, double dilation);
double Compliance(const LoadCounts& c);

// What was measured for one service, beside what was predicted.
RehearsedService Measured(const ServingService& s, const LoadCounts& c,
                          const ServiceReport& predicted, double dilation);

}  // namespace tessera::serving

#endif  // TESSERA_SERVING_REHEARSAL_PARTS_H_
