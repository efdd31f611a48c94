// `tessera compare`: every registered planner on one scenario, side by side.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli_common.h"
#include "commands.h"
#include "mps_cli.h"
#include "tessera/metrics.h"
#include "tessera/plan.h"
#include "tessera/validator.h"

namespace tessera::cli {
namespace {

struct CompareFlags {
  InputFlags input;
  SearchFlags search;
  MpsFlags mps;
  std::string format = "table";
  int repeat = 5;
  bool list = false;
};

struct Row {
  std::string planner;
  Metrics metrics;  // plan_ms is the median over the repeats
  size_t violations = 0;
  size_t infeasible = 0;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One planner's row; nullopt when it plans for one GPU model and the pool
// has several (a note says so on stderr).
Result<std::optional<Row>> RunOne(const std::string& name, const Problem& problem, const Inputs& in,
                                  int repeat, const PlanContext& context) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, BuiltinPlanners().Create(name));
  if (problem.pool().size() > 1 && !planner->SupportsPools()) {
    std::cerr << "tessera: note: " << name << " plans one GPU model; skipped for this pool\n";
    return std::optional<Row>();
  }
  Row row{name, {}, 0, 0};
  std::vector<double> times;
  for (int k = 0; k < repeat; ++k) {
    TESSERA_ASSIGN_OR_RETURN(PlanReport report, RunPlanner(*planner, problem, context));
    times.push_back(report.deployment.metrics.plan_ms);
    if (k > 0) continue;
    row.metrics = report.deployment.metrics;
    row.violations =
        ValidateDeployment(report.deployment, in.scenario, in.profiles, in.rule).size();
    row.infeasible = std::count_if(
        report.deployment.services.begin(), report.deployment.services.end(),
        [](const ServiceOutcome& s) { return s.status == ServiceStatus::kInfeasible; });
  }
  row.metrics.plan_ms = Median(times);
  return std::optional<Row>(std::move(row));
}

// Every row's gap against the strongest bound any planner found (the exact
// planner's proven bound when it ran), so the gaps are comparable.
void MeasureAgainstStrongestBound(std::vector<Row>& rows) {
  const Row* strongest = nullptr;
  for (const Row& r : rows) {
    if (!strongest || r.metrics.lower_bound > strongest->metrics.lower_bound) strongest = &r;
  }
  if (!strongest) return;
  const int bound = strongest->metrics.lower_bound;
  const std::string kind = strongest->metrics.lower_bound_kind;
  for (Row& r : rows) {
    r.metrics.lower_bound = bound;
    r.metrics.lower_bound_kind = kind;
    r.metrics.gap = bound > 0 ? static_cast<double>(r.metrics.gpus) / bound - 1 : 0;
  }
}

// Every bound known for the problem, weakest first, the solver's last when
// the exact planner proved one stronger than the others.
std::vector<LowerBound> KnownBounds(const Problem& problem, const std::vector<Row>& rows) {
  std::vector<LowerBound> bounds = AllBounds(problem);
  if (!rows.empty() && rows.front().metrics.lower_bound_kind == "solver") {
    bounds.push_back({rows.front().metrics.lower_bound, "solver"});
  }
  return bounds;
}

std::string FormatTable(const std::vector<Row>& rows, const Inputs& in,
                        const std::vector<LowerBound>& bounds) {
  std::string out = fmt::format("{} on {} ({} services, profiles: {})\n",
                                in.scenario.name.empty() ? in.scenario.source : in.scenario.name,
                                in.gpu->name, in.scenario.services.size(), in.profiles_source);
  size_t width = 16;  // the planner column fits the longest name
  for (const Row& r : rows) width = std::max(width, r.planner.size());
  out += fmt::format("{:<{}} {:>5} {:>5} {:>9} {:>9} {:>20} {:>7} {:>9}  {}\n", "planner", width,
                     "gpus", "gpcs", "int.slack", "ext.frag", "lower bound", "gap", "plan_ms",
                     "valid");
  for (const Row& r : rows) {
    const Metrics& m = r.metrics;
    out += fmt::format("{:<{}} {:>5} {:>5} {:>8.1f}% {:>8.1f}% {:>20} {:>6.1f}% {:>9.3f}  {}{}\n",
                       r.planner, width, m.gpus, m.gpcs, 100 * m.internal_slack,
                       100 * m.external_fragmentation,
                       fmt::format("{} ({})", m.lower_bound, m.lower_bound_kind), 100 * m.gap,
                       m.plan_ms, r.violations == 0 ? "yes" : fmt::format("NO ({})", r.violations),
                       r.infeasible ? fmt::format(", {} infeasible", r.infeasible) : "");
  }
  std::vector<std::string> known;
  for (const LowerBound& b : bounds) known.push_back(fmt::format("{} {}", b.kind, b.gpus));
  return out + fmt::format("lower bounds on gpus: {}\n", fmt::join(known, ", "));
}

std::string FormatCsv(const std::vector<Row>& rows) {
  std::string out =
      "planner,gpus,gpcs,internal_slack,external_fragmentation,lower_bound,lower_bound_kind,gap,"
      "plan_ms,violations,infeasible\n";
  for (const Row& r : rows) {
    const Metrics& m = r.metrics;
    out += fmt::format("{},{},{},{:.4f},{:.4f},{},{},{:.4f},{:.4f},{},{}\n", r.planner, m.gpus,
                       m.gpcs, m.internal_slack, m.external_fragmentation, m.lower_bound,
                       m.lower_bound_kind, m.gap, m.plan_ms, r.violations, r.infeasible);
  }
  return out;
}

std::string FormatJson(const std::vector<Row>& rows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    const Metrics& m = r.metrics;
    out.push_back({{"planner", r.planner},
                   {"gpus", m.gpus},
                   {"gpcs", m.gpcs},
                   {"internal_slack", m.internal_slack},
                   {"external_fragmentation", m.external_fragmentation},
                   {"lower_bound", m.lower_bound},
                   {"lower_bound_kind", m.lower_bound_kind},
                   {"gap", m.gap},
                   {"plan_ms", m.plan_ms},
                   {"valid", r.violations == 0},
                   {"infeasible_services", r.infeasible}});
  }
  return out.dump(2) + "\n";
}

// ---- MPS planners (--coeffs) ----------------------------------------------

struct MpsRow {
  MpsMetrics metrics;  // plan_ms is the median over the repeats
  std::string planner;
  size_t invalid = 0;
  size_t infeasible = 0;
};

// One MPS planner's row; nullopt when it lacks its inputs (noted on stderr).
Result<std::optional<MpsRow>> RunOneMps(const std::string& name, const MpsProblem& problem,
                                        int repeat, const PlanContext& context) {
  if (name == "gpulet" && !problem.gpulet) {
    std::cerr << "tessera: note: gpulet needs --gpulet-tables; skipped\n";
    return std::optional<MpsRow>();
  }
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<MpsPlanner> planner, BuiltinMpsPlanners().Create(name));
  MpsRow row;
  row.planner = name;
  std::vector<double> times;
  for (int k = 0; k < repeat; ++k) {
    TESSERA_ASSIGN_OR_RETURN(MpsDeployment d, RunMpsPlanner(*planner, problem, context));
    times.push_back(d.metrics.plan_ms);
    if (k > 0) continue;
    row.metrics = d.metrics;
    row.invalid = ValidateMpsDeployment(d, problem).size();
    row.infeasible = std::count_if(d.services.begin(), d.services.end(), [](const auto& s) {
      return s.status == ServiceStatus::kInfeasible;
    });
  }
  row.metrics.plan_ms = Median(times);
  return std::optional<MpsRow>(std::move(row));
}

std::string FormatMpsTable(const std::vector<MpsRow>& rows, const MpsProblem& problem) {
  std::string out = fmt::format(
      "{} on {} (MPS, {} at ${:.3f}/h; {} services; latencies by the iGniter model)\n",
      problem.scenario.name.empty() ? problem.scenario.source : problem.scenario.name, problem.gpu,
      FindMpsGpu(problem.gpu).ok() ? (*FindMpsGpu(problem.gpu))->instance : "",
      problem.price_per_hour, problem.scenario.services.size());
  out += fmt::format("{:<10} {:>5} {:>9} {:>10} {:>11} {:>11} {:>9}  {}\n", "planner", "gpus",
                     "cost/h", "resources", "lower bound", "violations", "plan_ms", "valid");
  for (const MpsRow& r : rows) {
    const MpsMetrics& m = r.metrics;
    out +=
        fmt::format("{:<10} {:>5} {:>9.2f} {:>9.1f}% {:>11} {:>11} {:>9.3f}  {}{}\n", r.planner,
                    m.gpus, m.cost_per_hour, m.resource_pct, m.lower_bound, m.predicted_violations,
                    m.plan_ms, r.invalid == 0 ? "yes" : fmt::format("NO ({})", r.invalid),
                    r.infeasible ? fmt::format(", {} infeasible", r.infeasible) : "");
  }
  return out +
         "violations: services the iGniter model predicts miss their latency budget or rate\n";
}

std::string FormatMpsCsv(const std::vector<MpsRow>& rows) {
  std::string out =
      "planner,gpus,cost_per_hour,resource_pct,lower_bound,predicted_violations,plan_ms,"
      "invalid,infeasible\n";
  for (const MpsRow& r : rows) {
    const MpsMetrics& m = r.metrics;
    out += fmt::format("{},{},{:.4f},{:.4f},{},{},{:.4f},{},{}\n", r.planner, m.gpus,
                       m.cost_per_hour, m.resource_pct, m.lower_bound, m.predicted_violations,
                       m.plan_ms, r.invalid, r.infeasible);
  }
  return out;
}

std::string FormatMpsJson(const std::vector<MpsRow>& rows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const MpsRow& r : rows) {
    const MpsMetrics& m = r.metrics;
    out.push_back({{"planner", r.planner},
                   {"gpus", m.gpus},
                   {"cost_per_hour", m.cost_per_hour},
                   {"resource_pct", m.resource_pct},
                   {"lower_bound", m.lower_bound},
                   {"predicted_violations", m.predicted_violations},
                   {"plan_ms", m.plan_ms},
                   {"valid", r.invalid == 0},
                   {"infeasible_services", r.infeasible}});
  }
  return out.dump(2) + "\n";
}

int RunMpsCompare(const CompareFlags& flags) {
  Result<MpsProblem> problem = LoadMpsProblem(flags.input, flags.mps);
  if (!problem.ok()) return ReportError(problem.status());
  std::vector<MpsRow> rows;
  for (const std::string& name : BuiltinMpsPlanners().Names()) {
    Result<std::optional<MpsRow>> row =
        RunOneMps(name, *problem, flags.repeat, ContextFrom(flags.search));
    if (!row.ok()) return ReportError(row.status());
    if (*row) rows.push_back(**row);
  }
  std::cout << (flags.format == "json"  ? FormatMpsJson(rows)
                : flags.format == "csv" ? FormatMpsCsv(rows)
                                        : FormatMpsTable(rows, *problem));
  const bool all_valid =
      std::all_of(rows.begin(), rows.end(), [](const MpsRow& r) { return r.invalid == 0; });
  return all_valid ? kExitOk : kExitInternal;
}

int RunCompare(const CompareFlags& flags) {
  if (flags.list) {
    for (const std::string& name : BuiltinPlanners().Names()) {
      std::cout << fmt::format("{:<24} {}\n", name, BuiltinPlanners().Description(name));
    }
    std::cout << "\nMPS planners (with --coeffs):\n";
    for (const std::string& name : BuiltinMpsPlanners().Names()) {
      std::cout << fmt::format("{:<24} {}\n", name, BuiltinMpsPlanners().Description(name));
    }
    return kExitOk;
  }
  if (!flags.mps.coefficients.empty()) return RunMpsCompare(flags);
  Result<Inputs> in = LoadInputs(flags.input);
  if (!in.ok()) return ReportError(in.status());
  Result<Problem> problem = BuildProblem(*in);
  if (!problem.ok()) return ReportError(problem.status());
  std::vector<Row> rows;
  for (const std::string& name : BuiltinPlanners().Names()) {
    Result<std::optional<Row>> row =
        RunOne(name, *problem, *in, flags.repeat, ContextFrom(flags.search));
    if (!row.ok()) return ReportError(row.status());
    if (*row) rows.push_back(**row);
  }
  MeasureAgainstStrongestBound(rows);
  const std::string text = flags.format == "json" ? FormatJson(rows)
                           : flags.format == "csv"
                               ? FormatCsv(rows)
                               : FormatTable(rows, *in, KnownBounds(*problem, rows));
  std::cout << text;
  const bool all_valid =
      std::all_of(rows.begin(), rows.end(), [](const Row& r) { return r.violations == 0; });
  return all_valid ? kExitOk : kExitInternal;
}

}  // namespace

void AddCompareCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<CompareFlags>();
  CLI::App* cmd =
      app.add_subcommand("compare", "Run every registered planner on one scenario, side by side");
  cmd->footer(
      "Run every registered planner on one scenario and print one row each: GPUs,\n"
      "compute slices, internal slack, external fragmentation, the strongest lower\n"
      "bound any planner proved (the exact planner's when it ran), each gap to it,\n"
      "median plan_ms over --repeat runs, and whether the validator accepts the plan.\n"
      "The table ends with every lower bound known, weakest first: MIG-serving's\n"
      "(compute alone, MIG rules ignored), the fractional one, the integer cover,\n"
      "and the solver's. Searching planners take --time-limit and --seed, and\n"
      "report progress on stderr when a run is long.\n\n"
      "Examples:\n"
      "  tessera compare --scenario examples/scenarios/s6.yaml\n"
      "  tessera compare --scenario examples/scenarios/s5.yaml --replicate 10 --repeat 1\n"
      "  tessera gen --preset normal-1 -o normal-1.yaml\n"
      "  tessera compare --scenario normal-1.yaml --repeat 1 --time-limit 20\n"
      "  tessera compare --list\n\n"
      "With --coeffs, the MPS planners instead (igniter, ffd+, gslice+, and gpulet with\n"
      "--gpulet-tables), on whole GPUs shared through MPS: GPUs, hourly cost, the\n"
      "resources allocated, Theorem 1's lower bound on GPUs, and the services the\n"
      "iGniter model predicts miss their SLO:\n"
      "  tessera compare --scenario examples/scenarios/igniter-12.yaml \\\n"
      "      --coeffs ../shared/data/igniter/derived/fitted_coefficients_v100.json \\\n"
      "      --gpulet-tables ../shared/data/igniter/i-Gniter/Profile/tools/gpulet.config");
  AddInputFlags(*cmd, flags->input);
  AddSearchFlags(*cmd, flags->search);
  AddMpsFlags(*cmd, flags->mps);
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
