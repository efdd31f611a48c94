// `tessera plan --current`: the flags of an incremental re-plan from a
// running deployment (incremental_plan.h), which keeps as many of its
// instances in place as it can.
#ifndef TESSERA_APP_INCREMENTAL_CLI_H_
#define TESSERA_APP_INCREMENTAL_CLI_H_

#include <CLI/CLI.hpp>

#include "tessera/plan_request.h"

namespace tessera::cli {

// Declares --current (request.current_path), --max-extra-gpus and
// --repack-gpus on `command`.
void AddIncrementalFlags(CLI::App& command, PlanRequest& request);

}  // namespace tessera::cli

#endif  // TESSERA_APP_INCREMENTAL_CLI_H_
