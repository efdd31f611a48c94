// The inputs of `tessera simulate`, from its flags: the simulation options
// (arrivals, duration, router, variability...) validated with errors naming
// the flag, the problem a deployment is replayed against, and the check
// that scenario and deployment name the same services. Shared by the
// command and by the Python package's simulate(), so that both give the
// same reports and the same messages.
//
// Thread-safety: functions of their arguments; safe on any thread.
#ifndef TESSERA_APP_SIMULATE_INPUTS_H_
#define TESSERA_APP_SIMULATE_INPUTS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/deployment.h"
#include "tessera/problem.h"
#include "tessera/profile_table.h"
#include "tessera/scenario.h"
#include "tessera/simulator.h"
#include "tessera/status.h"
#include "tessera/transition.h"

namespace tessera::cli {

constexpr std::string_view kDefaultDuration = "60s";

struct SimulateFlags {
  std::string scenario;
  std::string parva_slo;
  int row = 0;
  int replicate = 1;
  std::string profiles;
  // Profiles given in memory (the Python package), in place of --profiles.
  std::shared_ptr<const ProfileTable> profile_table;
  std::string coefficients;  // --coeffs: an MPS plan's iGniter coefficients
  std::string deployment;
  std::string transition;
  std::optional<double> step_seconds;
  std::string duration;  // empty: 60 s, or the trace's span under trace:FILE
  std::string arrivals = "poisson";
  std::optional<double> burst_on_share;
  std::optional<double> burst_on_s;
  std::string router;                        // empty: the plan's
  std::optional<double> max_queue_delay_ms;  // absent: the SLO-derived default
  std::string variability = "none";
  double drop_after_ms = 0;
  std::uint64_t seed = 1;
  std::string format = "table";
  std::string output;
};

// Declares the flags of the simulation (--duration, --arrivals, the burst
// shape, --seed, --router, --max-queue-delay-ms, --variability,
// --drop-after-ms, --transition and --step-seconds) on `cmd`; the scenario,
// deployment and output flags are the command's.
void AddSimulationFlags(CLI::App& cmd, SimulateFlags& flags);

// The options of `flags`, validated; the trace (if any) loaded and checked.
// Through a transition the run's duration is its steps'.
Result<SimOptions> OptionsFrom(const SimulateFlags& flags, const Scenario& scenario,
                               const std::optional<Transition>& transition);

// The scenario on the deployment's GPU models under the plan's rule: with
// --profiles (or the table given in memory), or the embedded profiles of
// every GPU model the deployment uses (as `plan` synthesizes them for its
// pool); an MPS plan with the iGniter coefficients of --coeffs, or, on a MIG
// GPU run whole, with those derived from its profiles as `plan` derives them
// without --coeffs. Messages name flags.deployment.
Result<Problem> ProblemFor(const SimulateFlags& flags, const Scenario& scenario,
                           const Deployment& d);

// The deployment replayed against `problem` (ProblemFor's) under `options`
// (OptionsFrom's). A deployment the profiles cannot serve is an error naming
// flags.deployment and the profiles: a plan made with --profiles X needs
// the same profiles here.
Result<SimReport> SimulateOn(const SimulateFlags& flags, const Deployment& d,
                             const Problem& problem, const SimOptions& options);

// The simulation replays the scenario's rates against the deployment's
// instances: both must name the same services, or the report would show a
// mistyped service as idle or as dropping everything. `path` names the
// deployment in the message.
Status CheckSameServices(const Scenario& scenario, const Deployment& d, const std::string& path);

}  // namespace tessera::cli

#endif  // TESSERA_APP_SIMULATE_INPUTS_H_
