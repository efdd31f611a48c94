// The flags and loading shared by the commands that run MPS planners
// (`tessera plan` and `tessera compare` with --coeffs): whole GPUs shared
// through MPS, described by the iGniter model (mps_plan.h).
#ifndef TESSERA_APP_MPS_CLI_H_
#define TESSERA_APP_MPS_CLI_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli_common.h"
#include "tessera/mps_plan.h"

namespace tessera::cli {

struct MpsFlags {
  std::string coefficients;              // --coeffs FILE
  std::string gpulet_tables;             // --gpulet-tables FILE
  std::optional<double> price_per_hour;  // --price USD
};

// Declares --coeffs, --gpulet-tables and --price on `command`.
void AddMpsFlags(CLI::App& command, MpsFlags& flags);

// True iff `planner` names an MPS planner.
bool IsMpsPlanner(const std::string& planner);

// The MPS problem of the inputs: the scenario (--scenario, --replicate), the
// coefficients, the GPU (--gpu, else the scenario's gpu or its one pool
// entry, else the coefficients' "gpu"), its hourly price (--price, else the
// scenario pool's, else the GPU's instance price), the latency factor, and
// gpu-lets' tables when given. Errors name the flag or file.
Result<MpsProblem> LoadMpsProblem(const InputFlags& input, const MpsFlags& mps);

}  // namespace tessera::cli

#endif  // TESSERA_APP_MPS_CLI_H_
