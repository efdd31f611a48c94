#include "tessera/workload/workload_gen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "tessera/profile/profile_synth.h"
#include "tessera/scenario.h"
#include "test_paths.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

WorkloadGenOptions Options(int services, RateDistribution rates, std::uint64_t seed = 1) {
  WorkloadGenOptions o;
  o.services = services;
  o.rates = rates;
  o.seed = seed;
  return o;
}

std::vector<double> Rates(const Scenario& s) {
  std::vector<double> rates;
  for (const Service& service : s.services) rates.push_back(service.rate_rps);
  return rates;
}

double Mean(const std::vector<double>& xs) {
  double sum = 0;
  for (double x : xs) sum += x;
  return sum / xs.size();
}

double StdDev(const std::vector<double>& xs) {
  const double mean = Mean(xs);
  double sum = 0;
  for (double x : xs) sum += (x - mean) * (x - mean);
  return std::sqrt(sum / (xs.size() - 1));
}

// Every field ParseScenarioYaml gives back (not `source`, not the lines).
void ExpectSameScenario(const Scenario& got, const Scenario& want) {
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.gpu, want.gpu);
  ASSERT_EQ(got.pool.size(), want.pool.size());
  for (size_t k = 0; k < want.pool.size(); ++k) {
    EXPECT_EQ(got.pool[k].gpu, want.pool[k].gpu) << k;
    EXPECT_EQ(got.pool[k].price_per_hour, want.pool[k].price_per_hour) << k;
    EXPECT_EQ(got.pool[k].max_count, want.pool[k].max_count) << k;
  }
  ASSERT_EQ(got.services.size(), want.services.size());
  for (size_t k = 0; k < want.services.size(); ++k) {
    EXPECT_EQ(got.services[k].name, want.services[k].name) << k;
    EXPECT_EQ(got.services[k].model, want.services[k].model) << k;
    EXPECT_EQ(got.services[k].rate_rps, want.services[k].rate_rps) << k;
    EXPECT_EQ(got.services[k].slo_ms, want.services[k].slo_ms) << k;
  }
}

// ---- Generation -----------------------------------------------------------

TEST(WorkloadGen, SameSeedSameScenario) {
  const WorkloadGenOptions o = Options(50, LognormalRates{6, 1}, 7);
  Result<Scenario> a = GenerateWorkload(o);
  Result<Scenario> b = GenerateWorkload(o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ExpectSameScenario(*a, *b);
}

TEST(WorkloadGen, DifferentSeedsDiffer) {
  Result<Scenario> a = GenerateWorkload(Options(20, NormalRates{1000, 300}, 1));
  Result<Scenario> b = GenerateWorkload(Options(20, NormalRates{1000, 300}, 2));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(Rates(*a), Rates(*b));
}

// The draws come from raw std::mt19937_64 output and Box-Muller, never a
// std::*_distribution: these rates must be the same with every standard
// library (checked against an independent Python mt19937_64). A change here
// changes every generated file.
TEST(WorkloadGen, RatesAreTheDocumentedDraws) {
  Result<Scenario> s = GenerateWorkload(Options(4, NormalRates{1000, 100}, 42));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Rates(*s), (std::vector<double>{892, 1109, 1179, 909}));
}

TEST(WorkloadGen, NormalMeanAndSpreadAreRoughlyRight) {
  Result<Scenario> s = GenerateWorkload(Options(20000, NormalRates{1000, 100}));
  ASSERT_TRUE(s.ok());
  const std::vector<double> rates = Rates(*s);
  // Standard errors: 100 / sqrt(20000) ~ 0.7 for the mean, ~0.5 for the sd.
  EXPECT_NEAR(Mean(rates), 1000, 5);
  EXPECT_NEAR(StdDev(rates), 100, 5);
}

TEST(WorkloadGen, LognormalLogMeanAndSpreadAreRoughlyRight) {
  Result<Scenario> s = GenerateWorkload(Options(20000, LognormalRates{6, 0.5}));
  ASSERT_TRUE(s.ok());
  std::vector<double> logs;
  for (double r : Rates(*s)) logs.push_back(std::log(r));
  EXPECT_NEAR(Mean(logs), 6, 0.02);
  EXPECT_NEAR(StdDev(logs), 0.5, 0.02);
}

TEST(WorkloadGen, RatesAreWholeAndClampedToTheFloor) {
  // Half the draws of Normal(0, 50) are negative.
  Result<Scenario> s = GenerateWorkload(Options(1000, NormalRates{1e-9, 50}));
  ASSERT_TRUE(s.ok());
  const std::vector<double> rates = Rates(*s);
  for (double r : rates) {
    EXPECT_GE(r, kMinGeneratedRateRps);
    EXPECT_EQ(r, std::round(r));
  }
  EXPECT_GT(std::count(rates.begin(), rates.end(), kMinGeneratedRateRps), 400);
  EXPECT_TRUE(ValidateScenario(*s).ok());
}

TEST(WorkloadGen, ServicesCycleThroughTheModels) {
  WorkloadGenOptions o = Options(5, NormalRates{100, 10});
  o.models = {"ResNet50", "bert"};
  o.slo_ms = 250;
  Result<Scenario> s = GenerateWorkload(o);
  ASSERT_TRUE(s.ok());
  const std::vector<std::string> names = {"resnet50-001", "bert-large-002", "resnet50-003",
                                          "bert-large-004", "resnet50-005"};
  ASSERT_EQ(s->services.size(), names.size());
  for (size_t k = 0; k < names.size(); ++k) {
    EXPECT_EQ(s->services[k].name, names[k]);
    EXPECT_EQ(s->services[k].model, CanonicalModelName(o.models[k % 2]));
    EXPECT_EQ(s->services[k].slo_ms, 250);
  }
}

TEST(WorkloadGen, DefaultModelsAreTheBuiltinCardsAndDoNotMoveTheRates) {
  const WorkloadGenOptions o = Options(30, NormalRates{500, 100});
  Result<Scenario> all = GenerateWorkload(o);
  ASSERT_TRUE(all.ok());
  const auto cards = BuiltinModelCards();
  for (size_t k = 0; k < all->services.size(); ++k) {
    EXPECT_EQ(all->services[k].model, cards[k % cards.size()].name) << k;
  }
  WorkloadGenOptions one = o;
  one.models = {"vgg16"};
  Result<Scenario> vgg = GenerateWorkload(one);
  ASSERT_TRUE(vgg.ok());
  EXPECT_EQ(Rates(*vgg), Rates(*all));
}

TEST(WorkloadGen, GpuIsStoredAsTheCatalogSpellsIt) {
  WorkloadGenOptions o = Options(1, NormalRates{100, 0});
  o.gpu = "A100-80GB";
  o.name = "tiny";
  Result<Scenario> s = GenerateWorkload(o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->gpu, "a100-80gb");
  EXPECT_EQ(s->name, "tiny");
  EXPECT_EQ(Rates(*s), std::vector<double>{100});  // sd 0: the mean itself
  o.gpu = "";
  s = GenerateWorkload(o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->gpu, "");
}

// Draws beyond the rate limit are clamped to it, as draws below 1 rps are
// raised to 1: a generated scenario always validates.
TEST(WorkloadGen, DrawsStayWithinTheRateLimit) {
  WorkloadGenOptions o;
  o.services = 200;
  o.rates = LognormalRates{16, 10};
  Result<Scenario> s = GenerateWorkload(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(ValidateScenario(*s).ok()) << ValidateScenario(*s).ToString();
  double most = 0;
  for (const Service& service : s->services) most = std::max(most, service.rate_rps);
  EXPECT_EQ(most, 1e7);
}

TEST(WorkloadGen, ValidationNamesTheField) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    std::string what;
    WorkloadGenOptions options;
    std::string message;
  };
  std::vector<Case> cases;
  auto add = [&](std::string what, auto change, std::string message) {
    WorkloadGenOptions o;
    change(o);
    cases.push_back({std::move(what), o, std::move(message)});
  };
  add(
      "no service", [](auto& o) { o.services = 0; }, "services: must be an integer in [1, ");
  add(
      "too many", [](auto& o) { o.services = 100'001; }, "services: ");
  add(
      "mean 0",
      [](auto& o) {
        o.rates = NormalRates{0, 1};
      },
      "rates: normal mean_rps: ");
  add(
      "sd < 0",
      [](auto& o) {
        o.rates = NormalRates{10, -1};
      },
      "rates: normal sd_rps: ");
  add(
      "mu NaN",
      [&](auto& o) {
        o.rates = LognormalRates{nan, 1};
      },
      "rates: lognormal mu: ");
  add(
      "mu huge",
      [](auto& o) {
        o.rates = LognormalRates{51, 1};
      },
      "rates: lognormal mu: ");
  add(
      "sigma",
      [](auto& o) {
        o.rates = LognormalRates{5, 11};
      },
      "rates: lognormal sigma: ");
  add(
      "slo 0", [](auto& o) { o.slo_ms = 0; },
      "slo_ms: must be a finite number in [0.01, 3.6e+06], got 0");
  // Input limits: generated scenarios stay within the scenario's own limits.
  add(
      "slo of a day", [](auto& o) { o.slo_ms = 8.64e7; }, "slo_ms: must be a finite number in");
  add(
      "mean past the rate limit",
      [](auto& o) {
        o.rates = NormalRates{1e9, 1};
      },
      "rates: normal mean_rps: must be a finite number in (0, 1e+07], got 1000000000");
  add(
      "median past the rate limit",
      [](auto& o) {
        o.rates = LognormalRates{17, 1};
      },
      "rates: lognormal mu: must be a finite number in [-50, 16.1181], got 17");
  add(
      "slo inf", [](auto& o) { o.slo_ms = INFINITY; }, "slo_ms: ");
  add(
      "empty model",
      [](auto& o) {
        o.models = {"resnet50", ""};
      },
      "models[1]: must not be empty");
  add(
      "newline in model", [](auto& o) { o.models = {"a\nb"}; },
      "models[0]: must not contain control characters");
  add(
      "unknown gpu", [](auto& o) { o.gpu = "v100"; }, "gpu: ");
  for (const Case& c : cases) {
    EXPECT_TRUE(c.options.Validate().message().starts_with(c.message))
        << c.what << ": " << c.options.Validate().ToString();
    EXPECT_FALSE(GenerateWorkload(c.options).ok()) << c.what;
  }
  EXPECT_TRUE(WorkloadGenOptions().Validate().ok());
}

// ---- Presets --------------------------------------------------------------

TEST(WorkloadGenPresets, AreMigServingsFourWorkloads) {
  const std::vector<std::string> names = {"normal-1", "normal-2", "lognormal-1", "lognormal-2"};
  const auto presets = WorkloadPresets();
  ASSERT_EQ(presets.size(), names.size());
  std::vector<double> totals;
  for (size_t k = 0; k < names.size(); ++k) {
    EXPECT_EQ(presets[k].name, names[k]);
    EXPECT_EQ(presets[k].options.name, names[k]);
    EXPECT_EQ(presets[k].options.slo_ms, 100);  // the paper's SLO
    Result<Scenario> s = GenerateWorkload(presets[k].options);
    ASSERT_TRUE(s.ok()) << names[k] << ": " << s.status().ToString();
    EXPECT_EQ(s->gpu, "a100-80gb");
    EXPECT_EQ(s->services.size(), 24u);
    totals.push_back(Mean(Rates(*s)));
  }
  // Each "-2" asks for more than its "-1".
  EXPECT_GT(totals[1], totals[0]);
  EXPECT_GT(totals[3], totals[2]);
}

// ---- FormatScenarioYaml (scenario.h) --------------------------------------

TEST(ScenarioYamlWriter, RoundTripsAGeneratedWorkload) {
  for (const WorkloadPreset& preset : WorkloadPresets()) {
    Result<Scenario> s = GenerateWorkload(preset.options);
    ASSERT_TRUE(s.ok());
    Result<Scenario> back = ParseScenarioYaml(FormatScenarioYaml(*s), "gen.yaml");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ExpectSameScenario(*back, *s);
  }
}

TEST(ScenarioYamlWriter, RoundTripsAwkwardNamesNumbersAndAPool) {
  Scenario s;
  s.name = "mixed: pool #1";
  s.pool = {{.gpu = "a100-80gb", .price_per_hour = 4.1, .max_count = 16},
            {.gpu = "h100-80gb", .price_per_hour = 6.98}};
  const std::vector<std::string> names = {"a,b", "~",   "true", "123",   "x #y", "é",   "q\"d",
                                          "[x]", "- y", "{z}",  " pad ", "null", "x:y", "a: b"};
  // Awkward, yet within the input limits of rates and SLOs.
  const std::vector<double> numbers = {0.1, 0.01, 3.5e6, 138.5, 6.02214076e5, 1.0 / 3};
  for (size_t k = 0; k < names.size(); ++k) {
    s.services.push_back({.name = names[k],
                          .model = k % 2 ? "resnet50" : "bert-large",
                          .rate_rps = numbers[k % numbers.size()],
                          .slo_ms = numbers[(k + 1) % numbers.size()]});
  }
  ASSERT_TRUE(ValidateScenario(s).ok());
  const std::string yaml = FormatScenarioYaml(s);
  Result<Scenario> back = ParseScenarioYaml(yaml, "w.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << yaml;
  ExpectSameScenario(*back, s);
}

TEST(ScenarioYamlWriter, WritesTheDesignFormat) {
  Scenario s;
  s.name = "S1";
  s.gpu = "a100-80gb";
  s.services = {{.name = "web", .model = "resnet50", .rate_rps = 1463, .slo_ms = 138.5}};
  EXPECT_EQ(FormatScenarioYaml(s),
            "name: S1\n"
            "gpu: a100-80gb\n"
            "services:\n"
            "  - {name: web, model: resnet50, rate_rps: 1463, slo_ms: 138.5}\n");
  s.name = "";
  s.gpu = "";
  EXPECT_EQ(FormatScenarioYaml(s).substr(0, 10), "services:\n");
}

TEST(ScenarioYamlWriter, RoundTripsTheBundledExamples) {
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(testing::SourcePath("examples/scenarios"))) {
    if (entry.path().extension() != ".yaml") continue;
    Result<Scenario> s = LoadScenarioYaml(entry.path().string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    Result<Scenario> back = ParseScenarioYaml(FormatScenarioYaml(*s), "back.yaml");
    ASSERT_TRUE(back.ok()) << entry.path() << ": " << back.status().ToString();
    ExpectSameScenario(*back, *s);
    ++seen;
  }
  EXPECT_GT(seen, 0);
}

}  // namespace
}  // namespace tessera
