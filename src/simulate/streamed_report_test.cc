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
#include "tessera/simulator.h"
#include "util/quantile_histogram.h"

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
    // bursty, jsq, lognormal (recorded again when jsq began to fill the batch
    // that starts first: the same kept-and-sorted report, printed by a patch)
    {{
        {17148, 0, 857.39999999999998, 850.75, 0.71588523442967111, 73.360276662774467,
         57.349346160888672, 232.81747436523438, 265.64239501953125, 299.75839233398438},
        {8599, 0, 429.94999999999999, 429.94999999999999, 1, 5.5455348441129653, 11.293917655944824,
         21.601507186889648, 25.006401062011719, 30.991189956665039},
        {4265, 0, 853, 822.39999999999998, 0.80867526377491206, 56.985104788564094,
         63.655220031738281, 130.30172729492188, 151.14280700683594, 158.4007568359375},
        {2019, 0, 403.80000000000001, 401.80000000000001, 1, 6.0344543487315425, 11.779095649719238,
         21.965303421020508, 25.307565689086914, 29.135902404785156},
        {5078, 0, 725.42857142857144, 721, 0.90547459629775506, 38.011885460942345,
         33.842369079589844, 111.9066162109375, 122.59447479248047, 143.03248596191406},
        {3432, 0, 490.28571428571428, 490.28571428571428, 1, 5.2711292730366521, 11.103124618530273,
         21.654026031494141, 25.070674896240234, 30.511297225952148},
        {7805, 0, 975.625, 959, 0.54183215887251757, 105.30636744642808, 84.152481079101562,
         256.85018920898438, 283.92111206054688, 299.75839233398438},
        {3148, 0, 393.5, 393.5, 1, 5.5311229762949576, 11.209518432617188, 21.344293594360352,
         24.617443084716797, 30.991189956665039},
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
