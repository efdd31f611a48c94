// The router agent's inputs: --node-address values, and the router work it
// reads from the network, read strictly (every field, each error naming
// its field) and never crashing on a mutant. A real HAProxy takes the
// dynamic servers the agent adds with FormatServerArgs, and deletes them
// once in maintenance. (RehearseCliTest runs the whole agent under serve.)
#include "tessera/serving/router_agent.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "emit/router_config.h"
#include "fuzz_mutator.h"
#include "serving/children.h"
#include "serving/haproxy_runtime.h"
#include "serving/router_work.h"

namespace tessera {
namespace {

constexpr const char* kWork = R"({"version": 7, "router": "edge", "rule": "leastconn",
  "base_port": 20000, "backends": [{"service": "ResNet_50", "name": "resnet-50", "slo_ms": 138,
  "servers": [{"name": "node-0-g0-s0-p0", "node": "node-0", "port": 20000, "batch": 8,
  "weight": 256, "state": "ready"}, {"name": "node-0-g0-s4-p0", "node": "node-0",
  "port": 20576, "batch": 8, "weight": 0, "state": "drain"}]}],
  "transition": {"id": 3, "phase": 2, "state": "running", "step": "drain"}})";

TEST(RouterAgentTest, ReadsNodeAddresses) {
  Result<std::pair<std::string, NodeAddress>> plain = ParseNodeAddress("node-0=10.0.0.5");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->first, "node-0");
  EXPECT_EQ(plain->second.host, "10.0.0.5");
  EXPECT_EQ(plain->second.base_port, 0);
  Result<std::pair<std::string, NodeAddress>> based = ParseNodeAddress("node-1=127.0.0.1:26000");
  ASSERT_TRUE(based.ok()) << based.status().message();
  EXPECT_EQ(based->second.host, "127.0.0.1");
  EXPECT_EQ(based->second.base_port, 26000);
  for (const char* bad : {"", "node-0", "=10.0.0.5", "node-0=", "node-0=h:0", "node-0=h:70000",
                          "node-0=h:x", "node-0=a b", "node-0=:20"}) {
    Result<std::pair<std::string, NodeAddress>> r = ParseNodeAddress(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--node-address"), std::string::npos) << bad;
  }
}

TEST(RouterAgentTest, ReadsTheRouterWork) {
  Result<serving::RouterWork> work = serving::ParseRouterWork(kWork, "work", "edge");
  ASSERT_TRUE(work.ok()) << work.status().message();
  EXPECT_EQ(work->version, 7);
  ASSERT_TRUE(work->rule.has_value());
  EXPECT_EQ(*work->rule, Router::kLeastConn);
  ASSERT_EQ(work->backends.size(), 1u);
  EXPECT_EQ(work->backends[0].service, "ResNet_50");
  EXPECT_EQ(work->backends[0].slo_ms, 138);
  ASSERT_EQ(work->backends[0].servers.size(), 2u);
  EXPECT_EQ(work->backends[0].servers[1].state, RouterServerState::kDrain);
  EXPECT_EQ(work->backends[0].servers[1].server.port, 20576);
  ASSERT_TRUE(work->transition.has_value());
  EXPECT_EQ(work->transition->step, "drain");
}

TEST(RouterAgentTest, RefusesWorkItCannotTrust) {
  const std::string work = kWork;
  const auto refused = [&](const std::string& from, const std::string& to,
                           const std::string& field) {
    std::string changed = work;
    const size_t at = changed.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    changed.replace(at, from.size(), to);
    Result<serving::RouterWork> r = serving::ParseRouterWork(changed, "work", "edge");
    ASSERT_FALSE(r.ok()) << to;
    EXPECT_NE(r.status().message().find(field), std::string::npos) << r.status().message();
  };
  refused(R"("router": "edge")", R"("router": "other")", "router");
  refused(R"("rule": "leastconn")", R"("rule": "jsq")", "jsq");
  refused(R"("name": "resnet-50")", R"("name": "resnet 50")", "backends[0].name");
  refused(R"("port": 20576)", R"("port": 70000)", "backends[0].servers[1].port");
  refused(R"("state": "drain")", R"("state": "gone")", "backends[0].servers[1].state");
  refused(R"("weight": 0)", R"("weight": 300)", "backends[0].servers[1].weight");
  refused(R"("step": "drain")", R"("step": "undo")", "transition.step");
  refused(R"("version": 7,)", R"("version": 7, "extra": 1,)", "extra");
}

TEST(RouterAgentTest, MutatedWorkFailsCleanlyOrParses) {
  std::mt19937 rng(23);
  for (int i = 0; i < 3000; ++i) {
    const std::string mutant = testing::Mutate(kWork, rng, testing::JsonMutations());
    Result<serving::RouterWork> r = serving::ParseRouterWork(mutant, "work", "edge");
    if (!r.ok()) {
      EXPECT_TRUE(r.status().message().starts_with("work")) << r.status().message();
    }
  }
}

// A port some listener holds with SO_REUSEPORT (as HAProxy binds) is found
// taken: a second router would silently share its connections.
TEST(RouterAgentTest, APortAnotherListenerHoldsIsTaken) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(10850);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  const Status taken = serving::CheckPortsFree({10851, 10850}, "127.0.0.1");
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.message().find("port 10850"), std::string::npos) << taken.message();
  close(fd);
  EXPECT_TRUE(serving::CheckPortsFree({10850, 10851}, "127.0.0.1").ok());
}

// HAProxy 2.6 takes a dynamic server with the config's server arguments,
// and deletes it once in maintenance.
TEST(RouterAgentTest, HaproxyAddsAndDeletesDynamicServers) {
  if (std::system("haproxy -v >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "haproxy is not installed (scripts/setup.sh installs it)";
  }
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("router-agent-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  RouterBackend backend{"resnet50", "resnet50", 10800, {}};
  RouterSettings settings;
  settings.bind_address = "127.0.0.1";
  settings.metrics_port = 10890;
  settings.max_connections = 1000;
  settings.stats_socket = "/tmp/tessera-router-agent-test-" + std::to_string(getpid()) + ".sock";
  LatencyRule rule;
  rule.router = Router::kLeastConn;
  const std::string config = (dir / "haproxy.cfg").string();
  ASSERT_TRUE(serving::WriteTextFile(config, FormatHaproxyConfig(rule, {backend}, settings)).ok());
  serving::Children children;
  Result<pid_t> pid =
      children.Spawn({"haproxy", "-db", "-f", config}, {}, (dir / "haproxy.log").string());
  ASSERT_TRUE(pid.ok()) << pid.status().message();
  const Status up = serving::WaitForHaproxy({10800}, *pid, (dir / "haproxy.log").string());
  ASSERT_TRUE(up.ok()) << up.message();
  const serving::HaproxyRuntime runtime(settings.stats_socket);
  RouterServer server{"node-0-g0-s0-p0", "127.0.0.1", 10801, 8, 200, "node-0", 0, 0, 0, true, {}};
  ASSERT_TRUE(
      runtime.AddServer("resnet50", server.name, FormatServerArgs(rule.router, server)).ok());
  Result<std::map<std::pair<std::string, std::string>, serving::ServerLoad>> servers =
      runtime.Servers();
  ASSERT_TRUE(servers.ok()) << servers.status().message();
  ASSERT_TRUE(servers->count({"resnet50", server.name}));
  EXPECT_EQ(servers->at({"resnet50", server.name}).status, "MAINT");
  // Twice is refused with HAProxy's reason.
  const Status again =
      runtime.AddServer("resnet50", server.name, FormatServerArgs(rule.router, server));
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find("haproxy refused"), std::string::npos) << again.message();
  ASSERT_TRUE(runtime.DelServer("resnet50", server.name).ok());
  servers = runtime.Servers();
  ASSERT_TRUE(servers.ok());
  EXPECT_FALSE(servers->count({"resnet50", server.name}));
  children.StopAll();
  std::filesystem::remove_all(dir);
  std::filesystem::remove(settings.stats_socket);
}

}  // namespace
}  // namespace tessera
