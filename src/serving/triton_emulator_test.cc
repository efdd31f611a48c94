// TritonEmulator over loopback: the KServe v2 routes, Triton's dynamic
// batcher (a preferred batch starts at once, a partial one waits for its
// queue delay), Triton's metrics, bad requests and a stop with requests
// queued. No test reads a time: batches are counted, not timed.
#include "tessera/serving/triton_emulator.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fuzz_mutator.h"

namespace tessera {
namespace {

EmulatorOptions Options(int batch, int64_t delay_us) {
  EmulatorOptions o;
  o.model = "resnet50";
  o.batching.max_batch_size = batch;
  o.batching.dynamic_batching = true;
  o.batching.preferred_batch_sizes = {batch};
  o.batching.max_queue_delay_us = delay_us;
  o.latency_ms.assign(batch, 1.0);
  o.http_port = 0;
  o.metrics_port = 0;
  return o;
}

// The value of `name` in Prometheus text; -1 when absent.
double Metric(const std::string& text, const std::string& name) {
  const std::string key = name + "{model=\"resnet50\",version=\"1\"} ";
  const size_t at = text.find(key);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + key.size()));
}

int Infer(int port, const std::string& body = R"({"inputs": []})") {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(60, 0);
  const auto res = client.Post("/v2/models/resnet50/infer", body, "application/json");
  return res ? res->status : -1;
}

// Four requests with a preferred batch of 4 and an hour of queue delay:
// they can only be answered as one batch.
TEST(TritonEmulatorTest, APreferredBatchRunsAtOnce) {
  Result<std::unique_ptr<TritonEmulator>> e = TritonEmulator::Start(Options(4, 3'600'000'000));
  ASSERT_TRUE(e.ok()) << e.status().message();
  std::vector<std::thread> clients;
  std::vector<int> status(4);
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&, i] { status[i] = Infer((*e)->http_port()); });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(status, std::vector<int>(4, 200));
  const std::string metrics = (*e)->MetricsText();
  EXPECT_EQ(Metric(metrics, "nv_inference_request_success"), 4);
  EXPECT_EQ(Metric(metrics, "nv_inference_exec_count"), 1);
  EXPECT_EQ(Metric(metrics, "nv_inference_count"), 4);
  EXPECT_GE(Metric(metrics, "nv_inference_compute_infer_duration_us"), 4 * 1000);

  httplib::Client client("127.0.0.1", (*e)->metrics_port());
  const auto scraped = client.Get("/metrics");
  ASSERT_TRUE(scraped);
  EXPECT_EQ(Metric(scraped->body, "nv_inference_exec_count"), 1);
}

// A lone request with no delay runs alone; routes and errors answer as
// Triton's do.
TEST(TritonEmulatorTest, RoutesAndErrors) {
  Result<std::unique_ptr<TritonEmulator>> e = TritonEmulator::Start(Options(8, 0));
  ASSERT_TRUE(e.ok()) << e.status().message();
  const int port = (*e)->http_port();
  EXPECT_EQ(Infer(port), 200);
  httplib::Client client("127.0.0.1", port);
  EXPECT_EQ(client.Get("/v2/health/live")->status, 200);
  EXPECT_EQ(client.Get("/v2/health/ready")->status, 200);
  EXPECT_EQ(client.Get("/v2/models/resnet50/ready")->status, 200);
  EXPECT_EQ(client.Get("/v2/models/other/ready")->status, 404);
  const auto meta = client.Get("/v2/models/resnet50");
  ASSERT_TRUE(meta);
  EXPECT_NE(meta->body.find("\"name\":\"resnet50\""), std::string::npos) << meta->body;
  EXPECT_EQ(client.Get("/nope")->status, 404);
  const auto other = client.Post("/v2/models/other/infer", "{}", "application/json");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
  EXPECT_NE(other->body.find("\"error\""), std::string::npos);
  for (const std::string body : {"", "x", "[]", R"({"inputs": 3})", "{\"inputs\": [", "null"}) {
    EXPECT_EQ(Infer(port, body), 400) << body;
  }
  const std::string metrics = (*e)->MetricsText();
  EXPECT_EQ(Metric(metrics, "nv_inference_request_success"), 1);
  EXPECT_EQ(Metric(metrics, "nv_inference_exec_count"), 1);
  EXPECT_EQ(Metric(metrics, "nv_inference_request_failure"), 6);
}

// Stopped with a request waiting for an hour's queue delay: it is answered
// 503, not left hanging.
TEST(TritonEmulatorTest, StopAnswersQueuedRequests) {
  Result<std::unique_ptr<TritonEmulator>> e = TritonEmulator::Start(Options(4, 3'600'000'000));
  ASSERT_TRUE(e.ok()) << e.status().message();
  int status = 0;
  std::thread client([&] { status = Infer((*e)->http_port()); });
  while (Metric((*e)->MetricsText(), "nv_inference_pending_request_count") != 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  (*e)->Stop();
  client.join();
  EXPECT_EQ(status, 503);
  (*e)->Wait();
}

// Mutated infer bodies and paths: every one is answered (200, 400 or 404),
// the emulator keeps serving, and its counters account for each.
TEST(TritonEmulatorTest, MutatedRequestsAreAnsweredNotFatal) {
  Result<std::unique_ptr<TritonEmulator>> e = TritonEmulator::Start(Options(1, 0));
  ASSERT_TRUE(e.ok()) << e.status().message();
  httplib::Client client("127.0.0.1", (*e)->http_port());
  client.set_read_timeout(10, 0);
  const std::string body =
      R"({"id": "7", "inputs": [{"name": "INPUT0", "shape": [1, 1], "datatype": "FP32", "data": [0]}]})";
  std::mt19937 rng(11);
  for (int i = 0; i < 300; ++i) {
    const std::string mutant = testing::Mutate(body, rng, testing::JsonMutations());
    const auto res = client.Post("/v2/models/resnet50/infer", mutant, "application/json");
    ASSERT_TRUE(res) << mutant;
    EXPECT_TRUE(res->status == 200 || res->status == 400) << res->status << " " << mutant;
    const std::string path =
        testing::Mutate("/v2/models/resnet50/ready", rng, testing::JsonMutations());
    const auto ready = client.Get(path);
    EXPECT_TRUE(!ready || ready->status == 200 || ready->status == 404 || ready->status == 400)
        << path;
  }
  EXPECT_EQ(Infer((*e)->http_port()), 200);
}

TEST(TritonEmulatorTest, RefusesBadOptions) {
  EmulatorOptions o = Options(4, 0);
  o.latency_ms = {1, 2};
  EXPECT_FALSE(TritonEmulator::Start(o).ok());
  o = Options(4, 0);
  o.latency_ms[1] = 0;
  EXPECT_FALSE(TritonEmulator::Start(o).ok());
  o = Options(4, 0);
  o.dilation = 0.5;
  EXPECT_FALSE(TritonEmulator::Start(o).ok());
  o = Options(4, 0);
  o.model.clear();
  EXPECT_FALSE(TritonEmulator::Start(o).ok());
}

}  // namespace
}  // namespace tessera
