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

// Two processes of batch 2 running 10 ms batches, and a 5 ms queue delay;
// requests at 0, 1, 2, 3 and 4 ms.
SimReport RouteFive(Router router, double slow_share = 1) {
  ServingModel model;
  model.services.push_back({"s", 1000, 1000, {0, 1}});
  model.instances.push_back({"s", 0, 0, "3g.40gb", 0, 3, 1, 2, {10, 10}});
  model.instances.push_back({"s", 0, 1, "3g.40gb", 4, 3, 1, 2, {10 / slow_share, 10 / slow_share}});
  SimOptions options;
  options.duration_s = 1;
  options.router = router;
  options.max_queue_delay_ms = 5;
  options.arrivals = ArrivalKind::kTrace;
  options.trace["s"] = {0, 0.001, 0.002, 0.003, 0.004};
  Result<SimReport> r = Simulate(model, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : SimReport{};
}

// HAProxy's balance first, maxconn = two batches (4 requests), requests
// every ms from 0 to 9: 0 and 1 fill the first process's batch (1-11 ms),
// 2 and 3 its next; 4 and 5 the second process's (5-15), 6 and 7 its next;
// 8 and 9 find both full and wait in the backend's queue. At 11 ms the first
// process starts 2 and 3 (11-21) and then takes 8 and 9 into its free
// slots, which run once it is free again (21-31); the second runs 6 and 7
// at 15 ms (15-25). Waits 1, 0, 9, 8, 1, 0, 9, 8, 13 and 12 ms.
TEST(SimulatorRouting, FirstFillsTheFirstFreeSlotsAndQueuesTheRest) {
  ServingModel model;
  model.services.push_back({"s", 1000, 1000, {0, 1}});
  model.instances.push_back({"s", 0, 0, "3g.40gb", 0, 3, 1, 2, {10, 10}});
  model.instances.push_back({"s", 0, 1, "3g.40gb", 4, 3, 1, 2, {10, 10}});
  SimOptions options;
  options.duration_s = 1;
  options.router = Router::kFirst;
  options.max_queue_delay_ms = 5;
  options.arrivals = ArrivalKind::kTrace;
  for (int ms = 0; ms < 10; ++ms) options.trace["s"].push_back(ms / 1000.0);
  Result<SimReport> r = Simulate(model, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->services[0].requests, 10);
  EXPECT_NEAR(r->services[0].max_ms, 23, 1e-9);
  EXPECT_NEAR(r->services[0].mean_wait_ms, 61 / 10.0, 1e-9);
}

// HAProxy's leastconn: key 0 for a process with nothing outstanding, else
// (outstanding + 1) x 256 / weight; equal keys go to the process whose count
// changed longest ago. Equal weights: 0 ms -> first (a tie at 0), 1 ms ->
// second (key 0 < 2), 2 ms -> first (keys 2 and 2, the first changed
// earlier; its batch runs 2-12 ms), 3 ms -> second (3 > 2; 3-13 ms), 4 ms ->
// first (3 and 3), which runs it alone after its batch, 12-22 ms: latencies
// 12, 12, 10, 10 and 18 ms, waits 2, 2, 0, 0 and 8 ms.
TEST(SimulatorRouting, LeastConnFollowsHaproxysKeysAndTies) {
  const SimReport r = RouteFive(Router::kLeastConn);
  EXPECT_NEAR(r.services[0].max_ms, 18, 1e-9);
  EXPECT_NEAR(r.services[0].mean_wait_ms, (2 + 2 + 0 + 0 + 8) / 5.0, 1e-9);
}

// With the second process at half the speed (20 ms batches) its weight is
// 126 (ProxyWeights of its SLO-safe capacity, 97.3 against 197.4 requests/s).
// 0 ms -> first (a tie at 0); 1 ms -> second (key 0); 2 ms -> first (keys 2
// and 2 x 256 / 126 = 4; its batch runs 2-12 ms); 3 ms -> first (3 against
// 4; it waits for the next batch, 12-22 ms); 4 ms: 4 against 4, the second
// changed longer ago and takes it, filling its batch (4-24 ms).
TEST(SimulatorRouting, LeastConnWeighsByCapacity) {
  const SimReport r = RouteFive(Router::kLeastConn, 0.5);
  EXPECT_NEAR(r.services[0].max_ms, 23, 1e-9);
  EXPECT_NEAR(r.services[0].mean_wait_ms, (2 + 3 + 0 + 9 + 0) / 5.0, 1e-9);
}

// A Kubernetes Service sends each process the same share of requests
// whatever its capacity; the weighted router sends the faster one more.
TEST(SimulatorRouting, EqualOddsIgnoreCapacity) {
  ServingModel model;
  model.services.push_back({"s", 200, 1000, {0, 1}});
  model.instances.push_back({"s", 0, 0, "3g.40gb", 0, 3, 1, 1, {1}});
  model.instances.push_back({"s", 0, 1, "1g.10gb", 4, 1, 1, 1, {4}});
  SimOptions options;
  options.duration_s = 200;
  options.router = Router::kEqual;
  Result<SimReport> r = Simulate(model, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Busy shares 100 x 1 ms and 100 x 4 ms per second.
  EXPECT_NEAR(r->instances[0].busy_share, 0.1, 0.01);
  EXPECT_NEAR(r->instances[1].busy_share, 0.4, 0.03);
  options.router = Router::kWeighted;
  r = Simulate(model, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->instances[0].busy_share, 0.16, 0.01);  // 4/5 of 200 at 1 ms
  EXPECT_NEAR(r->instances[1].busy_share, 0.16, 0.02);  // 1/5 of 200 at 4 ms
}

}  // namespace
}  // namespace tessera
