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
  command
      .add_option("--max-extra-gpus", request.max_extra_gpus,
                  "With --current: GPUs the re-plan may use beyond the best plan from scratch "
                  "before that plan is used instead (default: 0 when it is proven optimal, "
                  "else 1)")
      ->check(Within(limits::kMaxExtraGpus))
      ->needs(current);
  command
      .add_option("--repack-gpus", request.repack_gpus,
                  "With --current: plan afresh the instances of this many of the least-filled "
                  "current GPUs (once what a fallen rate no longer needs is dropped) and keep the "
                  "others' as they are; frees GPUs where the kept instances fill them (default 0)")
      ->check(Within(limits::kRepackGpus))
      ->needs(current);
}

}  // namespace tessera::cli
