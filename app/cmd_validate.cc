// `tessera validate`: the independent validator on a deployment JSON file.
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "tessera/deployment_format.h"
#include "tessera/text_io.h"
#include "tessera/validator.h"

namespace tessera::cli {
namespace {

struct ValidateFlags {
  InputFlags input;
  std::string deployment;
};

int RunValidate(const ValidateFlags& flags) {
  Result<Inputs> in = LoadInputs(flags.input);
  if (!in.ok()) return ReportError(in.status());
  Result<std::string> text = ReadTextFile(flags.deployment);
  if (!text.ok()) return ReportError(text.status());
  Result<Deployment> d = ParseDeploymentJson(*text, flags.deployment);
  if (!d.ok()) return ReportError(d.status());
  if (d->gpu != in->gpu->name) {
    return ReportError(Status::InvalidArgument(
        flags.deployment + ": field 'gpu': the deployment is for " + d->gpu +
        " but the profiles were loaded for " + in->gpu->name + " (use --gpu " + d->gpu + ")"));
  }
  const std::vector<Violation> violations =
      ValidateDeployment(*d, in->scenario, in->profiles, in->rule);
  if (!violations.empty()) {
    std::cerr << flags.deployment << ": " << violations.size() << " violation(s):\n"
              << FormatViolations(violations);
    return kExitBadInput;
  }
  std::cout << flags.deployment << ": valid (" << d->metrics.gpus << " GPUs, " << d->metrics.gpcs
            << " compute slices, " << d->services.size() << " services)\n";
  return kExitOk;
}

}  // namespace

void AddValidateCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ValidateFlags>();
  CLI::App* cmd =
      app.add_subcommand("validate", "Check a deployment JSON against a scenario and profiles");
  cmd->footer(
      "Checks MIG geometry (allowed starts, no overlapping memory slices), the latency\n"
      "rule (every instance's profiled latency < factor x its service's SLO, with the\n"
      "throughput and latency the file claims), the capacity rule (each service's\n"
      "segments sustain its rate) and consistency (services match the scenario, the\n"
      "gpus and gpcs metrics add up). Exit code 0 when valid; 2 with every violation\n"
      "listed otherwise.\n\n"
      "Examples:\n"
      "  tessera plan --scenario examples/scenarios/s3.yaml --format json -o s3.json\n"
      "  tessera validate --scenario examples/scenarios/s3.yaml --deployment s3.json");
  AddInputFlags(*cmd, flags->input);
  cmd->add_option("--deployment", flags->deployment, "Deployment JSON (tessera plan --format json)")
      ->required();
  cmd->callback([flags, &exit_code] { exit_code = RunValidate(*flags); });
}

}  // namespace tessera::cli
