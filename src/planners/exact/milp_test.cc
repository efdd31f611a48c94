#include "planners/exact/milp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tessera {
namespace {

constexpr double kEps = 1e-6;

// No time limit.
const Deadline& Never() {
  static const Deadline never(SystemClock(), 0);
  return never;
}

Result<MilpSolution> Solve(const Milp& milp, const std::vector<double>& start = {}) {
  MilpSolver solver(milp);
  return solver.Solve(Never(), kMilpInfinity, start);
}

Result<MilpSolution> SolveRelaxation(const Milp& milp) {
  MilpSolver solver(milp);
  return solver.SolveRelaxation(Never());
}

// The 0-1 knapsack max 8a + 11b + 6c + 4d s.t. 5a + 7b + 4c + 3d <= 14, as
// a minimisation of the negated values. Integer optimum: b + c + d (weight
// 14, value 21). LP optimum by value/weight order (1.6, 1.57, 1.5, 1.33):
// a = b = 1 (weight 12), c = 1/2 fills the last 2: value 8 + 11 + 3 = 22.
Milp Knapsack() {
  Milp milp;
  const double value[] = {8, 11, 6, 4}, weight[] = {5, 7, 4, 3};
  std::vector<std::pair<int, double>> row;
  for (int i = 0; i < 4; ++i) row.push_back({milp.AddColumn(-value[i], 0, 1, true), weight[i]});
  milp.AddRow(std::move(row), -kMilpInfinity, 14);
  return milp;
}

TEST(Milp, KnapsackReachesItsIntegerOptimumProvenOptimal) {
  Result<MilpSolution> s = Solve(Knapsack());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->values.size(), 4u);
  EXPECT_NEAR(s->objective, -21, kEps);
  EXPECT_NEAR(s->bound, -21, kEps);
  EXPECT_TRUE(s->optimal);
  const std::vector<double> expected = {0, 1, 1, 1};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(s->values[i], expected[i], kEps) << i;
}

TEST(Milp, RelaxationIsTheFractionalKnapsack) {
  Result<MilpSolution> s = SolveRelaxation(Knapsack());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_NEAR(s->objective, -22, kEps);
  EXPECT_NEAR(s->bound, -22, kEps);
  const std::vector<double> expected = {1, 1, 0.5, 0};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(s->values[i], expected[i], kEps) << i;
}

// min 3x + 2y s.t. x + y >= 3.5, x integer in [0, 2], y continuous in
// [0, 1.5]. y is cheaper per unit (2 < 3), so y = 1.5 and x = 2: 6 + 3 = 9.
TEST(Milp, MixedIntegerAndContinuousColumns) {
  Milp milp;
  const int x = milp.AddColumn(3, 0, 2, true);
  const int y = milp.AddColumn(2, 0, 1.5, false);
  milp.AddRow({{x, 1}, {y, 1}}, 3.5, kMilpInfinity);
  Result<MilpSolution> s = Solve(milp);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_NEAR(s->objective, 9, kEps);
  EXPECT_NEAR(s->values[x], 2, kEps);
  EXPECT_NEAR(s->values[y], 1.5, kEps);
}

TEST(Milp, InfeasibleModelHasNoValuesAndAnInfiniteBound) {
  // x in [0, 1] cannot reach 2, even fractionally.
  Milp milp;
  const int x = milp.AddColumn(1, 0, 1, true);
  milp.AddRow({{x, 1}}, 2, kMilpInfinity);
  for (const Result<MilpSolution>& s : {SolveRelaxation(milp), Solve(milp)}) {
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_TRUE(s->values.empty());
    EXPECT_EQ(s->bound, kMilpInfinity);
    EXPECT_FALSE(s->optimal);
  }
}

TEST(Milp, IntegralityAloneCanMakeAModelInfeasible) {
  // 2x = 1: the LP has x = 1/2; no integer x does.
  Milp milp;
  const int x = milp.AddColumn(1, 0, 10, true);
  milp.AddRow({{x, 2}}, 1, 1);
  Result<MilpSolution> lp = SolveRelaxation(milp);
  ASSERT_TRUE(lp.ok());
  EXPECT_NEAR(lp->objective, 0.5, kEps);
  Result<MilpSolution> ip = Solve(milp);
  ASSERT_TRUE(ip.ok());
  EXPECT_TRUE(ip->values.empty());
  EXPECT_FALSE(ip->optimal);
}

// min x + y s.t. x + y >= 1, both 0-1: two optima of cost 1. Started at
// the optimum the solver does not pick by itself, it keeps that start: the
// start meets the LP bound and nothing beats it.
TEST(Milp, FeasibleStartIsKeptWhenNothingBeatsIt) {
  Milp milp;
  const int x = milp.AddColumn(1, 0, 1, true);
  const int y = milp.AddColumn(1, 0, 1, true);
  milp.AddRow({{x, 1}, {y, 1}}, 1, kMilpInfinity);
  Result<MilpSolution> own = Solve(milp);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  ASSERT_EQ(own->values.size(), 2u);
  const std::vector<double> other = {std::round(own->values[y]), std::round(own->values[x])};
  ASSERT_NE(other, own->values);
  Result<MilpSolution> s = Solve(milp, other);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->optimal);
  EXPECT_NEAR(s->objective, 1, kEps);
  EXPECT_EQ(s->values, other);
}

TEST(Milp, PoorStartIsImprovedToTheOptimum) {
  // A feasible but poor start (all three items of cost 1, 2, 3 when one
  // suffices) is improved to the optimum, cost 1.
  Milp milp;
  std::vector<std::pair<int, double>> row;
  for (double cost : {1, 2, 3}) row.push_back({milp.AddColumn(cost, 0, 1, true), 1});
  milp.AddRow(std::move(row), 1, kMilpInfinity);
  Result<MilpSolution> s = Solve(milp, {1, 1, 1});
  ASSERT_TRUE(s.ok());
  EXPECT_NEAR(s->objective, 1, kEps);
  EXPECT_TRUE(s->optimal);
  // A start of the wrong size is ignored.
  Result<MilpSolution> ignored = Solve(milp, {1});
  ASSERT_TRUE(ignored.ok());
  EXPECT_NEAR(ignored->objective, 1, kEps);
}

TEST(Milp, ModelWithoutRowsIsOptimalAtItsLowerBounds) {
  Milp milp;
  milp.AddColumn(1, 0, 5, true);
  Result<MilpSolution> s = Solve(milp);
  ASSERT_TRUE(s.ok());
  EXPECT_NEAR(s->objective, 0, kEps);
  EXPECT_TRUE(s->optimal);
}

}  // namespace
}  // namespace tessera
