#include "compare_rows.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "tessera/gpu_catalog.h"
#include "tessera/plan/plan.h"

namespace tessera::cli {
namespace {

bool IsMps(const Row& r) { return r.sharing == Sharing::kMps; }

std::string Percent(const Row& r, double share) {
  return IsMps(r) ? "-" : fmt::format("{:.1f}%", 100 * share);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A run that took this share of its time limit or more used it up (the
// fast algorithm stops at 90% of it, exact at 95%): running it again would
// time the limit.
constexpr double kUsedLimitShare = 0.8;

}  // namespace

size_t ServicesMeetingSlo(const Deployment& d, const std::vector<Violation>& violations) {
  return std::count_if(d.services.begin(), d.services.end(), [&](const ServiceOutcome& s) {
    if (s.status == ServiceStatus::kInfeasible || s.predicted_violation) return false;
    return std::none_of(violations.begin(), violations.end(),
                        [&](const Violation& v) { return v.where == "service " + s.name; });
  });
}

double CatalogCostPerHour(const Deployment& d) {
  double cost = 0;
  for (const GpuAssignment& g : d.gpus) {
    const Result<const GpuModel*> gpu = FindGpu(GpuModelName(d, g));
    if (gpu.ok()) cost += (*gpu)->cloud.price_per_hour;
  }
  return cost;
}

std::string CompareTitle(const ProblemInputs& input, const Result<Problem>& mig,
                         const Result<Problem>& mps) {
  const Scenario& s = (mig.ok() ? mig : mps)->scenario();
  std::vector<std::string> sources;
  if (mig.ok()) sources.push_back(mig->gpu().name + ", " + InputsSource(input, false));
  if (mps.ok()) sources.push_back(mps->gpu().name + " shared whole, " + InputsSource(input, true));
  return fmt::format("{} ({} services; {})\n", s.name.empty() ? s.source : s.name,
                     s.services.size(), fmt::join(sources, "; "));
}

// Every row's gap against the strongest bound a planner of its kind found
// (the exact planner's proven bound when it ran), so the gaps compare.
void MeasureAgainstStrongestBound(std::vector<Row>& rows) {
  for (const bool mps : {false, true}) {
    const Row* strongest = nullptr;
    for (const Row& r : rows) {
      if ((r.sharing == Sharing::kMps) != mps) continue;
      if (!strongest || r.metrics.lower_bound > strongest->metrics.lower_bound) strongest = &r;
    }
    if (!strongest) continue;
    const LowerBound bound{strongest->metrics.lower_bound, strongest->metrics.lower_bound_kind};
    for (Row& r : rows) {
      if ((r.sharing == Sharing::kMps) != mps) continue;
      r.metrics.lower_bound = bound.gpus;
      r.metrics.lower_bound_kind = bound.kind;
      r.metrics.gap = bound.gpus > 0 ? static_cast<double>(r.metrics.gpus) / bound.gpus - 1 : 0;
    }
  }
}

// Every bound known for each problem, weakest first, the solver's last when
// the exact planner proved one stronger than the others.
std::vector<LowerBound> KnownBounds(const Result<Problem>& mig, const Result<Problem>& mps,
                                    const std::vector<Row>& rows) {
  std::vector<LowerBound> bounds;
  for (const Result<Problem>* p : {&mig, &mps}) {
    if (!p->ok()) continue;
    for (const LowerBound& b : AllBounds(**p)) bounds.push_back(b);
  }
  for (const Row& r : rows) {
    if (r.metrics.lower_bound_kind == "solver") {
      bounds.push_back({r.metrics.lower_bound, "solver"});
      break;
    }
  }
  return bounds;
}

std::string FormatCompareTable(const std::vector<Row>& rows,
                               const std::vector<LowerBound>& bounds) {
  size_t width = 16;  // the planner column fits the longest name
  for (const Row& r : rows) width = std::max(width, r.planner.size());
  std::string out =
      fmt::format("{:<{}} {:>5} {:>9} {:>9} {:>9} {:>20} {:>7} {:>8} {:>7} {:>9}  {}\n", "planner",
                  width, "gpus", "gpcs/SMs", "int.slack", "ext.frag", "lower bound", "gap",
                  "cost/h", "slo met", "plan_ms", "valid");
  for (const Row& r : rows) {
    const Metrics& m = r.metrics;
    const std::string used =
        IsMps(r) ? fmt::format("{:.0f}%", m.resource_pct) : fmt::format("{}", m.gpcs);
    out += fmt::format(
        "{:<{}} {:>5} {:>9} {:>9} {:>9} {:>20} {:>6.1f}% {:>8} {:>7} {:>9.3f}  {}{}\n", r.planner,
        width, m.gpus, used, Percent(r, m.internal_slack), Percent(r, m.external_fragmentation),
        fmt::format("{} ({})", m.lower_bound, m.lower_bound_kind), 100 * m.gap,
        m.cost_per_hour > 0 ? fmt::format("{:.2f}", m.cost_per_hour) : "-",
        fmt::format("{}/{}", r.slo_met, r.services), m.plan_ms,
        r.violations == 0 ? "yes" : fmt::format("NO ({})", r.violations),
        r.infeasible ? fmt::format(", {} infeasible", r.infeasible) : "");
  }
  std::vector<std::string> known;
  for (const LowerBound& b : bounds) known.push_back(fmt::format("{} {}", b.kind, b.gpus));
  out += fmt::format("lower bounds on gpus: {}\n", fmt::join(known, ", "));
  out +=
      "slo met: services predicted to meet their latency SLO and rate (MIG rows: by the "
      "validator under the plan's rule; MPS rows: by the iGniter model)\n";
  if (std::any_of(rows.begin(), rows.end(), IsMps)) {
    out += "MPS rows: gpcs/SMs is the SMs allocated (% of one GPU)\n";
  }
  if (std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.catalog_price; })) {
    out +=
        "cost/h: GPUs at the catalog's one-GPU cloud price where the scenario gives none "
        "(`tessera gpus`)\n";
  }
  return out;
}

std::string FormatCompareCsv(const std::vector<Row>& rows) {
  std::string out =
      "planner,sharing,gpus,gpcs,internal_slack,external_fragmentation,lower_bound,"
      "lower_bound_kind,gap,cost_per_hour,catalog_price,resource_pct,predicted_violations,services,"
      "slo_met,plan_ms,violations,infeasible\n";
  for (const Row& r : rows) {
    const Metrics& m = r.metrics;
    out += fmt::format(
        "{},{},{},{},{:.4f},{:.4f},{},{},{:.4f},{:.4f},{},{:.4f},{},{},{},{:.4f},{},{}\n",
        r.planner, SharingName(r.sharing), m.gpus, m.gpcs, m.internal_slack,
        m.external_fragmentation, m.lower_bound, m.lower_bound_kind, m.gap, m.cost_per_hour,
        r.catalog_price, m.resource_pct, m.predicted_violations, r.services, r.slo_met, m.plan_ms,
        r.violations, r.infeasible);
  }
  return out;
}

std::string FormatCompareJson(const std::vector<Row>& rows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    const Metrics& m = r.metrics;
    out.push_back({{"planner", r.planner},
                   {"sharing", SharingName(r.sharing)},
                   {"gpus", m.gpus},
                   {"gpcs", m.gpcs},
                   {"internal_slack", m.internal_slack},
                   {"external_fragmentation", m.external_fragmentation},
                   {"lower_bound", m.lower_bound},
                   {"lower_bound_kind", m.lower_bound_kind},
                   {"gap", m.gap},
                   {"cost_per_hour", m.cost_per_hour},
                   {"catalog_price", r.catalog_price},
                   {"resource_pct", m.resource_pct},
                   {"predicted_violations", m.predicted_violations},
                   {"services", r.services},
                   {"slo_met", r.slo_met},
                   {"plan_ms", m.plan_ms},
                   {"valid", r.violations == 0},
                   {"infeasible_services", r.infeasible}});
  }
  return out.dump(2) + "\n";
}

Result<std::optional<Row>> MeasurePlanner(const Planner& planner, const Result<Problem>& problem,
                                          int repeat, const PlanContext& context,
                                          std::map<std::string, std::vector<std::string>>& skipped,
                                          std::vector<std::string>& ran_once) {
  Status fits = problem.ok() ? CheckPlannerFits(planner, *problem) : problem.status();
  if (!fits.ok()) {
    skipped[fits.message()].push_back(std::string(planner.Name()));
    return std::optional<Row>();
  }
  Row row{std::string(planner.Name()), Sharing::kMigMps, {}, 0, 0};
  std::vector<double> times;
  for (int k = 0; k < repeat; ++k) {
    Result<PlanReport> run = RunPlanner(planner, *problem, context);
    if (k == 0 && run.status().code() == StatusCode::kInvalidArgument) {
      skipped[run.status().message()].push_back(std::string(planner.Name()));
      return std::optional<Row>();
    }
    TESSERA_ASSIGN_OR_RETURN(PlanReport report, std::move(run));
    const Deployment& d = report.deployment;
    times.push_back(d.metrics.plan_ms);
    if (k == 0 && repeat > 1 && context.time_limit_s > 0 &&
        d.metrics.plan_ms >= kUsedLimitShare * 1000 * context.time_limit_s) {
      ran_once.push_back(std::string(planner.Name()));
      repeat = 1;
    }
    if (k > 0) continue;
    row.sharing = d.sharing;
    row.metrics = d.metrics;
    const std::vector<Violation> violations = ValidateDeployment(d, *problem);
    row.violations = violations.size();
    row.infeasible = std::count_if(d.services.begin(), d.services.end(), [](const auto& s) {
      return s.status == ServiceStatus::kInfeasible;
    });
    row.services = d.services.size();
    row.slo_met = ServicesMeetingSlo(d, violations);
    if (!(row.metrics.cost_per_hour > 0)) {
      row.metrics.cost_per_hour = CatalogCostPerHour(d);
      row.catalog_price = true;
    }
  }
  row.metrics.plan_ms = Median(times);
  return std::optional<Row>(std::move(row));
}

}  // namespace tessera::cli
