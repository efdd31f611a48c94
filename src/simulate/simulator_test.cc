#include "tessera/simulator.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tessera {
namespace {

// One service at `rate_rps` on one process with batch 1 and a mean service
// time of `service_ms`: a single-server queue.
ServingModel SingleServer(double rate_rps, double service_ms) {
  ServingModel model;
  model.services.push_back({"s", rate_rps, 1000, {0}});
  model.instances.push_back({"s", 0, 0, "7g.80gb", 0, 7, 1, 1, {service_ms}});
  return model;
}

double MeanWaitMs(double rho, Variability variability, double duration_s) {
  const double mu = 1000;  // per second: 1 ms of service
  SimOptions options;
  options.duration_s = duration_s;
  options.seed = 7;
  options.variability = variability;
  Result<SimReport> r = Simulate(SingleServer(rho * mu, 1000 / mu), options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->services[0].mean_wait_ms : 0;
}

// M/D/1: Wq = rho / (2 mu (1 - rho)) (Pollaczek-Khinchine).
TEST(SimulatorQueueing, MD1MeanWaitMatchesTheClosedForm) {
  for (double rho : {0.5, 0.8}) {
    const double expected_ms = 1000 * rho / (2 * 1000 * (1 - rho));
    EXPECT_NEAR(MeanWaitMs(rho, Variability::kNone, 2000), expected_ms, 0.02 * expected_ms)
        << "rho " << rho;
  }
}

// M/M/1: Wq = rho / (mu - lambda).
TEST(SimulatorQueueing, MM1MeanWaitMatchesTheClosedForm) {
  for (double rho : {0.5, 0.8}) {
    const double expected_ms = 1000 * rho / (1000 - rho * 1000);
    EXPECT_NEAR(MeanWaitMs(rho, Variability::kExponential, 4000), expected_ms, 0.02 * expected_ms)
        << "rho " << rho;
  }
}

// Issue 17, class 7: lognormal:1e308 squared the CV to infinity and every
// latency came out as -nan. The CV is bounded (limits::kVariabilityCv), and
// a large one within the bound still gives finite latencies.
TEST(SimulatorOptions, BoundsTheCoefficientOfVariation) {
  SimOptions options;
  options.variability = Variability::kLognormal;
  for (const double cv : {1e308, 101.0, 0.0, -1.0}) {
    options.cv = cv;
    const Status s = options.Validate();
    ASSERT_FALSE(s.ok()) << cv;
    EXPECT_NE(s.message().find("must be a finite number in (0, 100]"), std::string::npos)
        << s.message();
  }
  options.cv = 100;
  options.duration_s = 5;
  Result<SimReport> r = Simulate(SingleServer(100, 1), options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(std::isfinite(r->services[0].mean_wait_ms));
  EXPECT_TRUE(std::isfinite(r->services[0].p99_ms));
}

// The jsq router sends a request where it would be served first, batches
// counted whole. Two processes of batch 2: a fast one (10 ms a batch) and a
// slow one (30 ms); partial batches start at once. Requests at 0, 1, 2 and
// 3 ms: the first runs on the fast process until 10 ms; the next two fill its
// second batch (done at 20 ms) and the fourth its third (30 ms), where the
// idle slow process would have taken until 32 and 33 ms. A fluid drain time
// (queued over rate) had sent the third to the slow process, which it counted
// at 30 / 2 = 15 ms instead of a whole batch: done at 32 ms.
TEST(SimulatorRouting, JsqSendsEachRequestWhereItsBatchEndsFirst) {
  ServingModel model;
  model.services.push_back({"s", 1000, 1000, {0, 1}});
  model.instances.push_back({"s", 0, 0, "3g.40gb", 0, 3, 1, 2, {10, 10}});
  model.instances.push_back({"s", 0, 0, "1g.10gb", 4, 1, 1, 2, {30, 30}});
  SimOptions options;
  options.duration_s = 1;
  options.router = Router::kShortestQueue;
  options.max_queue_delay_ms = 0;
  options.arrivals = ArrivalKind::kTrace;
  options.trace["s"] = {0, 0.001, 0.002, 0.003};
  Result<SimReport> r = Simulate(model, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->services[0].requests, 4);
  EXPECT_NEAR(r->services[0].max_ms, 27, 1e-9);  // 3 ms to 30 ms
  EXPECT_NEAR(r->services[0].mean_wait_ms, (0 + 9 + 8 + 17) / 4.0, 1e-9);
  EXPECT_EQ(r->instances[1].busy_share, 0);
}

}  // namespace
}  // namespace tessera
