// `tessera transition`: moving a running cluster from one plan to another.
// `transition --scenario NEW.yaml --from A.json --to B.json` plans the
// transition (transition.h), checks it with the independent checker and
// writes it; `transition check` runs that checker on a transition JSON.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "output_file.h"
#include "tessera/deployment_format.h"
#include "tessera/emit/transition_svg.h"
#include "tessera/transition.h"
#include "tessera/transition/transition_check.h"
#include "tessera/transition/transition_format.h"
#include "tessera/transition_request.h"
#include "tessera/util/text_io.h"

namespace tessera::cli {
namespace {

struct CheckFlags {
  std::string from;
  std::string to;
  std::string plan;
  std::string format = "text";
  std::string output = "-";
};

std::string CheckText(const TransitionCheck& check, const std::string& plan) {
  if (check.ok()) return "ok: " + FormatTransitionSummary(check.measured) + "\n";
  std::string out = fmt::format("{}: {} violation(s):\n", plan, check.violations.size());
  for (const std::string& v : check.violations) out += "  " + v + "\n";
  out += "measured: " + FormatTransitionSummary(check.measured) + "\n";
  return out;
}

struct PlanFlags {
  ProblemInputs input;  // the new scenario (B's rates and SLOs) and its profiles
  std::string from;
  std::string to;
  int spare_gpus = 0;
  std::string format = "text";
  std::string output = "-";
  std::string svg;
};

// B must serve the new scenario: the validator under B's own rule.
Status CheckTarget(const PlanFlags& flags, Deployment& to) {
  TESSERA_RETURN_IF_ERROR(CheckMigPlan(flags.to, to));
  return CheckPlanServes(flags.input, flags.to, to, "transition (MIG plans)", CliNotes()).status();
}

int RunPlan(const PlanFlags& flags) {
  if (flags.input.scenario.empty() || flags.from.empty() || flags.to.empty()) {
    return ReportError(Status::InvalidArgument(
        "transition: --scenario, --from and --to are required to plan a transition "
        "(or run `tessera transition check`); see tessera transition --help"));
  }
  Result<Deployment> from = LoadDeployment(flags.from);
  if (!from.ok()) return ReportError(from.status());
  Result<Deployment> to = LoadDeployment(flags.to);
  if (!to.ok()) return ReportError(to.status());
  if (Status s = CheckTarget(flags, *to); !s.ok()) return ReportError(s);
  Result<TransitionRun> run = RunTransition(*from, *to, flags.spare_gpus);
  if (!run.ok() && run.status().code() == StatusCode::kInternal) {
    PrintMessage("tessera: internal error: " + run.status().message() + "\n");
    return kExitInternal;
  }
  if (!run.ok()) return ReportError(run.status());
  if (!run->transition) {
    PrintMessage("tessera: error: " + run->infeasible + "\n");
    return kExitInfeasible;
  }
  const Transition& t = *run->transition;
  const std::string rendered =
      flags.format == "json" ? FormatTransitionJson(t) : EscapeMessage(FormatTransitionText(t));
  if (Status s = WriteOutput(flags.output, rendered); !s.ok()) return ReportError(s);
  if (!flags.svg.empty()) {
    Result<const GpuModel*> gpu = FindMigGpu(from->gpu);
    if (!gpu.ok()) return ReportError(gpu.status());
    if (Status s = WriteOutput(flags.svg, FormatTransitionSvg(*from, *to, t, **gpu)); !s.ok()) {
      return ReportError(s);
    }
  }
  std::cerr << "tessera: note: checked by the independent checker: "
            << FormatTransitionSummary(run->check.measured) << "\n"
            << "tessera: note: the naive order (destroy all that differs, then create) on the "
               "same GPUs: "
            << FormatTransitionSummary(run->naive) << "\n";
  return kExitOk;
}

int RunCheck(const CheckFlags& flags) {
  Result<Deployment> from = LoadDeployment(flags.from);
  if (!from.ok()) return ReportError(from.status());
  Result<Deployment> to = LoadDeployment(flags.to);
  if (!to.ok()) return ReportError(to.status());
  Result<std::string> text = ReadTextFile(flags.plan);
  if (!text.ok()) return ReportError(text.status());
  Result<Transition> transition = ParseTransitionJson(*text, flags.plan);
  if (!transition.ok()) return ReportError(transition.status());
  const TransitionCheck check = CheckTransition(*from, *to, *transition);
  const std::string report = flags.format == "json" ? FormatTransitionCheckJson(check)
                                                    : EscapeMessage(CheckText(check, flags.plan));
  if (Status s = WriteOutput(flags.output, report); !s.ok()) return ReportError(s);
  return check.ok() ? kExitOk : kExitInfeasible;
}

constexpr const char* kTransitionFooter =
    "A transition moves a running cluster from deployment A to deployment B in phases\n"
    "of steps (create, destroy or reconfigure a MIG instance) without dropping any\n"
    "service below its floor, min(its rate in A, its rate in B), counting each\n"
    "instance for its SLO-safe capacity (as planners and the validator do). Its JSON is\n"
    "\"format\": \"tessera-transition\", version 1 (docs/transitions.md).\n\n"
    "Planning (this command): B must serve the new scenario (the validator, under B's\n"
    "rule). B's GPUs are mapped onto the cluster (A's GPUs, then spare GPUs numbered\n"
    "after A's) so that as many instances as possible stay in place; then only what\n"
    "differs is destroyed, created or reconfigured in place, in as few phases as the\n"
    "floors, the MIG geometry and --spare-gpus allow. The result is checked by the\n"
    "independent checker before it is written.\n\n"
    "Exit codes: 0 a transition was written; 3 none keeps every floor with\n"
    "--spare-gpus spare GPUs (the error gives the fewest that would); 2 bad input.\n\n"
    "Subcommands:\n"
    "  check   replay a transition JSON on A and report every broken invariant\n\n"
    "Examples:\n"
    "  tessera plan --scenario day.yaml --format json -o A.json\n"
    "  tessera plan --scenario night.yaml --format json -o B.json\n"
    "  tessera transition --scenario night.yaml --from A.json --to B.json --spare-gpus 2 \\\n"
    "      --format json -o T.json --svg T.svg\n"
    "  tessera transition check --from A.json --to B.json --plan T.json";

constexpr const char* kCheckFooter =
    "Replays the transition on A's GPUs with the checker's own bookkeeping (not the\n"
    "planner's) and reports every invariant that does not hold, each on one line\n"
    "naming the phase, the step and the rule:\n"
    "  (a) every GPU's layout, at every phase's start plus its creates, is a legal\n"
    "      MIG layout: allowed starts, no overlap (so no create uses slices that a\n"
    "      destroy of the same phase frees); a destroy or reconfigure names an\n"
    "      instance present at its phase's start;\n"
    "  (b) every service keeps capacity >= min(its rate in A, its rate in B) in the\n"
    "      worst state of every phase (its destroys done, its creates not yet);\n"
    "  (c) at most max(GPUs of A, GPUs of B) + spare_gpus GPUs hold an instance;\n"
    "  (d) the final state equals B, B's GPU i on cluster GPU gpu_map[i], and no\n"
    "      other GPU holds an instance;\n"
    "plus unique step ids and a recorded summary equal to the measured one. MPS\n"
    "plans (GPUs shared whole) have no transitions.\n\n"
    "Prints \"ok: <summary>\" (steps, phases, GPUs touched, peak GPUs, lowest\n"
    "capacity / floor), or every violation and the measured summary; --format json\n"
    "prints {\"ok\", \"violations\", \"summary\"}.\n\n"
    "Exit codes: 0 the transition passes, 3 it breaks some invariant (listed),\n"
    "2 bad input (a file missing or malformed; the error names file and field).\n\n"
    "Examples:\n"
    "  tessera plan --scenario examples/scenarios/s6.yaml --planner parva --format json -o A.json\n"
    "  tessera transition check --from A.json --to B.json --plan T.json\n"
    "  tessera transition check --from A.json --to B.json --plan T.json --format json -o "
    "check.json";

}  // namespace

void AddTransitionCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "transition",
      "Plan the move of a running cluster from one plan to another, or check one (check)");
  cmd->footer(kTransitionFooter);
  cmd->require_subcommand(0, 1);
  auto plan = std::make_shared<PlanFlags>();
  AddInputFlags(*cmd, plan->input);
  cmd->add_option("--from", plan->from, "Deployment JSON the cluster runs now (A)");
  cmd->add_option("--to", plan->to, "Deployment JSON to reach (B), made for --scenario");
  cmd->add_option("--spare-gpus", plan->spare_gpus,
                  "GPUs beyond max(GPUs of A, GPUs of B) the transition may use (default 0)")
      ->check(Within(limits::kSpareGpus));
  cmd->add_option("--format", plan->format, "Write the transition as text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("-o,--output", plan->output,
                  "Write the transition to FILE (atomically; default stdout)");
  cmd->add_option("--svg", plan->svg,
                  "Also draw every service's capacity over the phases (its floor dashed) and "
                  "the GPUs before and after, to FILE");
  auto flags = std::make_shared<CheckFlags>();
  CLI::App* check = cmd->add_subcommand(
      "check", "Check a transition JSON between two deployments with the independent checker");
  check->footer(kCheckFooter);
  check->add_option("--from", flags->from, "Deployment JSON the cluster runs now (A)")->required();
  check->add_option("--to", flags->to, "Deployment JSON to reach (B)")->required();
  check->add_option("--plan", flags->plan, "Transition JSON (format tessera-transition)")
      ->required();
  check->add_option("--format", flags->format, "Report as text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  check->add_option("-o,--output", flags->output,
                    "Write the report to FILE (atomically; default stdout)");
  check->callback([flags, &exit_code] { exit_code = RunCheck(*flags); });
  cmd->callback([cmd, check, plan, &exit_code] {
    if (!check->parsed()) exit_code = RunPlan(*plan);
  });
}

}  // namespace tessera::cli
