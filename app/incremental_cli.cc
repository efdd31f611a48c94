#include "incremental_cli.h"

#include "cli_flags.h"
#include "tessera/util/input_limits.h"

namespace tessera::cli {

void AddIncrementalFlags(CLI::App& command, PlanRequest& request) {
  auto* current = command.add_option(
      "--current", request.current_path,
      "Re-plan from this running deployment (JSON of tessera plan): keep the instances of "
      "services whose model, SLO and rate are unchanged, only those still needed when a rate "
      "fell, add segments where a rate rose, plan new or changed services afresh");
  // A count of GPUs, only with --current.
  const auto gpus = [&](const char* flag, auto& value, const InputRange& range, const char* help) {
    command.add_option(flag, value, help)->check(Within(range))->needs(current);
  };
  gpus("--max-extra-gpus", request.max_extra_gpus, limits::kMaxExtraGpus,
       "With --current: GPUs the re-plan may use beyond the best plan from scratch before that "
       "plan is used instead (default: 0 when it is proven optimal, else 1)");
  gpus("--repack-gpus", request.repack_gpus, limits::kRepackGpus,
       "With --current: plan afresh the instances of this many of the least-filled current GPUs "
       "(once what a fallen rate no longer needs is dropped) and keep the others' as they are; "
       "frees GPUs where the kept instances fill them (default 0)");
  command
      .add_flag("--consolidate", request.consolidate,
                "With --current: replace several instances of a service by one larger instance "
                "where that takes less of the GPUs (a 3g.40gb serves more per slice than 1g "
                "instances), then empty the GPUs whose instances fit in the holes left; rising "
                "rates otherwise pile up small instances")
      ->needs(current);
}

}  // namespace tessera::cli
