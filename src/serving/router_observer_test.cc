// RouterObserver: HAProxy's request log lines read strictly, counted per
// backend over real UDP on loopback, malformed datagrams counted and never
// fatal; the configuration that sends them passes `haproxy -c` where
// HAProxy is installed. (The rehearsal test checks that the router logs
// exactly the requests the generator sent.)
#include "serving/router_observer.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "emit/router_config.h"
#include "fuzz_mutator.h"

namespace tessera {
namespace {

TEST(RouterObserverTest, ReadsBackendStatusAndMilliseconds) {
  Result<RouterLogLine> line = ParseRouterLogLine("resnet50 200 41\n");
  ASSERT_TRUE(line.ok()) << line.status().message();
  EXPECT_EQ(line->backend, "resnet50");
  EXPECT_EQ(line->status, 200);
  EXPECT_EQ(line->active_ms, 41);
  line = ParseRouterLogLine("vgg16 -1 -1");
  ASSERT_TRUE(line.ok()) << line.status().message();
  EXPECT_EQ(line->status, -1);
  for (const char* bad :
       {"", "resnet50 200", "resnet50 200 41 7", "resnet50 2x0 41", "resnet50 200 fast",
        "resnet50 1000 4", "resnet50 200 nan", "resnet50 200 -5", "resnet50 200.5 4"}) {
    Result<RouterLogLine> r = ParseRouterLogLine(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("router log line"), std::string::npos) << bad;
  }
}

TEST(RouterObserverTest, MutatedLinesNeverCrash) {
  std::mt19937 rng(11);
  for (int i = 0; i < 3000; ++i) {
    (void)ParseRouterLogLine(
        testing::Mutate("densenet121 200 87\n", rng, testing::JsonMutations()));
  }
}

void Send(int port, const std::string& datagram) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sendto(fd, datagram.data(), datagram.size(), 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  close(fd);
}

TEST(RouterObserverTest, CountsEachBackendsRequestsOverUdpUntilTaken) {
  Result<std::unique_ptr<RouterObserver>> observer =
      RouterObserver::Start(0, {{"resnet50", 100}, {"vgg16", 50}});
  ASSERT_TRUE(observer.ok()) << observer.status().message();
  const int port = (*observer)->Port();
  ASSERT_GT(port, 0);
  for (int ms : {10, 20, 90, 120}) Send(port, "resnet50 200 " + std::to_string(ms));
  Send(port, "resnet50 503 2");
  Send(port, "vgg16 200 40");
  Send(port, "other 200 1");
  Send(port, "not a log line at all");
  std::map<std::string, LoadCounts> counts;
  for (int i = 0; i < 100; ++i) {  // the receiving thread is asynchronous
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if ((*observer)->Malformed() == 1) break;
  }
  counts = (*observer)->Take();
  ASSERT_EQ(counts.count("resnet50"), 1u);
  const LoadCounts& r = counts["resnet50"];
  EXPECT_EQ(r.sent, 5);
  EXPECT_EQ(r.ok, 4);
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.within_slo, 3);
  EXPECT_EQ(r.latency_ms.Count(), 4);
  EXPECT_EQ(counts["vgg16"].within_slo, 1);
  EXPECT_EQ(counts["other"].sent, 1);
  EXPECT_EQ(counts["other"].within_slo, 0);  // no SLO: never within it
  EXPECT_EQ((*observer)->Malformed(), 1);
  EXPECT_TRUE((*observer)->Take().empty());  // taken: a fresh count
}

TEST(RouterObserverTest, APortInUseIsNamed) {
  Result<std::unique_ptr<RouterObserver>> first = RouterObserver::Start(0, {});
  ASSERT_TRUE(first.ok());
  Result<std::unique_ptr<RouterObserver>> second = RouterObserver::Start((*first)->Port(), {});
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find(std::to_string((*first)->Port())), std::string::npos);
}

TEST(RouterObserverTest, TheLoggingConfigurationPassesHaproxyCheck) {
  RouterBackend backend{"resnet50", "resnet50", 18900, {}};
  backend.servers.push_back({"p0", "127.0.0.1", 18901, 8, 256, "node-0", 0, 0, 0, true, {}});
  RouterSettings settings;
  settings.bind_address = "127.0.0.1";
  settings.stats_socket = "/tmp/tessera-router-observer-test.sock";
  settings.request_log = "127.0.0.1:18999";
  LatencyRule rule;
  rule.router = Router::kLeastConn;
  const std::string config = FormatHaproxyConfig(rule, {backend}, settings);
  EXPECT_NE(config.find("    log 127.0.0.1:18999 len 1024 format raw local0 info\n"),
            std::string::npos);
  EXPECT_NE(config.find("    log-format \"%b %ST %Ta\"\n"), std::string::npos);
  EXPECT_EQ(FormatHaproxyConfig(rule, {backend}, RouterSettings{}).find("log-format"),
            std::string::npos);
  if (std::system("haproxy -v >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "haproxy is not installed (scripts/setup.sh installs it)";
  }
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "tessera-router-observer-test.cfg";
  std::ofstream(path) << config;
  EXPECT_EQ(std::system(("haproxy -c -q -f " + path.string()).c_str()), 0) << config;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tessera
