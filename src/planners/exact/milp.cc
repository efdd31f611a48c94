#include "planners/exact/milp.h"

#include <cmath>
#include <coin/CbcModel.hpp>
#include <coin/CoinError.hpp>
#include <coin/CoinPackedMatrix.hpp>
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

}  // namespace

int Milp::AddColumn(double cost, double lo, double hi, bool integer) {
  cost_.push_back(cost);
  col_lo_.push_back(lo);
  col_hi_.push_back(hi);
  integer_.push_back(integer ? 1 : 0);
  return columns() - 1;
}

void Milp::AddRow(std::vector<std::pair<int, double>> coeffs, double lo, double hi) {
  rows_.push_back({std::move(coeffs), lo, hi});
}

void Milp::Load(OsiSolverInterface& solver) const {
  solver.messageHandler()->setLogLevel(0);
  CoinPackedMatrix matrix(false, 0, 0);
  matrix.setDimensions(0, columns());
  std::vector<double> row_lo, row_hi;
  for (const Row& row : rows_) {
    CoinPackedVector v;
    for (const auto& [col, coeff] : row.coeffs) v.insert(col, coeff);
    matrix.appendRow(v);
    row_lo.push_back(ToCoin(row.lo, solver));
    row_hi.push_back(ToCoin(row.hi, solver));
  }
  const std::vector<double> lo = ToCoin(col_lo_, solver), hi = ToCoin(col_hi_, solver);
  solver.loadProblem(matrix, lo.data(), hi.data(), cost_.data(), row_lo.data(), row_hi.data());
  for (int col = 0; col < columns(); ++col) {
    if (integer_[col]) solver.setInteger(col);
  }
}

Result<MilpSolution> Milp::SolveRelaxation() const {
  try {
    OsiClpSolverInterface solver;
    Load(solver);
    solver.initialSolve();
    MilpSolution out;
    if (solver.isProvenPrimalInfeasible()) {
      out.bound = kMilpInfinity;
      return out;
    }
    if (!solver.isProvenOptimal()) return Status::Internal("the LP relaxation was not solved");
    out.values.assign(solver.getColSolution(), solver.getColSolution() + columns());
    out.objective = out.bound = solver.getObjValue();
    out.optimal = true;
    return out;
  } catch (const CoinError& e) {
    return Status::Internal("LP solver: " + e.message());
  }
}

Result<MilpSolution> Milp::Solve(double time_limit_s, const std::vector<double>& start) const {
  try {
    OsiClpSolverInterface solver;
    Load(solver);
    CbcModel model(solver);
    model.setLogLevel(0);
    model.messageHandler()->setLogLevel(0);
    model.setUseElapsedTime(true);
    model.setMaximumSeconds(time_limit_s);
    if (static_cast<int>(start.size()) == columns()) {
      double objective = 0;
      for (int col = 0; col < columns(); ++col) objective += cost_[col] * start[col];
      model.setBestSolution(start.data(), columns(), objective, true);
    }
    model.branchAndBound();
    MilpSolution out;
    if (model.isProvenInfeasible()) {
      out.bound = kMilpInfinity;
      return out;
    }
    if (const double* best = model.bestSolution()) {
      out.values.assign(best, best + columns());
      out.objective = model.getObjValue();
    }
    out.bound = model.getBestPossibleObjValue();
    out.optimal = model.isProvenOptimal() && !out.values.empty();
    return out;
  } catch (const CoinError& e) {
    return Status::Internal("MILP solver: " + e.message());
  }
}

}  // namespace tessera
