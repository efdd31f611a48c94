#include "tessera/validator.h"

#include <gtest/gtest.h>

#include <functional>

#include "tessera/plan/plan.h"
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
  r.gpus = MigGpus{{{0, s0[2], 4}, {0, s0[1], 0}}, {{1, s1[0], 0}}};
  return BuildDeployment(p, r, "hand", {1, "fractional"}, 0);
}

std::vector<Violation> Check(const Deployment& d, double slo_ms = 1000) {
  Result<Problem> p =
      Problem::Build(TinyScenario({400, 50}, slo_ms), testing::A100(), TinyTable(), d.rule);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return ValidateDeployment(d, *p);
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
         Instance i = d.gpus[1].instances()[0];
         i.start = 5;
         d.gpus[0].mig().push_back(i);
       },
       "geometry"},
      {"a 3g may not start at 2", [](Deployment& d) { d.gpus[0].instances()[1].start = 2; },
       "geometry"},
      {"unknown profile", [](Deployment& d) { d.gpus[1].instances()[0].profile = "5g.50gb"; },
       "geometry"},
      {"batch not profiled", [](Deployment& d) { d.gpus[1].instances()[0].batch = 64; }, "latency"},
      {"throughput claimed above the profile",
       [](Deployment& d) { d.gpus[1].instances()[0].throughput_rps = 150; }, "latency"},
      {"capacity: drop s0's 2g (300 < 400)",
       [](Deployment& d) { d.gpus[0].mig().erase(d.gpus[0].mig().begin()); }, "capacity"},
      {"instance of an unknown service",
       [](Deployment& d) { d.gpus[1].instances()[0].service = "x"; }, "consistency"},
      {"model differs from the service's",
       [](Deployment& d) { d.gpus[1].instances()[0].model = "y"; }, "consistency"},
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

// Model "m" of TinyTable() on A100-80GB, and on H100-80GB with other numbers
// (so a check against the wrong model's entry shows) and no 2g.20gb entry:
//   1g.10gb: 150 req/s, 7 ms    3g.40gb: 450 req/s, 6 ms
//   7g.80gb: 1200 req/s, 30 ms (batch 8)
ProfileTable TinyTableWithH100() {
  ProfileTable t = TinyTable();
  auto add = [&](const char* profile, int batch, double tp, double lat) {
    Status s = t.Add({{"m", "h100-80gb", profile, batch, 1}, tp, lat, {}, {}});
    EXPECT_TRUE(s.ok()) << s.ToString();
  };
  add("1g.10gb", 1, 150, 7);
  add("3g.40gb", 1, 450, 6);
  add("7g.80gb", 8, 1200, 30);
  return t;
}

// The triplet of `spec` on pool entry `pool` with profile `name`.
Triplet TripletOn(const Problem& p, int service, int pool, const std::string& name) {
  for (const Triplet& t : p.services()[service].feasible) {
    if (t.pool == pool && p.pool()[pool].gpu->profiles[t.profile].name == name) return t;
  }
  ADD_FAILURE() << "no triplet " << name << " on pool entry " << pool;
  return {};
}

// A valid plan on a pool of A100-80GB (first, so the deployment's model) and
// H100-80GB: GPU 0 is an H100 with s0 (400 req/s) on 3g.40gb@4 (450 req/s);
// GPU 1 an A100 with s1 (50 req/s) on 1g.10gb@0 (100 req/s).
Deployment MixedDeployment() {
  const GpuModel& h100 = **FindGpu("h100-80gb");
  Result<Problem> p =
      Problem::BuildPool(TinyScenario({400, 50}), {{&testing::A100(), 4, 0}, {&h100, 7, 0}},
                         TinyTableWithH100(), testing::BareRule());
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return {};
  PlanResult r;
  r.gpus =
      MigGpus{{{0, TripletOn(*p, 0, 1, "3g.40gb"), 4}}, {{1, TripletOn(*p, 1, 0, "1g.10gb"), 0}}};
  return BuildDeployment(*p, r, "hand", {1, "fractional"}, 0);
}

std::vector<Violation> CheckMixed(const Deployment& d) {
  const GpuModel& h100 = **FindGpu("h100-80gb");
  Result<Problem> p =
      Problem::BuildPool(TinyScenario({400, 50}), {{&testing::A100(), 4, 0}, {&h100, 7, 0}},
                         TinyTableWithH100(), d.rule);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return ValidateDeployment(d, *p);
}

bool HasRule(const std::vector<Violation>& v, const std::string& rule,
             const std::string& where_prefix = "") {
  return std::any_of(v.begin(), v.end(), [&](const Violation& x) {
    return x.rule == rule && x.where.starts_with(where_prefix);
  });
}

TEST(Validator, ChecksEachGpuAgainstItsOwnModel) {
  const Deployment d = MixedDeployment();
  ASSERT_EQ(d.gpus.size(), 2u);
  ASSERT_EQ(d.gpu, "a100-80gb");
  ASSERT_EQ(d.gpus[0].gpu, "h100-80gb");
  ASSERT_EQ(d.gpus[1].gpu, "");
  ASSERT_DOUBLE_EQ(d.gpus[0].instances()[0].throughput_rps, 450);  // H100's entry
  const std::vector<Violation> v = CheckMixed(d);
  EXPECT_TRUE(v.empty()) << FormatViolations(v);
}

TEST(Validator, FindsPerGpuModelViolations) {
  struct Case {
    std::string name;
    std::function<void(Deployment&)> corrupt;
    std::string rule;
    std::string where;  // prefix of the violation's `where`
  };
  const std::vector<Case> cases = {
      {"a profile H100-80GB does not have (H100-94GB's 3g.47gb)",
       [](Deployment& d) { d.gpus[0].instances()[0].profile = "3g.47gb"; }, "geometry", "gpu 0"},
      {"2g.20gb is profiled on A100 only: moved onto the H100",
       [](Deployment& d) {
         d.gpus[0].mig().insert(d.gpus[0].mig().begin(),
                                Instance{"2g.20gb", 0, "s0", "m", 1, 1, 220, 9});
       },
       "latency", "gpu 0 2g.20gb@0"},
      {"the H100 relabelled as the deployment's A100: H100 numbers do not match A100's entry",
       [](Deployment& d) { d.gpus[0].gpu.clear(); }, "latency", "gpu 0 3g.40gb@4"},
      {"the A100 relabelled as an H100: its 1g.10gb claims 100 req/s, H100's says 150",
       [](Deployment& d) { d.gpus[1].gpu = "h100-80gb"; }, "latency", "gpu 1 1g.10gb@0"},
      {"an unknown per-GPU model", [](Deployment& d) { d.gpus[0].gpu = "h100-999gb"; },
       "consistency", "gpu 0"},
  };
  for (const Case& c : cases) {
    Deployment d = MixedDeployment();
    ASSERT_EQ(d.gpus.size(), 2u);
    c.corrupt(d);
    const std::vector<Violation> v = CheckMixed(d);
    EXPECT_TRUE(HasRule(v, c.rule, c.where)) << c.name << ":\n" << FormatViolations(v);
  }
}

TEST(Validator, AnUnknownPerGpuModelNamesIt) {
  Deployment d = MixedDeployment();
  ASSERT_EQ(d.gpus.size(), 2u);
  d.gpus[1].gpu = "v100";
  const std::vector<Violation> v = CheckMixed(d);
  ASSERT_TRUE(HasRule(v, "consistency", "gpu 1")) << FormatViolations(v);
  for (const Violation& x : v) {
    if (x.rule == "consistency" && x.where == "gpu 1") {
      EXPECT_NE(x.message.find("v100"), std::string::npos) << x.message;
    }
  }
  // The other GPU is still checked, and valid.
  EXPECT_FALSE(HasRule(v, "geometry", "gpu 0"));
  EXPECT_FALSE(HasRule(v, "latency", "gpu 0"));
}

// Issue 17, class 7: a plan made for one rate, checked against a scenario
// that gives another, passed as long as its capacity covered the new rate.
// The recorded rate and SLO must be the scenario's; the violation names the
// service and both values.
TEST(Validator, NamesARateOrSloThePlanDoesNotRecord) {
  const Deployment d = ValidDeployment();  // s0 at 400 req/s, s1 at 50, SLO 1000 ms
  Result<Problem> lower =
      Problem::Build(TinyScenario({300, 50}), testing::A100(), TinyTable(), d.rule);
  ASSERT_TRUE(lower.ok());
  std::vector<Violation> v = ValidateDeployment(d, *lower);
  ASSERT_EQ(v.size(), 1u) << FormatViolations(v);
  EXPECT_EQ(v[0].rule, "consistency");
  EXPECT_EQ(v[0].where, "service s0");
  EXPECT_EQ(v[0].message, "the plan records rate_rps 400, the scenario scenario gives 300");
  Scenario tighter = TinyScenario({400, 50}, 900);
  tighter.source = "t.yaml";
  tighter.services[1].line = 4;
  Result<Problem> slo = Problem::Build(tighter, testing::A100(), TinyTable(), d.rule);
  ASSERT_TRUE(slo.ok());
  v = ValidateDeployment(d, *slo);
  ASSERT_EQ(v.size(), 2u) << FormatViolations(v);
  EXPECT_EQ(v[1].where, "service s1");
  EXPECT_EQ(v[1].message, "the plan records slo_ms 1000, the scenario t.yaml:4 gives 900");
}

}  // namespace
}  // namespace tessera
