#include "tessera/validator.h"

#include <gtest/gtest.h>

#include <functional>

#include "tessera/plan.h"
#include "tiny_problem.h"

namespace tessera {
namespace {

using testing::TinyProblem;
using testing::TinyScenario;
using testing::TinyTable;

// A valid plan: s0 (400 req/s) on 3g@4 + 2g@0 of GPU 0; s1 (50) on 1g@0 of GPU 1.
Deployment ValidDeployment() {
  Problem p = TinyProblem({400, 50});
  const auto& s0 = p.services()[0].feasible;
  const auto& s1 = p.services()[1].feasible;
  PlanResult r;
  r.gpus = {{{0, s0[2], 4}, {0, s0[1], 0}}, {{1, s1[0], 0}}};
  return BuildDeployment(p, r, "hand", {1, "fractional"}, 0);
}

std::vector<Violation> Check(const Deployment& d, double slo_ms = 1000) {
  return ValidateDeployment(d, TinyScenario({400, 50}, slo_ms), TinyTable(), LatencyRule{});
}

TEST(Validator, AcceptsAValidDeployment) { EXPECT_TRUE(Check(ValidDeployment()).empty()); }

TEST(Validator, FindsEachKindOfViolation) {
  struct Case {
    std::string name;
    std::function<void(Deployment&)> corrupt;
    std::string rule;
  };
  const std::vector<Case> cases = {
      {"overlap: a 1g at slice 5 inside the 3g at 4",
       [](Deployment& d) {
         Instance i = d.gpus[1].instances[0];
         i.start = 5;
         d.gpus[0].instances.push_back(i);
       },
       "geometry"},
      {"a 3g may not start at 2", [](Deployment& d) { d.gpus[0].instances[1].start = 2; },
       "geometry"},
      {"unknown profile", [](Deployment& d) { d.gpus[1].instances[0].profile = "5g.50gb"; },
       "geometry"},
      {"batch not profiled", [](Deployment& d) { d.gpus[1].instances[0].batch = 64; }, "latency"},
      {"throughput claimed above the profile",
       [](Deployment& d) { d.gpus[1].instances[0].throughput_rps = 150; }, "latency"},
      {"capacity: drop s0's 2g (300 < 400)",
       [](Deployment& d) { d.gpus[0].instances.erase(d.gpus[0].instances.begin()); }, "capacity"},
      {"instance of an unknown service",
       [](Deployment& d) { d.gpus[1].instances[0].service = "x"; }, "consistency"},
      {"model differs from the service's",
       [](Deployment& d) { d.gpus[1].instances[0].model = "y"; }, "consistency"},
      {"service missing", [](Deployment& d) { d.services.pop_back(); }, "consistency"},
      {"infeasible service with instances",
       [](Deployment& d) {
         d.services[1].status = ServiceStatus::kInfeasible;
         d.services[1].reason = "r";
       },
       "consistency"},
      {"gpu count claimed wrong", [](Deployment& d) { d.metrics.gpus = 1; }, "consistency"},
  };
  for (const Case& c : cases) {
    Deployment d = ValidDeployment();
    c.corrupt(d);
    std::vector<Violation> v = Check(d);
    ASSERT_FALSE(v.empty()) << c.name;
    EXPECT_TRUE(
        std::any_of(v.begin(), v.end(), [&](const Violation& x) { return x.rule == c.rule; }))
        << c.name << ":\n"
        << FormatViolations(v);
  }
}

TEST(Validator, AppliesTheLatencyRuleToTheServicesSlo) {
  // SLO 17 ms: budget 8.5 ms; the 3g (8 ms) passes, the 2g (9 ms) and 1g (10 ms) fail.
  std::vector<Violation> v = Check(ValidDeployment(), 17);
  EXPECT_EQ(
      std::count_if(v.begin(), v.end(), [](const Violation& x) { return x.rule == "latency"; }), 2);
}

TEST(Validator, RejectsAnUnknownGpu) {
  Deployment d = ValidDeployment();
  d.gpu = "v100";
  std::vector<Violation> v = Check(d);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].rule, "consistency");
}

}  // namespace
}  // namespace tessera
