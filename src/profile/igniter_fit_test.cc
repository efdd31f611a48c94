// Fitting iGniter coefficients from samples: noise-free samples synthesized
// from the V100 coefficients give them back, noisy ones predict within 2%,
// and bad CSVs are rejected naming line and field.
#include "tessera/profile/igniter_fit.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fuzz_mutator.h"

namespace tessera {
namespace {

// The V100 coefficients of shared/data/igniter/derived/
// fitted_coefficients_v100.json, copied so that the test needs no shared data.
MpsCoefficients V100() {
  MpsCoefficients c;
  c.hardware = {.gpu = "",
                .max_frequency_mhz = 1530,
                .power_cap_w = 300,
                .idle_power_w = 53.5,
                .unit_pct = 2.5,
                .pcie_bytes_per_ms = 10000000,
                .alpha_f = -1.0254136233996936,
                .alpha_sch = 0.004750653472508581,
                .beta_sch = -0.009022425731123773};
  c.workloads = {
      {"alexnet",
       20,
       0.03176827829247472,
       602112,
       4000,
       {0.004153511274058949, 8.711584617309109, 23.73607011929307, 0.055520698554309036,
        0.3460109386306921},
       0.002376375061810778,
       {0.02389297163395345, 37.108146351651904},
       {0.003092045922251134, 2.0295711449248537}},
      {"resnet50",
       80,
       0.07381620007640247,
       602112,
       4000,
       {-0.017512005342600587, 58.26450646248401, -0.010383839042495726, 0.3448827660141423,
        1.909449630741246},
       0.0021630605425848664,
       {0.16233531800893305, 4.626864947547471},
       {0.021959513241099637, -0.18994214432424095}},
      {"vgg19",
       29,
       0.039249369781099226,
       602112,
       4000,
       {-0.004834680882839295, 158.19296988876056, 44.452125104393744, 0.18840719304606088,
        0.9261921526929787},
       0.0020177315294950334,
       {0.5367285045107888, 2.081851124995776},
       {0.045217532928059495, 2.7228163812533386}},
      {"ssd",
       93,
       0.1478771858746202,
       1080000,
       2968880,
       {0.025159256652544783, 235.8469434392252, -16.78163861392029, 0.26427273961464665,
        3.416978715642997},
       0.0022808611642633047,
       {0.6448940724187663, 2.3393170731387114},
       {0.08863048000589165, -0.12858926934271656}},
  };
  return c;
}

const std::vector<int> kBatches = {1, 2, 4, 8, 16, 32};
const std::vector<double> kResources = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};

constexpr char kHeader[] = "model,quantity,batch,resource_pct,value\n";

// Test helper: samples of `w` on the batch x resource grid (active_ms,
// power_w and l2_pct, from the model's own formulas), each value multiplied
// by (1 + noise N(0, 1)) when `rng` is given, and its constants.
std::string SynthesizeRows(const WorkloadCoefficients& w, const std::vector<int>& batches,
                           const std::vector<double>& resources, std::mt19937_64* rng = nullptr,
                           double noise = 0) {
  std::normal_distribution<double> normal(0, 1);
  auto jitter = [&](double v) { return rng == nullptr ? v : v * (1 + noise * normal(*rng)); };
  std::string rows;
  for (int b : batches) {
    for (double r : resources) {
      const double t = w.ActiveMs(b, r), x = 1000.0 * b / t;
      rows += fmt::format("{},active_ms,{},{},{}\n", w.model, b, r, jitter(t));
      rows +=
          fmt::format("{},power_w,{},{},{}\n", w.model, b, r, jitter(w.power[0] * x + w.power[1]));
      rows +=
          fmt::format("{},l2_pct,{},{},{}\n", w.model, b, r, jitter(w.cache[0] * x + w.cache[1]));
    }
  }
  rows += fmt::format("{},kernels,,,{}\n{},sched_ms,,,{}\n{},load_bytes,,,{}\n", w.model, w.kernels,
                      w.model, w.sched_ms, w.model, w.load_bytes);
  rows += fmt::format("{},feedback_bytes,,,{}\n{},alpha_cache,,,{}\n", w.model, w.feedback_bytes,
                      w.model, w.alpha_cache);
  return rows;
}

// The curve samples of SynthesizeRows's output, without the constants.
std::string CurveRowsOnly(const std::string& rows) {
  return rows.substr(0, rows.rfind('\n', rows.find(",kernels,")) + 1);
}

std::string HardwareRows(const MpsHardware& hw) {
  return fmt::format(
      "hardware,F,,,{}\nhardware,P,,,{}\nhardware,p_idle,,,{}\nhardware,unit,,,{}\n"
      "hardware,B_pcie,,,{}\nhardware,alpha_f,,,{}\nhardware,alpha_sch,,,{}\n"
      "hardware,beta_sch,,,{}\n",
      hw.max_frequency_mhz, hw.power_cap_w, hw.idle_power_w, hw.unit_pct, hw.pcie_bytes_per_ms,
      hw.alpha_f, hw.alpha_sch, hw.beta_sch);
}

Result<MpsCoefficients> ParseAndFit(const std::string& csv, const MpsCoefficients* base) {
  TESSERA_ASSIGN_OR_RETURN(FitSamples samples, ParseFitSamplesCsv(csv, "s.csv"));
  return FitMpsCoefficients(samples, base);
}

void ExpectRelativelyNear(double got, double want, double tolerance, const std::string& what) {
  EXPECT_LE(std::abs(got - want), tolerance * std::abs(want))
      << what << ": got " << got << ", want " << want;
}

TEST(IgniterFit, NoiseFreeSamplesGiveTheV100CoefficientsBack) {
  const MpsCoefficients truth = V100();
  std::string csv = kHeader + HardwareRows(truth.hardware);
  for (const WorkloadCoefficients& w : truth.workloads) {
    csv += SynthesizeRows(w, kBatches, kResources);
  }
  Result<MpsCoefficients> fit = ParseAndFit(csv, nullptr);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  ASSERT_EQ(fit->workloads.size(), truth.workloads.size());
  for (const WorkloadCoefficients& want : truth.workloads) {
    const WorkloadCoefficients* got = fit->Find(want.model);
    ASSERT_NE(got, nullptr) << want.model;
    for (int i = 0; i < 5; ++i) {
      ExpectRelativelyNear(got->k[i], want.k[i], 0.01, fmt::format("{} k{}", want.model, i + 1));
    }
    for (int i = 0; i < 2; ++i) {
      ExpectRelativelyNear(got->power[i], want.power[i], 0.01, want.model + " power_coef");
      ExpectRelativelyNear(got->cache[i], want.cache[i], 0.01, want.model + " cache_coef");
    }
    EXPECT_EQ(got->kernels, want.kernels);
    EXPECT_EQ(got->sched_ms, want.sched_ms);
    EXPECT_EQ(got->load_bytes, want.load_bytes);
    EXPECT_EQ(got->feedback_bytes, want.feedback_bytes);
    EXPECT_EQ(got->alpha_cache, want.alpha_cache);
  }
  EXPECT_EQ(FormatMpsCoefficientsJson(MpsCoefficients{fit->hardware, {}}),
            FormatMpsCoefficientsJson(MpsCoefficients{truth.hardware, {}}));
}

TEST(IgniterFit, NoisySamplesPredictWithinTwoPercent) {
  const MpsCoefficients truth = V100();
  std::mt19937_64 rng(20230301);
  std::string csv = kHeader + HardwareRows(truth.hardware);
  for (const WorkloadCoefficients& w : truth.workloads) {
    csv += SynthesizeRows(w, kBatches, kResources, &rng, 0.01);
  }
  Result<FitSamples> samples = ParseFitSamplesCsv(csv, "noisy.csv");
  ASSERT_TRUE(samples.ok()) << samples.status().ToString();
  Result<MpsCoefficients> fit = FitMpsCoefficients(*samples, nullptr);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  for (const WorkloadCoefficients& want : truth.workloads) {
    const WorkloadCoefficients* got = fit->Find(want.model);
    ASSERT_NE(got, nullptr) << want.model;
    for (int b : kBatches) {
      for (double r : kResources) {
        ExpectRelativelyNear(got->ActiveMs(b, r), want.ActiveMs(b, r), 0.02,
                             fmt::format("{} t_act({}, {})", want.model, b, r));
      }
    }
    // The noise is 1%, so the fit's RMS relative error is about that.
    const std::optional<double> rms = ActiveFitRmsRelativeError(*samples->Find(want.model), *got);
    ASSERT_TRUE(rms.has_value());
    EXPECT_GT(*rms, 0.005) << want.model;
    EXPECT_LT(*rms, 0.015) << want.model;
  }
}

TEST(IgniterFit, ParsesCommentsBlankLinesCrlfAndCanonicalNames) {
  const std::string csv =
      "\xEF\xBB\xBF# profiled on my GPU\r\n\r\n  model , quantity,batch,resource_pct,value\r\n"
      "ResNet50,active_ms,1,10,7.5\r\n  # a comment\r\nBERT,kernels,,,12\r\nHARDWARE,F,,,1500\r\n";
  Result<FitSamples> s = ParseFitSamplesCsv(csv, "s.csv");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->models.size(), 2u);
  const ModelSamples* resnet = s->Find("resnet50");
  ASSERT_NE(resnet, nullptr);
  ASSERT_EQ(resnet->active_ms.size(), 1u);
  EXPECT_EQ(resnet->active_ms[0].batch, 1);
  EXPECT_EQ(resnet->active_ms[0].resource_pct, 10);
  EXPECT_EQ(resnet->active_ms[0].value, 7.5);
  EXPECT_EQ(resnet->active_ms[0].line, 4);
  ASSERT_NE(s->Find("bert-large"), nullptr);
  EXPECT_EQ(s->Find("bert-large")->kernels, 12);
  EXPECT_EQ(s->hardware.max_frequency_mhz, 1500);
  EXPECT_FALSE(s->hardware.power_cap_w.has_value());
}

TEST(IgniterFit, RejectsBadCsvNamingLineAndField) {
  struct Case {
    std::string text;
    std::string prefix;  // after "s.csv:"
    std::string what;    // part of the message after the prefix
  };
  const std::string h = kHeader;
  const std::vector<Case> cases = {
      {"model,quantity,batch,value\n", "1: field 'header': ", "expected 'model,quantity"},
      {"", "1: field 'header': ", "missing"},
      {"# only a comment\n", "1: field 'header': ", "missing"},
      {h, "1: field 'model': ", "no data row"},
      {h + "resnet50,latency_ms,1,10,5\n", "2: field 'quantity': ", "unknown quantity"},
      {h + "resnet50,,1,10,5\n", "2: field 'quantity': ", "missing"},
      {h + "resnet50,active_ms,1,10,abc\n", "2: field 'value': ", "expected a number, got 'abc'"},
      {h + "resnet50,active_ms,1,10,inf\n", "2: field 'value': ", "finite"},
      {h + "resnet50,power_w,1,10,nan\n", "2: field 'value': ", "finite"},
      {h + "resnet50,active_ms,1,10,1e400\n", "2: field 'value': ", "finite"},
      {h + "resnet50,active_ms,1,10,-3\n", "2: field 'value': ", "must be > 0"},
      {h + "resnet50,active_ms,1,10,\n", "2: field 'value': ", "missing"},
      {h + "resnet50,kernels,4,,80\n", "2: field 'batch': ", "must be empty"},
      {h + "resnet50,kernels,,50,80\n", "2: field 'resource_pct': ", "must be empty"},
      {h + "resnet50,kernels,,,2.5\n", "2: field 'value': ", "whole number"},
      {h + "resnet50,sched_ms,,,-1\n", "2: field 'value': ", "must be >= 0"},
      {h + "resnet50,active_ms,,10,5\n", "2: field 'batch': ", "missing"},
      {h + "resnet50,active_ms,1.5,10,5\n", "2: field 'batch': ", "whole number"},
      {h + "resnet50,active_ms,0,10,5\n", "2: field 'batch': ", "whole number"},
      {h + "resnet50,active_ms,1,,5\n", "2: field 'resource_pct': ", "missing"},
      {h + "resnet50,active_ms,1,0,5\n", "2: field 'resource_pct': ", "(0, 100]"},
      {h + "resnet50,active_ms,1,101,5\n", "2: field 'resource_pct': ", "(0, 100]"},
      {h + "resnet50,active_ms,1,10\n", "2: field 'value': ", "missing (a row has 5 fields"},
      {h + "resnet50,active_ms\n", "2: field 'batch': ", "missing (a row has 5 fields"},
      {h + "resnet50,active_ms,1,10,5,6\n", "2: field 'value': ", "expected 5 fields, got 6"},
      {h + "resnet50,kernels,,,80\nresnet50,kernels,,,81\n",
       "3: field 'quantity': ", "'kernels' of 'resnet50' given twice (first on line 2)"},
      {h + "hardware,F,,,1530\nHardware,F,,,1400\n", "3: field 'quantity': ", "given twice"},
      {h + "hardware,G,,,1\n", "2: field 'quantity': ", "unknown quantity 'G'"},
      {h + "hardware,F,,,-1530\n", "2: field 'value': ", "must be > 0"},
      {h + "hardware,P,1,,300\n", "2: field 'batch': ", "must be empty"},
      {h + ",active_ms,1,10,5\n", "2: field 'model': ", "missing"},
      {h + "_note,active_ms,1,10,5\n", "2: field 'model': ", "must not start with '_'"},
      {h + "res\x01net,active_ms,1,10,5\n", "2: field 'model': ", "printable ASCII"},
      {"# c\r\n\r\n" + h + "\r\nresnet50,active_ms,1,10,x\r\n", "5: field 'value': ", "'x'"},
  };
  for (const Case& c : cases) {
    Result<FitSamples> r = ParseFitSamplesCsv(c.text, "s.csv");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    const std::string& message = r.status().message();
    EXPECT_EQ(message.rfind("s.csv:" + c.prefix, 0), 0u) << c.text << " -> " << message;
    EXPECT_NE(message.find(c.what), std::string::npos) << c.text << " -> " << message;
  }
}

TEST(IgniterFit, SurvivesRandomMutations) {
  const MpsCoefficients v100 = V100();
  const std::string good = std::string("# fuzz seed\n") + kHeader + HardwareRows(v100.hardware) +
                           SynthesizeRows(*v100.Find("alexnet"), {1, 8, 32}, {10, 50, 100});
  ASSERT_TRUE(ParseAndFit(good, nullptr).ok());
  const std::string numbers[] = {"",    "0",      "-1",  "1e400", "nan", "inf",
                                 "2.5", "1e-320", "100", "101",   "abc", "1e300"};
  static constexpr char kBytes[] = ",\n\r#.-e0123456789 \0abhw_\xEF";
  const testing::MutationVocabulary vocabulary{
      .bytes = std::string_view(kBytes, sizeof(kBytes) - 1), .numbers = numbers};
  std::mt19937 rng(7);
  int parsed = 0, fitted = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string text = testing::Mutate(good, rng, vocabulary);
    Result<FitSamples> s = ParseFitSamplesCsv(text, "fuzz.csv");
    if (!s.ok()) {
      EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << text;
      EXPECT_EQ(s.status().message().rfind("fuzz.csv", 0), 0u) << s.status().message();
      continue;
    }
    ++parsed;
    Result<MpsCoefficients> fit = FitMpsCoefficients(*s, nullptr);
    if (!fit.ok()) {
      EXPECT_EQ(fit.status().code(), StatusCode::kInvalidArgument) << text;
      EXPECT_EQ(fit.status().message().rfind("fuzz.csv", 0), 0u) << fit.status().message();
      continue;
    }
    ++fitted;
    // Whatever fits must write a file that reads back.
    Result<MpsCoefficients> back = ParseMpsCoefficientsJson(FormatMpsCoefficientsJson(*fit), "j");
    EXPECT_TRUE(back.ok()) << back.status().ToString() << "\n" << text;
  }
  EXPECT_GT(parsed, 100);
  EXPECT_GT(fitted, 50);
}

TEST(IgniterFit, MissingConstantsAreListedWithHowToGiveThem) {
  const WorkloadCoefficients resnet = *V100().Find("resnet50");
  const std::string curves =
      kHeader + CurveRowsOnly(SynthesizeRows(resnet, {1, 8, 32}, {10, 50, 100}));
  Result<MpsCoefficients> r = ParseAndFit(curves, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "s.csv: hardware: missing F, P, p_idle, unit, B_pcie, alpha_f, alpha_sch, beta_sch; "
            "give each as a CSV row (e.g. 'hardware,F,,,VALUE') or in the base coefficients "
            "(--base)");

  r = ParseAndFit(curves + HardwareRows(V100().hardware), nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "s.csv: model 'resnet50': missing kernels, sched_ms, load_bytes, feedback_bytes, "
            "alpha_cache; give each as a CSV row (e.g. 'resnet50,kernels,,,VALUE') or in the "
            "base coefficients (--base)");

  r = ParseAndFit(kHeader + HardwareRows(V100().hardware) + "vgg19,kernels,,,29\n", nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "model 'vgg19': missing sched_ms, load_bytes, feedback_bytes, alpha_cache, "
                "active_ms samples, power_w samples, l2_pct samples"),
            std::string::npos)
      << r.status().message();
}

TEST(IgniterFit, TooFewOrDegenerateSamplesNameTheModel) {
  const MpsCoefficients v100 = V100();
  const WorkloadCoefficients& vgg = *v100.Find("vgg19");
  // Two batches cannot separate the b^2 term.
  Result<MpsCoefficients> r = ParseAndFit(
      kHeader + HardwareRows(v100.hardware) + SynthesizeRows(vgg, {1, 32}, {10, 50, 100}), nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("model 'vgg19': fitting k1..k5 needs at least 6 active_ms "
                                      "samples over 3 distinct batches and 3 distinct resources, "
                                      "got 6 samples, 2 batches, 3 resources"),
            std::string::npos)
      << r.status().message();
  // One batch and resource for power: no slope to fit (k from the base).
  r = ParseAndFit(std::string(kHeader) + "vgg19,power_w,1,10,100\nvgg19,power_w,1,10,101\n", &v100);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("model 'vgg19': fitting power_w needs at least 2 samples"),
            std::string::npos)
      << r.status().message();
}

TEST(IgniterFit, MergesWithBaseCoefficients) {
  const MpsCoefficients base = V100();
  // A slower resnet50 (constants from the base), a new model, and a new power cap.
  WorkloadCoefficients slower = *base.Find("resnet50");
  slower.k = {0.01, 70, 2, 1.5, 2.5};
  const std::string rows = CurveRowsOnly(SynthesizeRows(slower, kBatches, {10, 25, 50, 75, 100}));
  WorkloadCoefficients mine = *base.Find("alexnet");
  mine.model = "mymodel";
  mine.kernels = 7;
  const std::string csv = kHeader + rows + "resnet50,kernels,,,81\nhardware,P,,,250\n" +
                          SynthesizeRows(mine, kBatches, {10, 50, 100});
  Result<MpsCoefficients> fit = ParseAndFit(csv, &base);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();

  std::vector<std::string> order;
  for (const WorkloadCoefficients& w : fit->workloads) order.push_back(w.model);
  EXPECT_EQ(order, (std::vector<std::string>{"alexnet", "resnet50", "vgg19", "ssd", "mymodel"}));
  const WorkloadCoefficients& resnet = *fit->Find("resnet50");
  for (int i = 0; i < 5; ++i) ExpectRelativelyNear(resnet.k[i], slower.k[i], 1e-6, "k");
  EXPECT_EQ(resnet.kernels, 81);                                    // from the CSV
  EXPECT_EQ(resnet.sched_ms, base.Find("resnet50")->sched_ms);      // from the base
  EXPECT_EQ(resnet.load_bytes, base.Find("resnet50")->load_bytes);  // from the base
  EXPECT_EQ(fit->Find("mymodel")->kernels, 7);
  EXPECT_EQ(FormatMpsCoefficientsJson({base.hardware, {*fit->Find("vgg19")}}),
            FormatMpsCoefficientsJson({base.hardware, {*base.Find("vgg19")}}));
  EXPECT_EQ(fit->hardware.power_cap_w, 250);
  EXPECT_EQ(fit->hardware.max_frequency_mhz, base.hardware.max_frequency_mhz);
  EXPECT_EQ(fit->hardware.alpha_f, base.hardware.alpha_f);

  // Constants alone keep the base's curves.
  fit = ParseAndFit(std::string(kHeader) + "ssd,alpha_cache,,,0.003\n", &base);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_EQ(fit->Find("ssd")->alpha_cache, 0.003);
  EXPECT_EQ(fit->Find("ssd")->k, base.Find("ssd")->k);
  EXPECT_EQ(fit->Find("ssd")->power, base.Find("ssd")->power);
}

}  // namespace
}  // namespace tessera
