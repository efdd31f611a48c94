// `tessera transition`: moving a running cluster from one plan to another.
// `transition check` runs the independent checker (transition_check.h) on a
// transition JSON. The planning form (`transition --scenario NEW.yaml --from
// A.json --to B.json`) is to come: until then the command needs a
// subcommand.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "tessera/deployment_format.h"
#include "tessera/text_io.h"
#include "tessera/transition_check.h"
#include "tessera/transition_format.h"

namespace tessera::cli {
namespace {

struct CheckFlags {
  std::string from;
  std::string to;
  std::string plan;
  std::string format = "text";
  std::string output = "-";
};

Result<Deployment> ReadDeployment(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(const std::string text, ReadTextFile(path));
  return ParseDeploymentJson(text, path);
}

std::string CheckText(const TransitionCheck& check, const std::string& plan) {
  if (check.ok()) return "ok: " + FormatTransitionSummary(check.measured) + "\n";
  std::string out = fmt::format("{}: {} violation(s):\n", plan, check.violations.size());
  for (const std::string& v : check.violations) out += "  " + v + "\n";
  out += "measured: " + FormatTransitionSummary(check.measured) + "\n";
  return out;
}

int RunCheck(const CheckFlags& flags) {
  Result<Deployment> from = ReadDeployment(flags.from);
  if (!from.ok()) return ReportError(from.status());
  Result<Deployment> to = ReadDeployment(flags.to);
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
    "service below its floor, min(its rate in A, its rate in B). Its JSON is\n"
    "\"format\": \"tessera-transition\", version 1 (docs/transitions.md).\n\n"
    "Subcommands:\n"
    "  check   replay a transition JSON on A and report every broken invariant\n\n"
    "Examples:\n"
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
      "transition", "Move a running cluster from one plan to another: check a transition (check)");
  cmd->footer(kTransitionFooter);
  cmd->require_subcommand(1);
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
}

}  // namespace tessera::cli
