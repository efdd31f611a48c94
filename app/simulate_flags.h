// The simulation flags of `tessera simulate` (--duration, --arrivals, the
// burst shape, --seed, --router, --max-queue-delay-ms, --variability,
// --drop-after-ms, --transition and --step-seconds), declared onto a
// SimulateRequest (tessera/simulate_request.h), which checks and runs them.
#ifndef TESSERA_APP_SIMULATE_FLAGS_H_
#define TESSERA_APP_SIMULATE_FLAGS_H_

#include <CLI/CLI.hpp>

#include "tessera/simulate_request.h"

namespace tessera::cli {

// Declares the simulation flags on `cmd`, bound to `request`; the scenario,
// deployment and output flags are the command's.
void AddSimulationFlags(CLI::App& cmd, SimulateRequest& request);

}  // namespace tessera::cli

#endif  // TESSERA_APP_SIMULATE_FLAGS_H_
