// `tessera compare`: every registered planner on one scenario, side by side.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "compare_rows.h"
#include "help_text.h"
#include "tessera/plan/metrics.h"
#include "tessera/plan/plan.h"
#include "tessera/validator.h"

namespace tessera::cli {
namespace {

struct CompareFlags {
  ProblemInputs input;
  SearchOptions search;
  std::string format = "table";
  int repeat = 5;
  bool list = false;
};

int RunCompare(const CompareFlags& flags) {
  if (flags.list) {
    for (const std::string& name : BuiltinPlanners().Names()) {
      std::cout << fmt::format("{:<24} {}\n", name, BuiltinPlanners().Description(name));
    }
    return kExitOk;
  }
  const bool mps_given = !flags.input.coefficients.empty();
  // Without --coeffs the MPS planners run on coefficients and tables derived
  // from the MIG profiles; the flags that go with --coeffs would be ignored.
  if (!mps_given) {
    if (Status s = CheckInputsApply(flags.input, false,
                                    "compare without --coeffs (the MPS planners then use "
                                    "coefficients derived from the profiles)");
        !s.ok()) {
      return ReportError(s);
    }
  }
  // The scenario is read once for both kinds of planners.
  const Result<Scenario> scenario = LoadScenario(flags.input);
  if (!scenario.ok()) return ReportError(scenario.status());
  const Result<Problem> mig = LoadProblem(flags.input, *scenario, false, nullptr, CliNotes());
  // Derived coefficients that cannot be had (say, a pool of several GPU
  // models) keep the MPS planners out with the reason; given ones must load.
  const Result<Problem> mps = LoadProblem(flags.input, *scenario, true, nullptr, CliNotes());
  if (mps_given && !mps.ok()) return ReportError(mps.status());
  // No MIG problem (say, a V100 scenario) is an error unless the MPS planners
  // run instead and no MIG flag asked for the MIG planners.
  const bool asks_for_mig = !CheckInputsApply(flags.input, true, "").ok();
  if (!mig.ok() && (!mps_given || asks_for_mig)) return ReportError(mig.status());
  std::vector<Row> rows;
  std::map<std::string, std::vector<std::string>> skipped;  // reason -> planners
  std::map<double, std::vector<std::string>> limited;       // seconds -> planners
  std::vector<std::string> ran_once;
  bool paper_score_ran = false;  // a MIG-serving planner ran under --score paper
  for (const std::string& name : BuiltinPlanners().Names()) {
    Result<std::unique_ptr<Planner>> planner = BuiltinPlanners().Create(name);
    if (!planner.ok()) return ReportError(planner.status());
    const bool is_mps = (*planner)->Mode() == Sharing::kMps;
    PlanContext context = ContextFrom(flags.search, **planner);
    // Without --time-limit, a planner whose work is not about linear in the
    // services runs under the budget it names for compare (said below).
    const bool defaulted = !(context.time_limit_s > 0) && (*planner)->CompareTimeLimitS() > 0;
    if (defaulted) context.time_limit_s = (*planner)->CompareTimeLimitS();
    Result<std::optional<Row>> row =
        MeasurePlanner(**planner, is_mps ? mps : mig, flags.repeat, context, skipped, ran_once);
    if (!row.ok()) return ReportError(row.status());
    if (!*row) continue;
    paper_score_ran |= flags.search.score == "paper" && (*planner)->UsesMigServingScore();
    rows.push_back(**row);
    if (defaulted) limited[context.time_limit_s].push_back(name);
  }
  for (const auto& [reason, names] : skipped) {
    PrintMessage(fmt::format("tessera: note: skipped {}: {}\n", fmt::join(names, ", "), reason));
  }
  std::string limits;
  for (const auto& [seconds, names] : limited) {
    limits +=
        fmt::format("{}{} {:g} s", limits.empty() ? "" : "; ", fmt::join(names, ", "), seconds);
  }
  // Said under the table, or as a note beside JSON and CSV.
  if (!limits.empty()) {
    limits = fmt::format(
        "time limits (no --time-limit given; --time-limit T sets T for every planner): {}\n",
        limits);
    if (flags.format != "table") PrintMessage("tessera: note: " + limits);
  }
  if (paper_score_ran) {
    const std::string score =
        "score: MIG-serving's planners ranked GPU configurations by the paper's uncapped "
        "score (--score paper)\n";
    if (flags.format != "table") PrintMessage("tessera: note: " + score);
    limits += score;
  }
  if (!ran_once.empty()) {
    PrintMessage(fmt::format(
        "tessera: note: ran once, not {} times, as the first run used its time limit: {}\n",
        flags.repeat, fmt::join(ran_once, ", ")));
  }
  if (rows.empty()) {
    return ReportError(Status::InvalidArgument(
        "no planner could plan the scenario; the notes above say why for each"));
  }
  // MPS problems are priced when made: at the catalog's price unless --price
  // or the scenario's pool gave one.
  for (Row& r : rows) {
    if (r.sharing == Sharing::kMps) {
      r.catalog_price = !flags.input.price_per_hour && scenario->pool.empty();
    }
  }
  MeasureAgainstStrongestBound(rows);
  std::cout << (flags.format == "json" ? FormatCompareJson(rows)
                : flags.format == "csv"
                    ? FormatCompareCsv(rows)
                    : CompareTitle(flags.input, mig, mps) +
                          FormatCompareTable(rows, KnownBounds(mig, mps, rows)) + limits);
  const bool all_valid =
      std::all_of(rows.begin(), rows.end(), [](const Row& r) { return r.violations == 0; });
  return all_valid ? kExitOk : kExitInternal;
}

}  // namespace

void AddCompareCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<CompareFlags>();
  CLI::App* cmd =
      app.add_subcommand("compare", "Run every registered planner on one scenario, side by side");
  cmd->footer(kCompareHelp);
  AddInputFlags(*cmd, flags->input);
  AddSearchFlags(*cmd, flags->search);
  cmd->add_option("--format", flags->format, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--repeat", flags->repeat, "Runs per planner; plan_ms is their median")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--list", flags->list, "List the registered planners and exit");
  cmd->callback([flags, &exit_code] { exit_code = RunCompare(*flags); });
}

}  // namespace tessera::cli
