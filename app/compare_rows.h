// The rows of `tessera compare`: their gaps against the strongest bound, the
// bounds known, and their three forms: a table for people, CSV and JSON for
// programs.
#ifndef TESSERA_APP_COMPARE_ROWS_H_
#define TESSERA_APP_COMPARE_ROWS_H_

#include <string>
#include <vector>

#include "cli_common.h"
#include "tessera/deployment.h"
#include "tessera/metrics.h"
#include "tessera/problem.h"
#include "tessera/status.h"

namespace tessera::cli {

// One planner's plan of the scenario.
struct Row {
  std::string planner;
  Sharing sharing = Sharing::kMigMps;
  Metrics metrics;  // plan_ms: the median over the repeats
  size_t violations = 0;
  size_t infeasible = 0;
};

// Every row's gap against the strongest bound a planner of its kind (MIG or
// MPS) found (the exact planner's proven bound when it ran), so gaps compare.
void MeasureAgainstStrongestBound(std::vector<Row>& rows);

// The table's title: the scenario, its services, and for each problem that
// loaded its GPU and where its figures come from.
std::string CompareTitle(const InputFlags& input, const Result<Problem>& mig,
                         const Result<Problem>& mps);

// Every bound known for each problem that loaded, weakest first, the
// solver's last when the exact planner proved one.
std::vector<LowerBound> KnownBounds(const Result<Problem>& mig, const Result<Problem>& mps,
                                    const std::vector<Row>& rows);

// One line per row (MIG rows: GPUs, compute slices, slack, fragmentation;
// MPS rows: GPUs and the SMs they allocate; both: bound, gap, hourly cost,
// services predicted to miss their SLO, plan_ms, validity), then every
// lower bound in `bounds`.
std::string FormatCompareTable(const std::vector<Row>& rows, const std::vector<LowerBound>& bounds);
std::string FormatCompareCsv(const std::vector<Row>& rows);
std::string FormatCompareJson(const std::vector<Row>& rows);

}  // namespace tessera::cli

#endif  // TESSERA_APP_COMPARE_ROWS_H_
