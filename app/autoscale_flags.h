// The autoscaling policy's flags (autoscaler.h), which `tessera autoscale`
// and `tessera serve --autoscale` share: --forecaster, --lead, --margin,
// --hysteresis, --down-hold and --step-durations.
#ifndef TESSERA_APP_AUTOSCALE_FLAGS_H_
#define TESSERA_APP_AUTOSCALE_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "tessera/autoscaler.h"
#include "tessera/status.h"

namespace tessera::cli {

// Adds the flags to `cmd`, writing `options`; --step-durations goes to
// `durations`, read by ApplyStepDurations once the flags are parsed.
// Returns the options added.
std::vector<CLI::Option*> AddAutoscalePolicyFlags(CLI::App& cmd, AutoscalePolicyOptions& options,
                                                  std::string& durations);
// `durations` (KEY=DURATION,...) over the defaults, into `options`;
// InvalidArgument naming --step-durations.
Status ApplyStepDurations(const std::string& durations, AutoscalePolicyOptions& options);

}  // namespace tessera::cli

#endif  // TESSERA_APP_AUTOSCALE_FLAGS_H_
