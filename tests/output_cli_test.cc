// Where -o and --svg write: a regular file is replaced atomically, but a
// FIFO, a character device or a symbolic link is never replaced by a regular
// file (issue 17, class 3: as root, `-o /dev/null` used to rename a file over
// /dev/null). Every case runs in the test's own directory; a pseudo-terminal
// stands in for /dev/null as the character device.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_fixture.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

// A small output: one generated service (a few hundred bytes, well within a
// pipe's or a terminal's buffer, so the writer never waits for a reader).
constexpr const char* kGen = "gen --services 1 --rates normal:10,1";

// Everything readable now from the non-blocking descriptor `fd`.
std::string Drain(int fd) {
  std::string out;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return out;  // EOF, EAGAIN or EIO
    }
  }
}

class OutputTest : public CliTest {
 protected:
  // Opens a FIFO at `path` for reading without blocking: a writer's open()
  // then succeeds at once, and what it writes waits in the pipe.
  int MakeFifoReader(const fs::path& path) {
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
    EXPECT_GE(fd, 0) << path;
    return fd;
  }
};

TEST_F(OutputTest, RegularFileIsReplacedWholeAndKeepsItsMode) {
  const fs::path out = Write("out.yaml", "old content\n");
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write);
  const Outcome r = Tessera(std::string(kGen) + " -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(ReadAll(out).starts_with("# tessera gen")) << ReadAll(out);
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  // No temporary file is left beside it.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir_))
    entries += !e.path().filename().string().starts_with("std");
  EXPECT_EQ(entries, 1);
}

TEST_F(OutputTest, NewFileGetsTheUsualMode) {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  const fs::path out = dir_ / "new.yaml";
  const Outcome r = Tessera(std::string(kGen) + " -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

TEST_F(OutputTest, FifoIsWrittenThroughNotReplaced) {
  const fs::path fifo = dir_ / "plan.fifo";
  const int fd = MakeFifoReader(fifo);
  ASSERT_GE(fd, 0);
  const Outcome r = Tessera(std::string(kGen) + " -o " + fifo.string());
  const std::string got = Drain(fd);
  ::close(fd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(got.starts_with("# tessera gen")) << got;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo))) << "the FIFO was replaced";
}

TEST_F(OutputTest, SymlinkStaysALinkAndItsTargetGetsTheContent) {
  const fs::path target = Write("real.yaml", "old\n");
  fs::create_directories(dir_ / "sub");
  const fs::path link = dir_ / "sub" / "link.yaml";
  fs::create_symlink("../real.yaml", link);  // relative to the link's directory
  const Outcome r = Tessera(std::string(kGen) + " -o " + link.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(link)) << "the link was replaced";
  EXPECT_EQ(fs::read_symlink(link), "../real.yaml");
  EXPECT_TRUE(ReadAll(target).starts_with("# tessera gen")) << ReadAll(target);
}

TEST_F(OutputTest, SymlinkChainToAFifoWritesThroughTheFifo) {
  const fs::path fifo = dir_ / "plan.fifo";
  const int fd = MakeFifoReader(fifo);
  ASSERT_GE(fd, 0);
  fs::create_symlink(fifo, dir_ / "first");
  fs::create_symlink("first", dir_ / "second");
  const Outcome r = Tessera(std::string(kGen) + " -o " + (dir_ / "second").string());
  const std::string got = Drain(fd);
  ::close(fd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(got.starts_with("# tessera gen")) << got;
  EXPECT_TRUE(fs::is_symlink(dir_ / "second"));
  EXPECT_TRUE(fs::is_symlink(dir_ / "first"));
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
}

TEST_F(OutputTest, DanglingSymlinkCreatesItsTarget) {
  const fs::path link = dir_ / "link.yaml";
  fs::create_symlink("made.yaml", link);
  const Outcome r = Tessera(std::string(kGen) + " -o " + link.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(ReadAll(dir_ / "made.yaml").starts_with("# tessera gen"));
}

// A character device, as /dev/null is: a pseudo-terminal's slave side.
TEST_F(OutputTest, CharacterDeviceIsWrittenThroughNotReplaced) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const std::string slave = ::ptsname(master);
  // Held open, so that the terminal is not hung up when tessera closes it.
  const int held = ::open(slave.c_str(), O_RDWR | O_NOCTTY);
  ASSERT_GE(held, 0);
  struct stat before {};
  ASSERT_EQ(::stat(slave.c_str(), &before), 0);
  const Outcome r = Tessera(std::string(kGen) + " -o " + slave);
  const std::string got = Drain(master);
  struct stat after {};
  ASSERT_EQ(::stat(slave.c_str(), &after), 0);
  ::close(held);
  ::close(master);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(got.find("# tessera gen"), std::string::npos) << got;
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_rdev, before.st_rdev);
}

TEST_F(OutputTest, DirectoryIsBadInputAndStaysADirectory) {
  fs::create_directories(dir_ / "out");
  const Outcome r = Tessera(std::string(kGen) + " -o " + (dir_ / "out").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_directory(dir_ / "out"));
}

// --svg goes through the same writer as -o.
TEST_F(OutputTest, PlanSvgThroughASymlinkKeepsTheLink) {
  const fs::path target = Write("drawing.svg", "");
  fs::create_symlink(target, dir_ / "plan.svg");
  const fs::path fifo = dir_ / "plan.fifo";
  const int fd = MakeFifoReader(fifo);
  ASSERT_GE(fd, 0);
  const Outcome r =
      Tessera("plan --planner parva --scenario " + SourcePath("examples/scenarios/s1.yaml") +
              " --format json -o " + fifo.string() + " --svg " + (dir_ / "plan.svg").string());
  const std::string json = Drain(fd);
  ::close(fd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(json.starts_with("{")) << json;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  EXPECT_TRUE(fs::is_symlink(dir_ / "plan.svg"));
  EXPECT_NE(ReadAll(target).find("<svg"), std::string::npos);
}

}  // namespace
}  // namespace tessera::testing
