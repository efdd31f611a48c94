// The rows of `tessera compare`: their gaps against the strongest bound, the
// bounds known, and their three forms: a table for people, CSV and JSON for
// programs.
#ifndef TESSERA_APP_COMPARE_ROWS_H_
#define TESSERA_APP_COMPARE_ROWS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/plan/metrics.h"
#include "tessera/planner.h"
#include "tessera/problem.h"
#include "tessera/problem_inputs.h"
#include "tessera/status.h"
#include "tessera/validator.h"

namespace tessera::cli {

// One planner's plan of the scenario.
struct Row {
  std::string planner;
  Sharing sharing = Sharing::kMigMps;
  Metrics metrics;  // plan_ms: the median over the repeats
  size_t violations = 0;
  size_t infeasible = 0;
  size_t services = 0;
  // Services predicted to meet their SLO: see ServicesMeetingSlo.
  size_t slo_met = 0;
  // Whether metrics.cost_per_hour is the catalog's price (the scenario gave
  // none): see CatalogCostPerHour.
  bool catalog_price = false;
};

// The services of `d` predicted to meet their latency SLO and rate: not
// infeasible, not predicted to miss by the iGniter model (MPS plans), and
// not named by any of the validator's `violations` (MIG plans, under the
// rule they were made under).
size_t ServicesMeetingSlo(const Deployment& d, const std::vector<Violation>& violations);

// The hourly price of `d`'s GPUs at the catalog's one-GPU cloud price of
// each model (gpu_catalog.h), for plans of scenarios that give no prices.
double CatalogCostPerHour(const Deployment& d);

// One planner's row; nullopt when the problem lacks what it needs, or the
// planner cannot plan it as asked (say, within the pool's max_count): then
// `skipped` maps the reason to the planners it keeps out. Runs `repeat`
// times, or once when that run used its context's time limit (then added to
// `ran_once`).
Result<std::optional<Row>> MeasurePlanner(const Planner& planner, const Result<Problem>& problem,
                                          int repeat, const PlanContext& context,
                                          std::map<std::string, std::vector<std::string>>& skipped,
                                          std::vector<std::string>& ran_once);

// Every row's gap against the strongest bound a planner of its kind (MIG or
// MPS) found (the exact planner's proven bound when it ran), so gaps compare.
void MeasureAgainstStrongestBound(std::vector<Row>& rows);

// The table's title: the scenario, its services, and for each problem that
// loaded its GPU and where its figures come from.
std::string CompareTitle(const ProblemInputs& input, const Result<Problem>& mig,
                         const Result<Problem>& mps);

// Every bound known for each problem that loaded, weakest first, the
// solver's last when the exact planner proved one.
std::vector<LowerBound> KnownBounds(const Result<Problem>& mig, const Result<Problem>& mps,
                                    const std::vector<Row>& rows);

// One line per row (MIG rows: GPUs, compute slices, slack, fragmentation;
// MPS rows: GPUs and the SMs they allocate; both: bound, gap, hourly cost,
// services predicted to meet their SLO of all, plan_ms, validity), then
// every lower bound in `bounds`.
std::string FormatCompareTable(const std::vector<Row>& rows, const std::vector<LowerBound>& bounds);
std::string FormatCompareCsv(const std::vector<Row>& rows);
std::string FormatCompareJson(const std::vector<Row>& rows);

}  // namespace tessera::cli

#endif  // TESSERA_APP_COMPARE_ROWS_H_
