// The simulator's report with streamed percentiles (quantile_histogram.h)
// against the report it gave when it kept every served request's latency and
// sorted them (main at 0ec6128, figures below printed by that build): on the
// same runs every count and rate is the same, and every percentile is within
// QuantileHistogram's relative error of the exact one.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "simulate/windowed_simulation.h"
#include "tessera/quantile_histogram.h"
#include "tessera/simulator.h"

namespace tessera {
namespace {

// Two services on two GPUs, with batches above 1, several processes, and an
// instance of "b" that takes requests only from 5 s to 15 s.
ServingModel SmallModel() {
  ServingModel model;
  model.services.push_back({"a", 800, 100, {0, 1}});
  model.services.push_back({"b", 300, 50, {2, 3}});
  model.instances.push_back({"a", 0, 0, "3g.40gb", 0, 3, 2, 4, {4, 5, 6, 7}});
  model.instances.push_back({"a", 0, 0, "1g.10gb", 4, 1, 1, 2, {6, 9}});
  model.instances.push_back({"b", 1, 1, "2g.20gb", 0, 2, 1, 8, {3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5}});
  ServingInstance late = {"b", 1, 1, "1g.10gb", 4, 1, 1, 2, {5, 8}};
  late.accepts_from_s = 5;
  late.accepts_until_s = 15;
  model.instances.push_back(late);
  return model;
}

struct SimRun {
  std::string name;
  SimOptions options;
};

std::vector<SimRun> Runs() {
  std::vector<SimRun> runs;
  SimOptions o;
  o.duration_s = 20;
  o.seed = 11;
  runs.push_back({"poisson, weighted", o});
  o.arrivals = ArrivalKind::kBursty;
  o.burst = {0.5, 0.5};
  o.router = Router::kShortestQueue;
  o.variability = Variability::kLognormal;
  o.cv = 0.3;
  runs.push_back({"bursty, jsq, lognormal", o});
  o.burst = {0.2, 1.0};
  o.router.reset();
  o.variability = Variability::kExponential;
  o.drop_after_ms = 15;
  o.seed = 5;
  runs.push_back({"overloading bursts, exponential, drops", o});
  return runs;
}

// Each run is also reported in three windows: [0, 5), [5, 12) and [12, 20] s.
const std::vector<double> kBounds = {0, 5, 12, 20};

// What the simulator reported, before streaming, for one service over the
// whole run or one window.
struct Before {
  long requests, dropped;
  double offered_rps, achieved_rps, compliance, mean_wait_ms;
  double p50_ms, p95_ms, p99_ms, max_ms;  // of latencies kept as floats
};

// Per run of Runs(): services a and b over the run, then over each window.
const std::vector<std::vector<Before>> kBefore = {
    // poisson, weighted
    {{
        {16101, 0, 805.04999999999995, 804.5, 1, 5.2568774533525797, 11.586957931518555,
         22.535982131958008, 30.86102294921875, 49.393890380859375},
        {6002, 0, 300.10000000000002, 300, 1, 9.6155074934876339, 15.444760322570801, 24, 24.5,
         24.971670150756836},
        {4074, 0, 814.79999999999995, 813.60000000000002, 1, 5.2428108688094666, 11.596611976623535,
         22.326370239257812, 30.702482223510742, 48.500953674316406},
        {1508, 0, 301.60000000000002, 300.39999999999998, 1, 9.4132057009368797, 14.879871368408203,
         24, 24.5, 24.947198867797852},
        {5618, 0, 802.57142857142856, 801.57142857142856, 1, 5.2088920518074424, 11.553653717041016,
         22.443321228027344, 30.41221809387207, 48.953338623046875},
        {2098, 0, 299.71428571428572, 299.14285714285717, 1, 9.7661491096785014, 15.725485801696777,
         24, 24.5, 24.971670150756836},
        {6409, 0, 801.125, 799.75, 1, 5.3078821734819837, 11.613229751586914, 22.73161506652832,
         31.552614212036133, 49.393890380859375},
        {2396, 0, 299.5, 299.25, 1, 9.6109269393966468, 15.527393341064453, 24, 24.5,
         24.76788330078125},
    }},
    // bursty, jsq, lognormal
    {{
        {17148, 0, 857.39999999999998, 849.54999999999995, 0.70212269652437598, 73.834125743136397,
         58.949672698974609, 223.47454833984375, 267.87261962890625, 289.345458984375},
        {8599, 0, 429.94999999999999, 429.94999999999999, 1, 6.5210661196872026, 12.351238250732422,
         22.782485961914062, 25.516426086425781, 30.298484802246094},
        {4265, 0, 853, 819.60000000000002, 0.77866354044548647, 59.305802679340026,
         66.201614379882812, 138.96084594726562, 151.02780151367188, 165.43846130371094},
        {2019, 0, 403.80000000000001, 401.80000000000001, 1, 6.078732315592724, 12.111567497253418,
         22.028984069824219, 24.630233764648438, 27.608711242675781},
        {5078, 0, 725.42857142857144, 720.71428571428567, 0.89346199291059469, 40.404270221675446,
         35.561397552490234, 120.08197784423828, 133.57646179199219, 142.68751525878906},
        {3432, 0, 490.28571428571428, 490.28571428571428, 1, 6.9287412954575212, 12.714798927307129,
         23.14161491394043, 25.684724807739258, 30.298484802246094},
        {7805, 0, 975.625, 956, 0.53581037796284436, 103.52280020887207, 88.195259094238281,
         253.359619140625, 277.006591796875, 289.345458984375},
        {3148, 0, 393.5, 393.5, 1, 6.360307144853345, 12.167952537536621, 22.680158615112305,
         25.651882171630859, 29.856256484985352},
    }},
    // overloading bursts, exponential, drops
    {{
        {22327, 14645, 1116.3499999999999, 384.10000000000002, 0.34406772069691405,
         12.292149757659589, 17.838544845581055, 34.615318298339844, 46.450695037841797,
         73.943305969238281},
        {8951, 1999, 447.55000000000001, 347.60000000000002, 0.77477376829404532,
         6.9762888440621245, 12.689733505249023, 28.38304328918457, 38.816982269287109,
         59.020221710205078},
        {6884, 4558, 1376.8, 465.19999999999999, 0.33788495061011042, 12.239053798565614,
         17.930429458618164, 35.060596466064453, 45.378490447998047, 73.943305969238281},
        {3460, 928, 692, 502.39999999999998, 0.72745664739884397, 7.723371180522923,
         13.559441566467285, 30.057424545288086, 40.528610229492188, 59.020221710205078},
        {8196, 5334, 1170.8571428571429, 404.28571428571428, 0.34919472913616401,
         12.140333623298428, 17.578489303588867, 34.053863525390625, 46.098983764648438,
         62.590919494628906},
        {3710, 684, 530, 432.28571428571428, 0.81509433962264155, 6.1509128284218022,
         11.485459327697754, 27.45611572265625, 36.694873809814453, 51.402217864990234},
        {7247, 4753, 905.875, 311.75, 0.3441424037532772, 12.515886316358277, 17.993459701538086,
         34.771572113037109, 48.384811401367188, 58.128650665283203},
        {1781, 387, 222.625, 174.25, 0.78270634475014034, 7.4109913888317829, 13.515103340148926,
         26.468095779418945, 39.756828308105469, 43.675434112548828},
    }},
};

// Kept as floats, the latencies were rounded within 2^-24 of themselves.
constexpr double kFloatRounding = 1.0 / (1 << 23);

void ExpectAgrees(const ServiceReport& now, const Before& before, const std::string& what) {
  EXPECT_EQ(now.requests, before.requests) << what;
  EXPECT_EQ(now.dropped, before.dropped) << what;
  EXPECT_DOUBLE_EQ(now.offered_rps, before.offered_rps) << what;
  EXPECT_DOUBLE_EQ(now.achieved_rps, before.achieved_rps) << what;
  EXPECT_DOUBLE_EQ(now.compliance, before.compliance) << what;
  EXPECT_DOUBLE_EQ(now.mean_wait_ms, before.mean_wait_ms) << what;
  const double bound = QuantileHistogram::kRelativeError + kFloatRounding;
  EXPECT_NEAR(now.p50_ms, before.p50_ms, bound * before.p50_ms) << what;
  EXPECT_NEAR(now.p95_ms, before.p95_ms, bound * before.p95_ms) << what;
  EXPECT_NEAR(now.p99_ms, before.p99_ms, bound * before.p99_ms) << what;
  EXPECT_NEAR(now.max_ms, before.max_ms, kFloatRounding * before.max_ms) << what;
}

TEST(StreamedReport, AgreesWithTheSortedReport) {
  const ServingModel model = SmallModel();
  const std::vector<SimRun> runs = Runs();
  ASSERT_EQ(runs.size(), kBefore.size());
  for (size_t k = 0; k < runs.size(); ++k) {
    Result<WindowedSimReport> r = SimulateWindows(model, runs[k].options, kBounds);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<const ServiceReport*> rows;
    for (const ServiceReport& s : r->overall.services) rows.push_back(&s);
    for (const std::vector<ServiceReport>& window : r->windows) {
      for (const ServiceReport& s : window) rows.push_back(&s);
    }
    ASSERT_EQ(rows.size(), kBefore[k].size()) << runs[k].name;
    for (size_t i = 0; i < rows.size(); ++i) {
      ExpectAgrees(*rows[i], kBefore[k][i], runs[k].name + ", row " + std::to_string(i));
    }
  }
}

// The same seed gives the same report, to the last bit.
TEST(StreamedReport, SameSeedSameReport) {
  const ServingModel model = SmallModel();
  for (const SimRun& run : Runs()) {
    Result<SimReport> a = Simulate(model, run.options);
    Result<SimReport> b = Simulate(model, run.options);
    ASSERT_TRUE(a.ok() && b.ok()) << run.name;
    EXPECT_EQ(FormatSimReportJson(*a), FormatSimReportJson(*b)) << run.name;
    for (size_t s = 0; s < a->services.size(); ++s) {
      EXPECT_EQ(a->services[s].p50_ms, b->services[s].p50_ms) << run.name;
      EXPECT_EQ(a->services[s].p99_ms, b->services[s].p99_ms) << run.name;
      EXPECT_EQ(a->services[s].max_ms, b->services[s].max_ms) << run.name;
    }
  }
}

}  // namespace
}  // namespace tessera
