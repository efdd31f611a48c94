// Paths the tests read: the repository (goldens, bundled examples) and the
// real data in ../shared/data, which is never copied into the repository.
#ifndef TESSERA_TESTS_TEST_PATHS_H_
#define TESSERA_TESTS_TEST_PATHS_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tessera::testing {

inline std::string SourcePath(const std::string& relative) {
  return std::string(TESSERA_SOURCE_DIR) + "/" + relative;
}

inline std::string SharedDataPath(const std::string& relative) {
  return std::string(TESSERA_SHARED_DATA_DIR) + "/" + relative;
}

inline bool SharedDataPresent(const std::string& relative) {
  return std::filesystem::exists(SharedDataPath(relative));
}

// A fresh, empty directory for the current test, named after it.
inline std::filesystem::path FreshTestDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    (std::string("tessera_") + info->test_suite_name() + "_" +
                                     info->name() + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Writes `text` to `path` byte for byte.
inline void WriteTextFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace tessera::testing

// Skips the current test when a data set of ../shared/data is absent.
#define TESSERA_SKIP_WITHOUT_SHARED_DATA(relative)                                     \
  if (!::tessera::testing::SharedDataPresent(relative))                                \
  GTEST_SKIP() << "shared data " << ::tessera::testing::SharedDataPath(relative)       \
               << " is absent; this conformance test needs ../shared/data beside the " \
                  "repository"

#endif  // TESSERA_TESTS_TEST_PATHS_H_
