// What the node agent's tests share: a fake machine (the project's fake NVML
// library and its state file), the stand-in MPS daemon and Triton
// (tessera-standin), running the real `tessera` binary with that machine's
// environment (in the foreground, or in the background to be killed), and
// reading back what the machine and the agent's processes are.
//
// Every process an agent starts carries TESSERA_AGENT_STATE_DIR; the fixture
// kills whatever still carries its state directory when a test ends, so no
// test leaves a process behind even when it fails half-way.
#ifndef TESSERA_TESTS_AGENT_FIXTURE_H_
#define TESSERA_TESTS_AGENT_FIXTURE_H_

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/supervisor.h"
#include "cli_fixture.h"
#include "tessera/util/clock.h"

extern char** environ;

namespace tessera::testing {

// The commands the agent runs in place of the real MPS daemon and Triton.
inline std::string StandinFlags() {
  const std::string s = TESSERA_STANDIN;
  return "--mps-command '" + s + " mps -d' --mps-control-command '" + s + " mps-control' " +
         "--serve-command '" + s +
         " serve --http-port={http_port} --model={model} --batch={batch}' "
         "--ready-timeout 20s --drain-timeout 5s --quiet";
}

inline std::string Quote(const std::string& s) { return "'" + s + "'"; }

class AgentTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    fake_state_ = (dir_ / "nvml-state.json").string();
    state_dir_ = std::filesystem::weakly_canonical(dir_ / "agent-state").string();
  }
  void TearDown() override {
    KillUnits(state_dir_);
    CliTest::TearDown();
  }

  // Kills every process an agent started with `state_dir` (a test's last
  // word: nothing outlives it).
  static void KillUnits(const std::string& state_dir) {
    agent::Supervisor supervisor(state_dir, SystemClock());
    for (const auto& [name, unit] : supervisor.Scan()) (void)supervisor.Kill(name);
  }

  // The environment prefix of a fake machine with `devices`
  // (TESSERA_FAKE_NVML_DEVICES, used when the state file is new).
  std::string MachineEnv(const std::string& devices = "a100-80gb*8") const {
    return "TESSERA_FAKE_NVML_STATE=" + Quote(fake_state_) +
           " TESSERA_FAKE_NVML_DEVICES=" + Quote(devices) + " ";
  }

  std::string AgentArgs(const std::string& plan, const std::string& node = "node-0") const {
    return "agent --node " + node + " --plan " + Quote(plan) + " --state-dir " + Quote(state_dir_) +
           " --nvml " + Quote(TESSERA_FAKE_NVML) + " " + StandinFlags();
  }

  // Runs `tessera args` with the machine's environment.
  Outcome OnMachine(const std::string& args, const std::string& devices = "a100-80gb*8") {
    return TesseraEnv(MachineEnv(devices), args);
  }

  Outcome TesseraEnv(const std::string& env, const std::string& args) {
    const std::filesystem::path out = dir_ / "stdout", err = dir_ / "stderr";
    const std::string cmd =
        env + std::string(TESSERA_BINARY) + " " + args + " >" + out.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadAll(out), ReadAll(err)};
  }

  // The fake machine as `tessera agent inventory --format json` reports it.
  nlohmann::json Inventory() {
    const Outcome o = OnMachine("agent inventory --format json --nvml " + Quote(TESSERA_FAKE_NVML));
    EXPECT_EQ(o.exit_code, 0) << o.err;
    return nlohmann::json::parse(o.out, nullptr, false);
  }

  // (GPU, profile ID, start) of every GPU instance of the machine; fails the
  // test when one lacks its single compute instance.
  std::set<std::tuple<int, int, int>> MachineGeometry() {
    std::set<std::tuple<int, int, int>> out;
    const nlohmann::json inv = Inventory();
    for (const auto& gpu : inv["gpus"]) {
      for (const auto& gi : gpu["gpu_instances"]) {
        EXPECT_EQ(gi["compute_instances"].size(), 1u)
            << "GPU " << gpu["index"] << " GI " << gi["id"] << " has "
            << gi["compute_instances"].size() << " compute instances";
        out.insert({gpu["index"].get<int>(), gi["profile_id"].get<int>(), gi["start"].get<int>()});
      }
    }
    return out;
  }

  // What a NodePlan file asks for: its geometry and its processes' units.
  static nlohmann::json ReadJson(const std::filesystem::path& path) {
    return nlohmann::json::parse(ReadAll(path), nullptr, false);
  }
  static std::set<std::tuple<int, int, int>> PlanGeometry(const nlohmann::json& plan) {
    std::set<std::tuple<int, int, int>> out;
    for (const auto& gpu : plan["gpus"]) {
      for (const auto& i : gpu["instances"]) {
        out.insert({gpu["index"].get<int>(), i["profile_id"].get<int>(), i["start"].get<int>()});
      }
    }
    return out;
  }
  static std::set<std::string> PlanUnits(const nlohmann::json& plan) {
    std::set<std::string> out;
    for (const auto& gpu : plan["gpus"]) {
      for (const auto& i : gpu["instances"]) {
        out.insert("mps:gpu" + std::to_string(gpu["index"].get<int>()) + "-start" +
                   std::to_string(i["start"].get<int>()));
        for (const auto& p : i["processes"]) out.insert("serve:" + p["name"].get<std::string>());
      }
    }
    return out;
  }

  // The units running for this test's state directory.
  std::set<std::string> RunningUnits() const {
    std::set<std::string> out;
    agent::Supervisor supervisor(state_dir_, SystemClock());
    for (const auto& [name, unit] : supervisor.Scan()) out.insert(name);
    return out;
  }

  // Every "begin" of the journal has its "end".
  void ExpectJournalClosed() const {
    std::map<long long, std::string> open;
    std::ifstream in(state_dir_ + "/journal.jsonl");
    int lines = 0;
    for (std::string line; std::getline(in, line); ++lines) {
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      ASSERT_TRUE(j.is_object()) << "journal line " << lines + 1 << ": " << line;
      if (j["event"] == "begin") open[j["seq"].get<long long>()] = line;
      if (j["event"] == "end") open.erase(j["of"].get<long long>());
    }
    EXPECT_GT(lines, 0);
    for (const auto& [seq, line] : open) ADD_FAILURE() << "journal step left open: " << line;
  }

  std::string fake_state_;
  std::string state_dir_;
};

// A `tessera` run in the background, its output appended to `log`; killed
// (SIGKILL) when dropped.
class Background {
 public:
  Background(const std::vector<std::string>& env_add, const std::string& args,
             std::string log = "/dev/null")
      : log_(std::move(log)) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
    for (const std::string& e : env_add) env.push_back(e);
    std::vector<std::string> argv = {
        "/bin/sh", "-c",
        "exec " + std::string(TESSERA_BINARY) + " " + args + " >>" + Quote(log_) + " 2>&1"};
    std::vector<char*> a, e;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    for (auto& s : env) e.push_back(s.data());
    e.push_back(nullptr);
    if (posix_spawn(&pid_, "/bin/sh", nullptr, nullptr, a.data(), e.data()) != 0) pid_ = -1;
  }
  ~Background() { Kill(); }

  bool Running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  // `signal` to the process (SIGSTOP, SIGCONT, ...), which stays recorded.
  void Signal(int signal) {
    if (pid_ > 0) ::kill(pid_, signal);
  }
  std::string Log() const { return ReadAll(log_); }

 private:
  pid_t pid_ = -1;
  std::string log_;
};

// Lines in a file (0 when it does not exist).
inline int CountLines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_AGENT_FIXTURE_H_
