#include "mps_cli.h"

#include <fmt/format.h>

#include "tessera/gpulet_tables.h"
#include "tessera/igniter_model.h"

namespace tessera::cli {
namespace {

// The GPU an MPS plan uses: --gpu, the scenario's, or the coefficients'.
Result<const MpsGpu*> ChooseMpsGpu(const InputFlags& input, const Scenario& scenario,
                                   const MpsCoefficients& coefficients,
                                   const std::string& coefficients_path) {
  if (!input.gpu.empty()) {
    Result<const MpsGpu*> gpu = FindMpsGpu(input.gpu);
    return gpu.ok() ? gpu : gpu.status().WithContext("--gpu");
  }
  std::string name = scenario.gpu;
  if (name.empty() && scenario.pool.size() == 1) name = scenario.pool.front().gpu;
  if (!scenario.pool.empty() && name.empty()) {
    return Status::InvalidArgument(scenario.source +
                                   ": MPS planners plan one GPU type; list one in `pool` or "
                                   "give --gpu");
  }
  const std::string& from = name.empty() ? coefficients_path : scenario.source;
  if (name.empty()) name = coefficients.hardware.gpu;
  if (name.empty()) {
    return Status::InvalidArgument(
        "name the GPU the plan uses: --gpu NAME, `gpu:` in the scenario, or \"gpu\" in the "
        "coefficients' hardware (" +
        MpsGpuNames() + ")");
  }
  Result<const MpsGpu*> gpu = FindMpsGpu(name);
  return gpu.ok() ? gpu : gpu.status().WithContext(from);
}

// --price, else the scenario pool's price of `gpu`, else its instance's.
double ChoosePrice(const MpsFlags& mps, const Scenario& scenario, const MpsGpu& gpu) {
  if (mps.price_per_hour) return *mps.price_per_hour;
  for (const PoolEntry& entry : scenario.pool) {
    if (entry.gpu == gpu.name) return entry.price_per_hour;
  }
  return gpu.price_per_hour;
}

}  // namespace

void AddMpsFlags(CLI::App& command, MpsFlags& flags) {
  command.add_option("--coeffs", flags.coefficients,
                     "iGniter coefficients (JSON) of the GPU: plan with the MPS planners "
                     "(igniter, ffd+, gslice+, gpulet) on whole GPUs shared through MPS; e.g. "
                     "../shared/data/igniter/derived/fitted_coefficients_v100.json, or fit your "
                     "own with `tessera igniter fit`");
  command.add_option("--gpulet-tables", flags.gpulet_tables,
                     "gpu-lets' profiling tables (JSON Lines) for the gpulet planner, e.g. "
                     "../shared/data/igniter/i-Gniter/Profile/tools/gpulet.config");
  command
      .add_option("--price", flags.price_per_hour,
                  "Hourly price of one GPU instance for MPS plans (default: the scenario "
                  "pool's price, else the GPU's one-GPU instance, e.g. p3.2xlarge $3.06)")
      ->check(CLI::NonNegativeNumber);
}

bool IsMpsPlanner(const std::string& planner) {
  const std::vector<std::string> names = BuiltinMpsPlanners().Names();
  return std::find(names.begin(), names.end(), planner) != names.end();
}

Result<MpsProblem> LoadMpsProblem(const InputFlags& input, const MpsFlags& mps) {
  if (mps.coefficients.empty()) {
    return Status::InvalidArgument(
        "MPS planners need the GPU's iGniter coefficients: --coeffs FILE (e.g. "
        "../shared/data/igniter/derived/fitted_coefficients_v100.json)");
  }
  if (input.scenario.empty()) {
    return Status::InvalidArgument("MPS planners read a scenario: --scenario FILE");
  }
  TESSERA_ASSIGN_OR_RETURN(Scenario scenario, LoadScenarioYaml(input.scenario));
  scenario = ReplicateScenario(scenario, input.replicate);
  TESSERA_ASSIGN_OR_RETURN(MpsCoefficients coefficients, LoadMpsCoefficients(mps.coefficients));
  TESSERA_ASSIGN_OR_RETURN(const MpsGpu* gpu,
                           ChooseMpsGpu(input, scenario, coefficients, mps.coefficients));
  const double price = ChoosePrice(mps, scenario, *gpu);
  Result<MpsProblem> problem = BuildMpsProblem(std::move(scenario), std::move(coefficients), *gpu,
                                               price, input.latency_factor.value_or(0.5));
  if (!problem.ok()) return problem.status();
  if (!mps.gpulet_tables.empty()) {
    TESSERA_ASSIGN_OR_RETURN(GpuletTables tables, LoadGpuletTables(mps.gpulet_tables));
    problem->gpulet = std::make_shared<const GpuletTables>(std::move(tables));
  }
  return problem;
}

}  // namespace tessera::cli
