// HaproxyRuntime: `show stat` answers read by column name, the servers'
// loads and the frontends' requests received; malformed answers are
// errors, never a crash; a socket nobody listens on
// is an IoError naming it. (The rehearsal test drives a real HAProxy
// through the same calls.)
#include "serving/haproxy_runtime.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "fuzz_mutator.h"

namespace tessera::serving {
namespace {

// HAProxy 2.6's header begins so; the reader finds columns by name.
constexpr const char* kShowStat =
    "# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,"
    "wredis,status,weight,req_tot,\n"
    "resnet50,FRONTEND,,,3,9,50000,120,0,0,0,0,0,,,,,OPEN,,123,\n"
    "resnet50,node-0-g0-s0-p0,0,2,1,4,,60,0,0,,0,,0,0,0,0,UP,256,,\n"
    "resnet50,node-0-g0-s4-p0,2,3,0,4,,60,0,0,,0,,0,0,0,0,DRAIN,0,,\n"
    "resnet50,BACKEND,0,3,1,8,5000,120,0,0,0,0,,0,0,0,0,UP,256,120,\n"
    "metrics,FRONTEND,,,0,1,50000,4,0,0,0,0,0,,,,,OPEN,,4,\n"
    "\n";

TEST(HaproxyRuntimeTest, ReadsEveryServersLoadByColumnName) {
  Result<std::map<std::pair<std::string, std::string>, ServerLoad>> servers =
      ParseShowStat(kShowStat);
  ASSERT_TRUE(servers.ok()) << servers.status().message();
  ASSERT_EQ(servers->size(), 2u);
  const ServerLoad& up = servers->at({"resnet50", "node-0-g0-s0-p0"});
  EXPECT_EQ(up.queued, 0);
  EXPECT_EQ(up.sessions, 1);
  EXPECT_EQ(up.status, "UP");
  const ServerLoad& draining = servers->at({"resnet50", "node-0-g0-s4-p0"});
  EXPECT_EQ(draining.queued, 2);
  EXPECT_EQ(draining.sessions, 0);
  EXPECT_EQ(draining.status, "DRAIN");
}

// A frontend counts a request when it arrives (123 received while the
// backend has answered or holds 120): its FRONTEND row's req_tot.
TEST(HaproxyRuntimeTest, ReadsEachFrontendsRequestsReceived) {
  Result<std::map<std::string, long>> received = ParseFrontendRequests(kShowStat);
  ASSERT_TRUE(received.ok()) << received.status().message();
  EXPECT_EQ(*received, (std::map<std::string, long>{{"metrics", 4}, {"resnet50", 123}}));
  Result<std::map<std::string, long>> no_column =
      ParseFrontendRequests("# pxname,svname,qcur,scur,status\nb,FRONTEND,,0,OPEN\n");
  ASSERT_FALSE(no_column.ok());
  EXPECT_NE(no_column.status().message().find("req_tot"), std::string::npos);
  Result<std::map<std::string, long>> not_a_count =
      ParseFrontendRequests("# pxname,svname,req_tot\nb,FRONTEND,x\n");
  ASSERT_FALSE(not_a_count.ok());
  EXPECT_NE(not_a_count.status().message().find("line 2: req_tot 'x'"), std::string::npos)
      << not_a_count.status().message();
}

TEST(HaproxyRuntimeTest, RefusesAnswersItCannotRead) {
  EXPECT_FALSE(ParseShowStat("").ok());
  EXPECT_FALSE(ParseShowStat("Unknown command.\n").ok());
  EXPECT_FALSE(ParseShowStat("# pxname,svname,status\nb,s,UP\n").ok());  // no qcur, scur
  Result<std::map<std::pair<std::string, std::string>, ServerLoad>> short_line =
      ParseShowStat("# pxname,svname,qcur,scur,status\nb,s,0\n");
  ASSERT_FALSE(short_line.ok());
  EXPECT_NE(short_line.status().message().find("line 2"), std::string::npos);
  Result<std::map<std::pair<std::string, std::string>, ServerLoad>> not_a_count =
      ParseShowStat("# pxname,svname,qcur,scur,status\nb,s,-1,x,UP\n");
  ASSERT_FALSE(not_a_count.ok());
  EXPECT_NE(not_a_count.status().message().find("not a count"), std::string::npos);
}

TEST(HaproxyRuntimeTest, MutatedAnswersNeverCrash) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const std::string mutant = testing::Mutate(kShowStat, rng, testing::JsonMutations());
    (void)ParseShowStat(mutant);
    (void)ParseFrontendRequests(mutant);
  }
}

TEST(HaproxyRuntimeTest, NamesASocketNobodyListensOn) {
  const HaproxyRuntime runtime("/nonexistent/haproxy.sock", 1);
  const Status s = runtime.SetState("b", "s", ServerState::kDrain);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("/nonexistent/haproxy.sock"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tessera::serving
