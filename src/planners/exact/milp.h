// Milp: a mixed-integer linear program, and MilpSolver: that program loaded
// once into COIN-OR (CLP for its linear relaxation, CBC for branch and
// bound), behind an interface that keeps COIN's headers and exceptions out
// of the rest of Tessera.
//
// Minimises c.x subject to row_lo <= A x <= row_hi and col_lo <= x <= col_hi,
// some columns integer. A Milp stores A row by row in one compressed array
// (each AddRow appends in time linear in its length); a MilpSolver hands it
// to COIN as one packed matrix, once, and every later solve (relaxation,
// branch and bound, a changed objective) works on that one loaded copy.
// Solves are single-threaded and stop at a Deadline read on its own (injected)
// clock: the relaxation after any simplex iteration, branch and bound after
// any node (and at CBC's own wall-clock limit, set to the time left).
// Without a deadline passing they are deterministic.
//
// Thread-safety: a Milp is a value; a MilpSolver belongs to one thread.
#ifndef TESSERA_PLANNERS_EXACT_MILP_H_
#define TESSERA_PLANNERS_EXACT_MILP_H_

#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "tessera/status.h"
#include "tessera/util/clock.h"

class OsiClpSolverInterface;  // COIN-OR, kept out of this header

namespace tessera {

inline constexpr double kMilpInfinity = std::numeric_limits<double>::infinity();

struct MilpSolution {
  std::vector<double> values;  // one per column; empty when none was found
  double objective = kMilpInfinity;
  double bound = -kMilpInfinity;  // proven lower bound on the optimum
  bool optimal = false;           // objective == the optimum, proven
  bool stopped = false;           // the deadline cut the solve short
};

class Milp {
 public:
  // Adds a column; returns its index. REQUIRES: lo <= hi.
  int AddColumn(double cost, double lo, double hi, bool integer);
  // Adds the row lo <= sum coeff x_col <= hi over (col, coeff) pairs, each
  // column at most once. REQUIRES: 0 <= col < columns().
  void AddRow(std::span<const std::pair<int, double>> coeffs, double lo, double hi);
  void AddRow(std::initializer_list<std::pair<int, double>> coeffs, double lo, double hi) {
    AddRow(std::span<const std::pair<int, double>>(coeffs.begin(), coeffs.size()), lo, hi);
  }
  double cost(int col) const { return cost_[col]; }
  int columns() const { return static_cast<int>(cost_.size()); }
  int rows() const { return static_cast<int>(row_lo_.size()); }
  // Nonzero coefficients of A.
  size_t elements() const { return index_.size(); }
  // sum_col cost(col) values[col]. REQUIRES: values.size() == columns().
  double Objective(const std::vector<double>& values) const;

 private:
  friend class MilpSolver;
  std::vector<double> cost_, col_lo_, col_hi_;
  std::vector<char> integer_;
  // Row r's coefficients are index_/value_[row_start_[r], row_start_[r + 1]).
  std::vector<int> row_start_{0};
  std::vector<int> index_;
  std::vector<double> value_;
  std::vector<double> row_lo_, row_hi_;
};

class MilpSolver {
 public:
  // Loads `milp` into COIN-OR (one packed matrix, integrality included).
  explicit MilpSolver(const Milp& milp);
  ~MilpSolver();
  MilpSolver(const MilpSolver&) = delete;
  MilpSolver& operator=(const MilpSolver&) = delete;

  int columns() const { return columns_; }
  int rows() const;

  // The linear relaxation, stopped when `deadline` passes (then `stopped`,
  // no values, and the bound -infinity). Its values are empty and its bound
  // +infinity when the LP is infeasible. Internal if the LP solver fails.
  Result<MilpSolution> SolveRelaxation(const Deadline& deadline);
  // Branch and bound until `deadline`, which is `seconds_left` away (CBC
  // also stops on its own wall clock then, where it reads no deadline;
  // infinity = no limit), starting from `start` when it is a feasible point
  // (same size as columns(); else it is ignored). Returns the best solution
  // found (possibly none) with CBC's proven bound; a relaxation solved
  // before on this solver is CBC's root LP, warm. Internal if CBC fails.
  Result<MilpSolution> Solve(const Deadline& deadline, double seconds_left,
                             const std::vector<double>& start = {});

  // Changes the objective of the loaded model, or adds a row to it (for a
  // second solve with another objective, e.g. a tie break).
  void SetCost(int col, double cost);
  void AddRow(std::span<const std::pair<int, double>> coeffs, double lo, double hi);

 private:
  std::unique_ptr<OsiClpSolverInterface> solver_;
  int columns_ = 0;
  std::vector<double> cost_;  // the objective, to price a start
};

}  // namespace tessera

#endif  // TESSERA_PLANNERS_EXACT_MILP_H_
