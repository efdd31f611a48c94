// `tessera validate`: the independent validator on a deployment JSON file,
// under the rule the plan records.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "tessera/deployment_format.h"
#include "tessera/util/text_io.h"
#include "tessera/validator.h"

namespace tessera::cli {
namespace {

struct ValidateFlags {
  ProblemInputs input;
  std::string deployment;
};

int RunValidate(const ValidateFlags& flags) {
  Result<std::string> text = ReadTextFile(flags.deployment);
  if (!text.ok()) return ReportError(text.status());
  Result<Deployment> d = ParseDeploymentJson(*text, flags.deployment);
  if (!d.ok()) return ReportError(d.status());
  const bool mps = d->sharing == Sharing::kMps;
  if (Status s = CheckInputsApply(flags.input, mps, flags.deployment); !s.ok()) {
    return ReportError(s);
  }
  Result<Problem> problem = LoadPlanProblem(flags.input, *d, mps, nullptr, CliNotes());
  if (!problem.ok()) return ReportError(problem.status());
  AdoptRule(*d, flags.deployment, problem->rule(), CliNotes());
  if (d->gpu != problem->gpu().name) {
    return ReportError(Status::InvalidArgument(
        flags.deployment + ": field 'gpu': the deployment is for " + d->gpu +
        " but the inputs "
        "were loaded for " +
        problem->gpu().name + " (use --gpu " + d->gpu + ")"));
  }
  const std::vector<Violation> violations = ValidateDeployment(*d, *problem);
  if (!violations.empty()) {
    PrintMessage(fmt::format("{}: {} violation(s) under {}:\n{}", flags.deployment,
                             violations.size(), DescribeRule(d->rule),
                             FormatViolations(violations)));
    return kExitBadInput;
  }
  std::cout << flags.deployment << ": valid (" << d->metrics.gpus << " GPUs, "
            << (mps ? "MPS" : std::to_string(d->metrics.gpcs) + " compute slices") << ", "
            << d->services.size() << " services; " << DescribeRule(d->rule) << ")\n";
  return kExitOk;
}

}  // namespace

void AddValidateCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ValidateFlags>();
  CLI::App* cmd =
      app.add_subcommand("validate", "Check a deployment JSON against a scenario and profiles");
  cmd->footer(
      "Checks a plan under the latency rule it records (the rule it was made under):\n"
      "MIG geometry (allowed starts, no overlapping memory slices), the latency rule\n"
      "(every instance's profiled latency < factor x its service's SLO, with the\n"
      "throughput and latency the file claims), the capacity rule (each service's\n"
      "segments sustain its rate) and consistency (services match the scenario, the\n"
      "gpus and gpcs metrics add up). MPS plans (GPUs shared whole) are checked against\n"
      "the iGniter coefficients they were made with (--coeffs): shares within each GPU,\n"
      "rates covered, predictions equal to the model's. A plan written before plans\n"
      "recorded their rule is checked under the flags' rule (default: the default\n"
      "rule), with a note. Exit code 0 when valid; 2 with every violation listed.\n\n"
      "Examples:\n"
      "  tessera plan --scenario examples/scenarios/s3.yaml --format json -o s3.json\n"
      "  tessera validate --scenario examples/scenarios/s3.yaml --deployment s3.json");
  AddInputFlags(*cmd, flags->input);
  cmd->add_option("--deployment", flags->deployment, "Deployment JSON (tessera plan --format json)")
      ->required();
  cmd->callback([flags, &exit_code] { exit_code = RunValidate(*flags); });
}

}  // namespace tessera::cli
