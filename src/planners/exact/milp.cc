#include "planners/exact/milp.h"

#include <algorithm>
#include <cmath>
#include <coin/CbcEventHandler.hpp>
#include <coin/CbcModel.hpp>
#include <coin/ClpEventHandler.hpp>
#include <coin/ClpSolve.hpp>
#include <coin/CoinError.hpp>
#include <coin/CoinPackedVector.hpp>
#include <coin/OsiClpSolverInterface.hpp>
#include <string>

namespace tessera {
namespace {

// COIN marks an absent bound with its own large value, not IEEE infinity.
double ToCoin(double value, const OsiSolverInterface& solver) {
  if (std::isinf(value)) return value > 0 ? solver.getInfinity() : -solver.getInfinity();
  return value;
}

std::vector<double> ToCoin(const std::vector<double>& values, const OsiSolverInterface& solver) {
  std::vector<double> out;
  out.reserve(values.size());
  for (double v : values) out.push_back(ToCoin(v, solver));
  return out;
}

// Stops CLP's simplex after the iteration in which `deadline` passes.
class ClpDeadline : public ClpEventHandler {
 public:
  explicit ClpDeadline(const Deadline& deadline) : deadline_(&deadline) {}
  int event(Event which) override {
    return which == endOfIteration && deadline_->Passed() ? 0 : -1;
  }
  ClpEventHandler* clone() const override { return new ClpDeadline(*this); }

 private:
  const Deadline* deadline_;
};

// Stops CBC's branch and bound after the node in which `deadline` passes.
// Only node and tree events stop it: a solution found is always kept.
class CbcDeadline : public CbcEventHandler {
 public:
  explicit CbcDeadline(const Deadline& deadline) : deadline_(&deadline) {}
  CbcAction event(CbcEvent which) override {
    const bool progress = which == node || which == treeStatus;
    return progress && deadline_->Passed() ? stop : noAction;
  }
  CbcEventHandler* clone() const override { return new CbcDeadline(*this); }

 private:
  const Deadline* deadline_;
};

}  // namespace

int Milp::AddColumn(double cost, double lo, double hi, bool integer) {
  cost_.push_back(cost);
  col_lo_.push_back(lo);
  col_hi_.push_back(hi);
  integer_.push_back(integer ? 1 : 0);
  return columns() - 1;
}

void Milp::AddRow(std::span<const std::pair<int, double>> coeffs, double lo, double hi) {
  for (const auto& [col, coeff] : coeffs) {
    index_.push_back(col);
    value_.push_back(coeff);
  }
  row_start_.push_back(static_cast<int>(index_.size()));
  row_lo_.push_back(lo);
  row_hi_.push_back(hi);
}

double Milp::Objective(const std::vector<double>& values) const {
  double objective = 0;
  for (int col = 0; col < columns(); ++col) objective += cost_[col] * values[col];
  return objective;
}

MilpSolver::MilpSolver(const Milp& milp)
    : solver_(std::make_unique<OsiClpSolverInterface>()),
      columns_(milp.columns()),
      cost_(milp.cost_) {
  OsiClpSolverInterface& solver = *solver_;
  solver.messageHandler()->setLogLevel(0);
  solver.getModelPtr()->setLogLevel(0);
  // CLP keeps its matrix by column: transpose the rows once (counting sort).
  const int rows = milp.rows();
  std::vector<CoinBigIndex> start(columns_ + 1, 0);
  for (int col : milp.index_) ++start[col + 1];
  for (int col = 0; col < columns_; ++col) start[col + 1] += start[col];
  std::vector<CoinBigIndex> next(start.begin(), start.end() - 1);
  std::vector<int> index(milp.elements());
  std::vector<double> value(milp.elements());
  for (int row = 0; row < rows; ++row) {
    for (int k = milp.row_start_[row]; k < milp.row_start_[row + 1]; ++k) {
      const CoinBigIndex at = next[milp.index_[k]]++;
      index[at] = row;
      value[at] = milp.value_[k];
    }
  }
  const std::vector<double> col_lo = ToCoin(milp.col_lo_, solver);
  const std::vector<double> col_hi = ToCoin(milp.col_hi_, solver);
  const std::vector<double> row_lo = ToCoin(milp.row_lo_, solver);
  const std::vector<double> row_hi = ToCoin(milp.row_hi_, solver);
  solver.loadProblem(columns_, rows, start.data(), index.data(), value.data(), col_lo.data(),
                     col_hi.data(), cost_.data(), row_lo.data(), row_hi.data());
  for (int col = 0; col < columns_; ++col) {
    if (milp.integer_[col]) solver.setInteger(col);
  }
}

MilpSolver::~MilpSolver() = default;

int MilpSolver::rows() const { return solver_->getNumRows(); }

void MilpSolver::SetCost(int col, double cost) {
  cost_[col] = cost;
  solver_->setObjCoeff(col, cost);
}

void MilpSolver::AddRow(std::span<const std::pair<int, double>> coeffs, double lo, double hi) {
  CoinPackedVector row;
  for (const auto& [col, coeff] : coeffs) row.insert(col, coeff);
  solver_->addRow(row, ToCoin(lo, *solver_), ToCoin(hi, *solver_));
}

Result<MilpSolution> MilpSolver::SolveRelaxation(const Deadline& deadline) {
  MilpSolution out;
  if (deadline.Passed()) {
    out.stopped = true;
    return out;
  }
  ClpSimplex& clp = *solver_->getModelPtr();
  try {
    const ClpDeadline stop(deadline);
    clp.passInEventHandler(&stop);
    // CLP's dual simplex without presolve: on the cover models (many more
    // columns than rows) about 10x faster than OsiClp's initialSolve.
    ClpSolve options;
    options.setSolveType(ClpSolve::useDual);
    options.setPresolveType(ClpSolve::presolveOff);
    clp.initialSolve(options);
    // The handler must not stop the node LPs of a later branch and bound:
    // an LP cut short there would read as an infeasible node.
    const ClpEventHandler none;
    clp.passInEventHandler(&none);
  } catch (const CoinError& e) {
    return Status::Internal("LP solver: " + e.message());
  }
  if (solver_->isProvenPrimalInfeasible()) {
    out.bound = kMilpInfinity;
    return out;
  }
  if (!solver_->isProvenOptimal()) {
    if (deadline.Passed()) {
      out.stopped = true;
      return out;
    }
    return Status::Internal("the LP relaxation was not solved");
  }
  out.values.assign(solver_->getColSolution(), solver_->getColSolution() + columns_);
  out.objective = out.bound = solver_->getObjValue();
  out.optimal = true;
  return out;
}

Result<MilpSolution> MilpSolver::Solve(const Deadline& deadline, double seconds_left,
                                       const std::vector<double>& start) {
  const double start_s = deadline.ElapsedS();
  // The root LP, under the deadline (CBC would solve it on its own clock
  // only); warm when this solver has solved it before.
  TESSERA_ASSIGN_OR_RETURN(MilpSolution out, SolveRelaxation(deadline));
  if (out.stopped || out.values.empty()) return out;
  out = MilpSolution{};
  try {
    CbcModel model(*solver_);
    model.setLogLevel(0);
    model.messageHandler()->setLogLevel(0);
    const CbcDeadline stop(deadline);
    model.passInEventHandler(&stop);
    // CBC also checks its own wall clock where it runs long without a node
    // event (the root's cuts and heuristics).
    model.setUseElapsedTime(true);
    if (static_cast<int>(start.size()) == columns_) {
      double objective = 0;
      for (int col = 0; col < columns_; ++col) objective += cost_[col] * start[col];
      model.setBestSolution(start.data(), columns_, objective, true);
    }
    // What is left after the LP and the check of the start.
    const double left = seconds_left - (deadline.ElapsedS() - start_s);
    if (std::isfinite(left)) model.setMaximumSeconds(std::max(left, 1e-3));
    model.branchAndBound();
    if (model.isProvenInfeasible()) {
      out.bound = kMilpInfinity;
      return out;
    }
    if (const double* best = model.bestSolution()) {
      out.values.assign(best, best + columns_);
      out.objective = model.getObjValue();
    }
    out.bound = model.getBestPossibleObjValue();
    out.optimal = model.isProvenOptimal() && !out.values.empty();
    out.stopped = !model.isProvenOptimal();
    return out;
  } catch (const CoinError& e) {
    return Status::Internal("MILP solver: " + e.message());
  }
}

}  // namespace tessera
