#include "trace_flags.h"

#include "cli_flags.h"
#include "tessera/gpu_catalog.h"

namespace tessera::cli {

void AddTraceFlags(CLI::App& cmd, TraceRequest& flags) {
  cmd.add_option("--nodes", flags.nodes, "Node list CSV (sn,cpu_milli,memory_mib,gpu,model)")
      ->required();
  cmd.add_option("--pods", flags.pods,
                 "Pod list CSV (name,cpu_milli,memory_mib,num_gpu,gpu_milli,...,creation_time,"
                 "deletion_time)")
      ->required();
  cmd.add_option("--gpu", flags.gpu,
                 "GPU model every trace GPU becomes: " + GpuNames(/*mig_only=*/true))
      ->capture_default_str();
  cmd.add_option("--hosts", flags.hosts, "Stress: keep only the first N hosts")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--gpus-per-host", flags.gpus_per_host,
                 "Stress: give every host N GPUs instead of its recorded count")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--max-pods", flags.max_pods,
                 "Keep only the first N pods (in arrival order) of those the trace keeps")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--lifetime", flags.lifetime,
                 "trace (recorded departures), none (VMs never leave) or scale:K (lifetimes x K)")
      ->capture_default_str();
}

}  // namespace tessera::cli
