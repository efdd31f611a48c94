// Milp: a small mixed-integer linear program and its solution by COIN-OR CBC,
// behind an interface that keeps COIN's headers and exceptions out of the
// rest of Tessera.
//
// Minimises c.x subject to row_lo <= A x <= row_hi and col_lo <= x <= col_hi,
// some columns integer. Solves are single-threaded and deterministic for
// a given model and time limit (the limit only cuts a search short).
//
// Thread-safety: a Milp is a value; Solve* are const and share nothing.
#ifndef TESSERA_PLANNERS_EXACT_MILP_H_
#define TESSERA_PLANNERS_EXACT_MILP_H_

#include <limits>
#include <utility>
#include <vector>

#include "tessera/status.h"

class OsiSolverInterface;  // COIN-OR, kept out of this header

namespace tessera {

inline constexpr double kMilpInfinity = std::numeric_limits<double>::infinity();

struct MilpSolution {
  std::vector<double> values;  // one per column; empty when none was found
  double objective = kMilpInfinity;
  double bound = -kMilpInfinity;  // proven lower bound on the optimum
  bool optimal = false;           // objective == the optimum, proven
};

class Milp {
 public:
  // Adds a column; returns its index. REQUIRES: lo <= hi.
  int AddColumn(double cost, double lo, double hi, bool integer);
  // Changes a column's cost. REQUIRES: 0 <= col < columns().
  void SetCost(int col, double cost) { cost_[col] = cost; }
  double cost(int col) const { return cost_[col]; }
  // Adds the row lo <= sum coeff x_col <= hi over (col, coeff) pairs.
  void AddRow(std::vector<std::pair<int, double>> coeffs, double lo, double hi);
  int columns() const { return static_cast<int>(cost_.size()); }

  // The linear relaxation. Internal if the LP solver fails; the solution's
  // `values` are empty and `bound` is +infinity when the LP is infeasible.
  Result<MilpSolution> SolveRelaxation() const;
  // Branch and bound for at most `time_limit_s` seconds (> 0), starting from
  // `start` when it is a feasible point (same size as columns(); else it is
  // ignored). Returns the best solution found (possibly none) with CBC's
  // proven bound. Internal if CBC fails.
  Result<MilpSolution> Solve(double time_limit_s, const std::vector<double>& start = {}) const;

 private:
  // Loads the model into `solver`, integrality included.
  void Load(OsiSolverInterface& solver) const;

  struct Row {
    std::vector<std::pair<int, double>> coeffs;
    double lo, hi;
  };
  std::vector<double> cost_, col_lo_, col_hi_;
  std::vector<char> integer_;
  std::vector<Row> rows_;
};

}  // namespace tessera

#endif  // TESSERA_PLANNERS_EXACT_MILP_H_
