#include "agent/supervisor.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>

#include "test_paths.h"

namespace tessera::agent {
namespace {

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::weakly_canonical(testing::FreshTestDir()).string();
    std::filesystem::create_directories(dir_ + "/pipe");
    std::filesystem::create_directories(dir_ + "/log");
    supervisor_ = std::make_unique<Supervisor>(dir_, SystemClock());
  }
  void TearDown() override {
    for (const auto& [name, unit] : supervisor_->Scan()) (void)supervisor_->Kill(name);
    std::filesystem::remove_all(dir_);
  }
  UnitSpec Mps(bool background) const {
    UnitSpec u;
    u.name = "mps:gpu0-start4";
    u.place = "gpu0-start4";
    u.argv = {TESSERA_STANDIN, "mps"};
    if (background) u.argv.push_back("-d");
    u.env = {{"CUDA_VISIBLE_DEVICES", "MIG-test"},
             {"CUDA_MPS_PIPE_DIRECTORY", dir_ + "/pipe"},
             {"CUDA_MPS_LOG_DIRECTORY", dir_ + "/log"}};
    return u;
  }
  UnitSpec Serve(int port) const {
    UnitSpec u;
    u.name = "serve:resnet50-gpu0-start4-p0";
    u.place = "gpu0-start4";
    u.argv = {TESSERA_STANDIN, "serve", "--http-port=" + std::to_string(port)};
    u.env = {{"CUDA_VISIBLE_DEVICES", "MIG-test"},
             {"CUDA_MPS_PIPE_DIRECTORY", dir_ + "/pipe"},
             {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50"}};
    return u;
  }

  std::string dir_;
  std::unique_ptr<Supervisor> supervisor_;
};

TEST_F(SupervisorTest, AStartedUnitIsFoundWithItsPlaceAndFingerprintThenStopped) {
  Supervisor& s = *supervisor_;
  const UnitSpec mps = Mps(false);
  ASSERT_TRUE(s.Start(mps).ok());
  const auto units = s.Scan();
  ASSERT_EQ(units.count(mps.name), 1u);
  EXPECT_EQ(units.at(mps.name).place, "gpu0-start4");
  EXPECT_EQ(units.at(mps.name).spec, mps.Fingerprint());
  EXPECT_EQ(units.at(mps.name).pipe_directory, dir_ + "/pipe");
  EXPECT_TRUE(s.Terminate(mps.name, 5));
  EXPECT_TRUE(s.Scan().empty());
}

TEST_F(SupervisorTest, ADaemonThatForksAwayIsStillFoundAndStoppedByQuit) {
  Supervisor& s = *supervisor_;
  ASSERT_TRUE(s.Start(Mps(true)).ok());
  // The launcher exits at once; the daemon it forked carries the unit.
  for (int i = 0; i < 200 && !std::filesystem::exists(dir_ + "/pipe/standin-mps.pid"); ++i) {
    ::usleep(10000);
  }
  ASSERT_EQ(s.Scan().count("mps:gpu0-start4"), 1u);
  ASSERT_TRUE(s.RunToEnd({TESSERA_STANDIN, "mps-control"},
                         {{"CUDA_MPS_PIPE_DIRECTORY", dir_ + "/pipe"}}, "quit\n", 10)
                  .ok());
  EXPECT_TRUE(s.Terminate("mps:gpu0-start4", 5));
}

TEST_F(SupervisorTest, AServingProcessIsReadyOnceItAnswersHealthReady) {
  Supervisor& s = *supervisor_;
  ASSERT_TRUE(s.Start(Mps(false)).ok());
  for (int i = 0; i < 200 && !std::filesystem::exists(dir_ + "/pipe/standin-mps.pid"); ++i) {
    ::usleep(10000);
  }
  const UnitSpec serve = Serve(23981);
  ASSERT_TRUE(s.Start(serve).ok());
  const Status ready = s.WaitReady(serve.name, 23981, 20);
  EXPECT_TRUE(ready.ok()) << ready.message();
  EXPECT_TRUE(s.Kill(serve.name).ok());
  EXPECT_EQ(s.Scan().count(serve.name), 0u);
}

TEST_F(SupervisorTest, AProcessThatDiesBeforeItIsReadyIsReportedWithItsLog) {
  Supervisor& s = *supervisor_;
  // No MPS daemon: the stand-in refuses to serve and says why.
  const UnitSpec serve = Serve(23982);
  ASSERT_TRUE(s.Start(serve).ok());
  const Status ready = s.WaitReady(serve.name, 23982, 20);
  ASSERT_FALSE(ready.ok());
  EXPECT_NE(ready.message().find("exited before it was ready"), std::string::npos)
      << ready.message();
  EXPECT_NE(ready.message().find("no MPS daemon"), std::string::npos) << ready.message();
}

TEST_F(SupervisorTest, ACommandThatCannotRunIsAnErrorNamingIt) {
  Supervisor& s = *supervisor_;
  UnitSpec u = Mps(false);
  u.argv = {"/nonexistent/tritonserver"};
  const Status started = s.Start(u);
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.message().find("/nonexistent/tritonserver"), std::string::npos);
  EXPECT_TRUE(s.Scan().empty());
}

TEST_F(SupervisorTest, TheFingerprintChangesWithTheCommandAndTheEnvironment) {
  UnitSpec a = Mps(false), b = Mps(false), c = Mps(false);
  b.argv.push_back("-x");
  c.env[0].second = "MIG-other";
  EXPECT_EQ(a.Fingerprint(), Mps(false).Fingerprint());
  EXPECT_NE(a.Fingerprint(), b.Fingerprint());
  EXPECT_NE(a.Fingerprint(), c.Fingerprint());
}

}  // namespace
}  // namespace tessera::agent
