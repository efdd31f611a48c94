// Conformance of the iGniter model and placement with the public artifact's
// outputs (shared/data/igniter/derived), and properties of the MPS planners.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "planners/igniter/igniter_planner.h"
#include "tessera/deployment_format.h"
#include "tessera/plan/plan.h"
#include "tessera/profile/igniter_model.h"
#include "tessera/util/text_io.h"
#include "tessera/validator.h"
#include "test_paths.h"

namespace tessera {
namespace {

constexpr char kCoefficients[] = "igniter/derived/fitted_coefficients_v100.json";

MpsCoefficients V100() {
  Result<MpsCoefficients> c = LoadMpsCoefficients(testing::SharedDataPath(kCoefficients));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : MpsCoefficients{};
}

// The artifact's outputs are rounded to 4 decimals; so is the prediction.
double Round4(double v) { return std::round(v * 1e4) / 1e4; }

TEST(IgniterModel, PredictionsEqualTheArtifactsTestVectors) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA("igniter/derived/predict_test_vectors_v100.json");
  const MpsCoefficients c = V100();
  Result<std::string> text =
      ReadTextFile(testing::SharedDataPath("igniter/derived/predict_test_vectors_v100.json"));
  ASSERT_TRUE(text.ok());
  const nlohmann::json cases = nlohmann::json::parse(*text);
  ASSERT_GE(cases.size(), 10u);
  for (const nlohmann::json& tc : cases) {
    std::vector<Colocated> gpu;
    for (size_t i = 0; i < tc["models"].size(); ++i) {
      const WorkloadCoefficients* w = c.Find(tc["models"][i].get<std::string>());
      ASSERT_NE(w, nullptr);
      gpu.push_back({w, tc["batch"][i].get<int>(), tc["resource_pct"][i].get<double>()});
    }
    const std::vector<Prediction> p = PredictColocated(c.hardware, gpu);
    for (size_t i = 0; i < gpu.size(); ++i) {
      SCOPED_TRACE(tc.dump());
      const double lat = tc["pred_latency_ms"][i].get<double>();
      const double thr = tc["pred_throughput_rps"][i].get<double>();
      EXPECT_NEAR(Round4(p[i].latency_ms), lat, 1e-6 * lat);
      EXPECT_NEAR(Round4(p[i].throughput_rps), thr, 1e-6 * thr);
    }
  }
}

TEST(IgniterModel, LowerBoundFollowsTheorem1) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kCoefficients);
  const MpsCoefficients c = V100();
  // The README example's AlexNet: SLO 15 ms (budget 7.5), 500 rps.
  const ResourceLowerBound b = LowerBoundOf(c.hardware, *c.Find("alexnet"), 7.5, 500);
  EXPECT_EQ(b.batch, 4);
  EXPECT_DOUBLE_EQ(b.resource_pct, 10);
  EXPECT_TRUE(b.fits);
  // SSD at 300 rps within 25 ms needs more than a GPU.
  EXPECT_FALSE(LowerBoundOf(c.hardware, *c.Find("ssd"), 25, 300).fits);
  // An impossible budget never fits.
  EXPECT_FALSE(LowerBoundOf(c.hardware, *c.Find("vgg19"), 0.5, 10).fits);
  EXPECT_EQ(LargestSoloBatch(c.hardware, *c.Find("ssd"), 25), 7);
  EXPECT_EQ(LargestSoloBatch(c.hardware, *c.Find("ssd"), 1), std::nullopt);
}

Scenario Workloads(const std::vector<std::tuple<std::string, double, double>>& list) {
  Scenario s;
  s.source = "test";
  for (const auto& [model, slo, rate] : list) {
    s.services.push_back({"W" + std::to_string(s.services.size() + 1), model, rate, slo, 0});
  }
  return s;
}

Problem V100Problem(const Scenario& scenario) {
  Result<Problem> p =
      Problem::BuildMps(scenario, {*FindGpu("v100-16gb"), 3.06, 0}, V100(), LatencyRule{});
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return *p;
}

// One GPU of placements_v100.json: (service index, batch, resource) per process.
using Gpu = std::vector<std::tuple<int, int, double>>;

std::vector<Gpu> Summarise(const PlanResult& r) {
  std::vector<Gpu> out;
  for (const auto& gpu : std::get<MpsGpus>(r.gpus)) {
    Gpu g;
    for (const MpsShare& s : gpu) g.emplace_back(s.service, s.batch, s.resource_pct);
    out.push_back(g);
  }
  return out;
}

TEST(IgniterPlacement, ThreeWorkloadExampleFitsOneGpu) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kCoefficients);
  const Problem p =
      V100Problem(Workloads({{"alexnet", 15, 500}, {"resnet50", 40, 400}, {"vgg19", 60, 200}}));
  Result<PlanResult> r = NewIgniterPlanner()->Plan(p, {});
  ASSERT_TRUE(r.ok());
  // placements_v100.json, default_3_workloads: vgg19, resnet50, alexnet.
  EXPECT_EQ(Summarise(*r), (std::vector<Gpu>{{{2, 6, 37.5}, {1, 8, 30.0}, {0, 4, 10.0}}}));
}

// The twelve workloads of the artifact's predict.py (SLOs doubled back).
Scenario TwelveB() {
  return Workloads({{"alexnet", 10, 1000},
                    {"alexnet", 15, 500},
                    {"alexnet", 20, 2000},
                    {"resnet50", 10, 400},
                    {"resnet50", 20, 600},
                    {"resnet50", 30, 200},
                    {"vgg19", 20, 300},
                    {"vgg19", 30, 400},
                    {"vgg19", 40, 200},
                    {"ssd", 30, 200},
                    {"ssd", 40, 100},
                    {"ssd", 50, 300}});
}

TEST(IgniterPlacement, TwelveWorkloadsTakeSixGpusAsTheArtifacts) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kCoefficients);
  const Problem p = V100Problem(TwelveB());
  Result<PlanResult> r = NewIgniterPlanner()->Plan(p, {});
  ASSERT_TRUE(r.ok());
  // placements_v100.json, twelve_workloads_variant_B, GPU by GPU. The last
  // GPU is W12's dedicated one at batch 7 (the artifact writes batch 6, an
  // indexing slip its note documents).
  EXPECT_EQ(Summarise(*r), (std::vector<Gpu>{{{7, 6, 75.0}, {5, 3, 15.0}},
                                             {{9, 3, 70.0}, {2, 18, 22.5}},
                                             {{6, 3, 62.5}, {0, 5, 17.5}, {11, 1, 12.5}},
                                             {{4, 6, 47.5}, {3, 2, 45.0}},
                                             {{8, 4, 37.5}, {10, 2, 32.5}, {1, 4, 10.0}},
                                             {{11, 7, 100.0}}}));
  EXPECT_DOUBLE_EQ(std::get<MpsGpus>(r->gpus)[5][0].rate_rps, 287);
  EXPECT_DOUBLE_EQ(std::get<MpsGpus>(r->gpus)[2][2].rate_rps, 13);
}

TEST(IgniterPlacement, TwelveWorkloadsVariantCTakeSevenGpus) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kCoefficients);
  const Problem p = V100Problem(Workloads({{"alexnet", 5, 1000},
                                           {"alexnet", 10, 500},
                                           {"alexnet", 15, 2000},
                                           {"resnet50", 10, 400},
                                           {"resnet50", 20, 600},
                                           {"resnet50", 30, 200},
                                           {"vgg19", 15, 300},
                                           {"vgg19", 30, 400},
                                           {"vgg19", 45, 200},
                                           {"ssd", 20, 200},
                                           {"ssd", 40, 100},
                                           {"ssd", 60, 300}}));
  Result<PlanResult> r = NewIgniterPlanner()->Plan(p, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Summarise(*r), (std::vector<Gpu>{{{11, 9, 92.5}},
                                             {{6, 3, 82.5}},
                                             {{9, 2, 85.0}, {1, 3, 12.5}},
                                             {{7, 6, 72.5}},
                                             {{4, 6, 47.5}, {3, 2, 45.0}},
                                             {{8, 5, 42.5}, {10, 2, 32.5}, {5, 3, 15.0}},
                                             {{0, 3, 27.5}, {2, 14, 25.0}}}));
}

TEST(IgniterPlacement, IgniterPredictsNoViolationWhereFfdPlusDoes) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kCoefficients);
  const Problem p = V100Problem(TwelveB());
  Result<PlanReport> ig_report = RunPlanner(*NewIgniterPlanner(), p, {});
  Result<PlanReport> ffd_report = RunPlanner(*NewFfdPlusPlanner(), p, {});
  ASSERT_TRUE(ig_report.ok() && ffd_report.ok());
  const Deployment* ig = &ig_report->deployment;
  const Deployment* ffd = &ffd_report->deployment;
  EXPECT_EQ(ig->metrics.predicted_violations, 0);
  EXPECT_GT(ffd->metrics.predicted_violations, 0);
  EXPECT_LE(ffd->metrics.gpus, ig->metrics.gpus);
  EXPECT_DOUBLE_EQ(ig->metrics.cost_per_hour, 6 * 3.06);
  EXPECT_GE(ig->metrics.gpus, ig->metrics.lower_bound);
  EXPECT_TRUE(ValidateDeployment(*ig, p).empty());
  EXPECT_TRUE(ValidateDeployment(*ffd, p).empty());
}

// Every MPS planner's plan passes the validator on random workloads.
TEST(MpsPlanners, EveryPlanPassesTheValidatorOnRandomWorkloads) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kCoefficients);
  std::mt19937_64 rng(7);
  const std::vector<std::string> models = {"alexnet", "resnet50", "vgg19", "ssd"};
  for (int round = 0; round < 20; ++round) {
    std::vector<std::tuple<std::string, double, double>> list;
    const int n = 1 + static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) {
      list.emplace_back(models[rng() % 4], 5 + static_cast<double>(rng() % 120),
                        10 + static_cast<double>(rng() % 1500));
    }
    const Problem p = V100Problem(Workloads(list));
    for (auto make : {NewIgniterPlanner, NewFfdPlusPlanner, NewGslicePlusPlanner}) {
      const std::unique_ptr<Planner> planner = make();
      Result<PlanReport> report = RunPlanner(*planner, p, {});
      ASSERT_TRUE(report.ok());
      const Deployment& d = report->deployment;
      SCOPED_TRACE(FormatDeploymentTable(d));
      EXPECT_EQ(FormatViolations(ValidateDeployment(d, p)), "") << planner->Name();
      if (planner->Name() == "igniter") {
        EXPECT_EQ(d.metrics.predicted_violations, 0);
        EXPECT_GE(d.metrics.gpus, d.metrics.lower_bound);
      }
    }
  }
}

TEST(MpsValidator, CatchesOverfullGpusUncoveredRatesAndEditedPredictions) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kCoefficients);
  const Problem p = V100Problem(TwelveB());
  Result<PlanReport> d = RunPlanner(*NewIgniterPlanner(), p, {});
  ASSERT_TRUE(d.ok());
  Deployment bad = d->deployment;
  bad.gpus[0].processes()[0].resource_pct = 95;  // 95 + 15 > 100
  bad.gpus[1].processes()[0].rate_rps = 100;     // W10 carries 100 of 200
  bad.gpus[2].processes()[0].latency_ms += 1;
  const std::string all = FormatViolations(ValidateDeployment(bad, p));
  EXPECT_NE(all.find("sum to 110% > 100%"), std::string::npos) << all;
  EXPECT_NE(all.find("W10: processes carry 100 of 200 rps"), std::string::npos) << all;
  // A deployment that goes through JSON is checked the same way.
  Result<Deployment> back = ParseDeploymentJson(FormatDeploymentJson(bad), "bad.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(FormatViolations(ValidateDeployment(*back, p)), all);
  EXPECT_NE(all.find("the model says"), std::string::npos) << all;
}

TEST(MpsCoefficientsJson, RoundTripsExactly) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA(kCoefficients);
  MpsCoefficients c = V100();
  c.hardware.gpu = "v100-16gb";
  Result<MpsCoefficients> back = ParseMpsCoefficientsJson(FormatMpsCoefficientsJson(c), "x");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(FormatMpsCoefficientsJson(*back), FormatMpsCoefficientsJson(c));
  EXPECT_EQ(back->hardware.gpu, "v100-16gb");
  EXPECT_EQ(back->Find("ssd")->k, c.Find("ssd")->k);
}

const char kSmall[] = R"({
 "alexnet": {"n_k": 20, "k_sch_ms": 0.03, "d_load": 602112, "d_feedback": 4000,
   "k": [0.004, 8.7, 23.7, 0.05, 0.34], "alpha_cache": 0.002,
   "power_coef": [0.02, 37.1], "cache_coef": [0.003, 2.0]},
 "hardware": {"F": 1530, "P": 300, "p_idle": 53.5, "unit": 2.5, "B_pcie": 10000000,
   "alpha_f": -1.02, "alpha_sch": 0.0047, "beta_sch": -0.009}
})";

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(MpsCoefficientsJson, RejectsBadFilesNamingTheField) {
  ASSERT_TRUE(ParseMpsCoefficientsJson(kSmall, "c.json").ok());
  const std::string good = kSmall;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Replace(good, "\"n_k\": 20", "\"n_k\": 0"),
       "field 'alexnet.n_k': must be an integer in [1, 1e+06], got 0"},
      {Replace(good, "\"n_k\": 20", "\"n_k\": 2.5"),
       "field 'alexnet.n_k': must be an integer in [1, 1e+06], got 2.5"},
      // Input limits: every coefficient is bounded, so predictions stay finite.
      {Replace(good, "\"n_k\": 20", "\"n_k\": 2147483648"),
       "field 'alexnet.n_k': must be an integer in [1, 1e+06]"},
      {Replace(good, "[0.004, 8.7, 23.7, 0.05, 0.34]", "[0.004, 8.7, 1e300, 0.05, 0.34]"),
       "field 'alexnet.k': element 2 must be a finite number in [-1e+09, 1e+09], got 1e+300"},
      {Replace(good, "\"d_load\": 602112", "\"d_load\": 1e200"),
       "field 'alexnet.d_load': must be a finite number in [0, 1e+12]"},
      {Replace(good, "\"F\": 1530", "\"F\": 1e308"),
       "field 'hardware.F': must be a finite number in (0, 100000]"},
      {Replace(good, "[0.004, 8.7, 23.7, 0.05, 0.34]", "[1, 2]"), "field 'alexnet.k': expected"},
      {Replace(good, "[0.02, 37.1]", "[0.02, \"x\"]"), "field 'alexnet.power_coef': element 1"},
      {Replace(good, "\"F\": 1530", "\"F\": -1"),
       "field 'hardware.F': must be a finite number in (0, 100000], got -1"},
      {Replace(good, "\"B_pcie\": 10000000,", ""), "field 'hardware.B_pcie': missing"},
      {Replace(good, "\"d_load\": 602112", "\"d_load\": -1"), "field 'alexnet.d_load'"},
      {Replace(good, "\"alpha_cache\": 0.002", "\"alpha_cache\": \"a\""),
       "field 'alexnet.alpha_cache': expected a number"},
      {Replace(good, "\"hardware\"", "\"hw\""), "field 'hw.n_k': missing"},
      {"[1, 2]", "expected a JSON object"},
      {"{\"hardware\": ", "invalid JSON"},
      {"{}", "field 'hardware': missing"},
  };
  for (const auto& [text, expected] : cases) {
    Result<MpsCoefficients> r = ParseMpsCoefficientsJson(text, "c.json");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(expected), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().rfind("c.json", 0), 0u) << r.status().message();
  }
}

// Nesting is bounded before the DOM is built (issue 17: 100,000 nested
// arrays), even in a "_note" the reader skips; a duplicate key is an error
// rather than the last one silently winning.
TEST(MpsCoefficientsJson, DeepNestingAndDuplicateKeysAreErrors) {
  const std::string good = kSmall;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Replace(good, "\"hardware\"", "\"_note\": " + deep + ", \"hardware\""),
       "c.json: _note[0][0][0]"},
      {Replace(good, "\"hardware\"", "\"zzz\": " + deep + ", \"hardware\""), "c.json: zzz[0]"},
      {Replace(good, "\"n_k\": 20,", "\"n_k\": 20, \"n_k\": 30,"),
       "c.json: alexnet.n_k: duplicate key"},
      {"{\"a\": 1", "c.json: invalid JSON: parse error at line 1, column 8"},
  };
  for (const auto& [text, expected] : cases) {
    Result<MpsCoefficients> r = ParseMpsCoefficientsJson(text, "c.json");
    ASSERT_FALSE(r.ok()) << expected;
    EXPECT_TRUE(r.status().message().starts_with(expected)) << r.status().message();
  }
}

TEST(MpsCoefficientsJson, SurvivesRandomMutations) {
  std::mt19937_64 rng(11);
  const std::string good = kSmall;
  const std::string alphabet = "{}[]\",:0123456789.-eE abcnk_";
  for (int i = 0; i < 2000; ++i) {
    std::string s = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0:
          s[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          s.erase(at, 1 + rng() % 8);
          break;
        default:
          s.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
      }
      if (s.empty()) s = "x";
    }
    Result<MpsCoefficients> r = ParseMpsCoefficientsJson(s, "m.json");
    if (!r.ok()) {
      EXPECT_EQ(r.status().message().rfind("m.json", 0), 0u) << r.status().message();
    }
  }
}

// ---- Input limits (issue 17, class 4) -------------------------------------

// The Theorem 1 batch of a rate far above a GPU's was cast from a double
// beyond an int (undefined behaviour); beyond limits::kBatch it now means
// "does not fit one GPU", which sends the service to whole GPUs.
TEST(IgniterLimits, ATheorem1BatchBeyondTheLimitDoesNotFitOneGpu) {
  Result<MpsCoefficients> c = ParseMpsCoefficientsJson(kSmall, "c.json");
  ASSERT_TRUE(c.ok());
  const ResourceLowerBound b = LowerBoundOf(c->hardware, *c->Find("alexnet"), 1.8e6, 1e7);
  EXPECT_FALSE(b.fits);
  EXPECT_EQ(b.batch, 4096);
}

// Coefficients fitted on small batches predict negative times at large ones
// (a negative k1): such a prediction means the workload cannot run so, never
// that it runs infinitely fast.
TEST(IgniterLimits, PredictionsOutsideTheFittedRangeCannotRun) {
  Result<MpsCoefficients> c = ParseMpsCoefficientsJson(
      Replace(kSmall, "[0.004, 8.7, 23.7, 0.05, 0.34]", "[-0.02, 58.3, -0.01, 0.34, 1.9]"),
      "c.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const Prediction small = PredictAlone(c->hardware, *c->Find("alexnet"), 8, 100);
  EXPECT_GT(small.latency_ms, 0);
  EXPECT_GT(small.throughput_rps, 0);
  const Prediction huge = PredictAlone(c->hardware, *c->Find("alexnet"), 4096, 100);
  EXPECT_EQ(huge.latency_ms, std::numeric_limits<double>::infinity());
  EXPECT_EQ(huge.throughput_rps, 0);
}

// A workload the model makes a thousand times slower than real served at
// the rate limit needed billions of dedicated GPUs, one loop turn each. The
// problem bounds the whole GPUs a service may need, naming it.
TEST(IgniterLimits, MpsProblemsTooLargeToPlanAreInputErrors) {
  Result<MpsCoefficients> slow = ParseMpsCoefficientsJson(
      Replace(kSmall, "[0.004, 8.7, 23.7, 0.05, 0.34]", "[0.004, 8.7, 23.7, 0.05, 1000000]"),
      "c.json");
  ASSERT_TRUE(slow.ok()) << slow.status().ToString();
  Scenario s = Workloads({{"alexnet", 3.6e6, 1e7}});
  s.services[0].line = 4;
  Result<Problem> p = Problem::BuildMps(s, {*FindGpu("v100-16gb"), 3.06, 0}, *slow, LatencyRule{});
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(p.status().message().starts_with("test:4: field 'rate_rps': 1e+07 req/s needs "))
      << p.status().message();
  EXPECT_NE(p.status().message().find("a service may need at most 100000"), std::string::npos)
      << p.status().message();
  // At the rate limit with the real coefficients, every MPS planner plans.
  Result<MpsCoefficients> fast = ParseMpsCoefficientsJson(kSmall, "c.json");
  ASSERT_TRUE(fast.ok());
  Result<Problem> big = Problem::BuildMps(Workloads({{"alexnet", 100, 1e7}}),
                                          {*FindGpu("v100-16gb"), 3.06, 0}, *fast, LatencyRule{});
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  for (auto make : {NewIgniterPlanner, NewFfdPlusPlanner, NewGslicePlusPlanner}) {
    Result<PlanReport> report = RunPlanner(*make(), *big, {});
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(FormatViolations(ValidateDeployment(report->deployment, *big)), "");
  }
}

// Every iGniter planner honours its time limit (issue 22): on a clock that
// advances 1 ms per reading, a 1 ms limit passes at the first reading, when
// no plan covers every service yet, so each says to raise --time-limit; a
// limit never reached gives the plan of no limit.
TEST(MpsPlanners, StopAtTheTimeLimitWithAClearError) {
  Result<MpsCoefficients> c = ParseMpsCoefficientsJson(kSmall, "c.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Result<Problem> p = Problem::BuildMps(
      Workloads({{"alexnet", 100, 300}, {"alexnet", 50, 120}, {"alexnet", 200, 900}}),
      {*FindGpu("v100-16gb"), 3.06, 0}, *c, LatencyRule{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  for (auto make : {NewIgniterPlanner, NewFfdPlusPlanner, NewGslicePlusPlanner}) {
    const std::unique_ptr<Planner> planner = make();
    FakeClock clock(0, 1);
    Result<PlanResult> stopped =
        planner->Plan(*p, PlanContext{.time_limit_s = 0.001, .clock = &clock});
    ASSERT_FALSE(stopped.ok()) << planner->Name();
    EXPECT_EQ(stopped.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(stopped.status().message().find("raise --time-limit"), std::string::npos)
        << stopped.status().ToString();
    FakeClock slow(0, 1);
    Result<PlanResult> full = planner->Plan(*p, PlanContext{.time_limit_s = 1e6, .clock = &slow});
    Result<PlanResult> unlimited = planner->Plan(*p, PlanContext{});
    ASSERT_TRUE(full.ok() && unlimited.ok()) << planner->Name();
    EXPECT_EQ(Summarise(*full), Summarise(*unlimited)) << planner->Name();
  }
}

}  // namespace
}  // namespace tessera
