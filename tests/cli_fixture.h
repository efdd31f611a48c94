// CliTest: a fixture that runs the built `tessera` binary as a user would,
// in a fresh directory per test, capturing exit code, stdout and stderr.
#ifndef TESSERA_TESTS_CLI_FIXTURE_H_
#define TESSERA_TESTS_CLI_FIXTURE_H_

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "test_paths.h"

namespace tessera::testing {

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir(); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path Write(const std::string& name, const std::string& text) {
    std::filesystem::path p = dir_ / name;
    WriteTextFile(p, text);
    return p;
  }

  Outcome Tessera(const std::string& args) {
    const std::filesystem::path out = dir_ / "stdout", err = dir_ / "stderr";
    const std::string cmd =
        std::string(TESSERA_BINARY) + " " + args + " >" + out.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadAll(out), ReadAll(err)};
  }

  std::filesystem::path dir_;
};

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_CLI_FIXTURE_H_
