// The history checker's own tests: it passes linearizable histories
// (concurrent operations ordered either way, a write without an answer
// seen or not) and catches a stale read, a lost write, a read of nothing
// written, a read from the future and a new-old inversion.
#include "history_check.h"

#include <gtest/gtest.h>

namespace tessera::testing {
namespace {

HistoryOp W(double value, double from, double to, const std::string& key = "a") {
  return {HistoryOp::Kind::kWrite, key, value, from, to, "w"};
}
HistoryOp R(double value, double from, double to, const std::string& key = "a") {
  return {HistoryOp::Kind::kRead, key, value, from, to, "r"};
}

std::vector<std::string> Check(const std::vector<HistoryOp>& ops, double initial = 0) {
  History h;
  h.Initial("a", initial);
  h.Initial("b", initial);
  for (const HistoryOp& op : ops) h.Add(op);
  return h.Violations();
}

TEST(HistoryCheckTest, SequentialAndConcurrentHistoriesPass) {
  EXPECT_TRUE(Check({R(0, 0, 1), W(1, 2, 3), R(1, 4, 5), W(2, 6, 7), R(2, 8, 9)}).empty());
  // A read concurrent with a write sees either value.
  EXPECT_TRUE(Check({W(1, 0, 1), W(2, 2, 5), R(1, 3, 4), R(2, 3, 6)}).empty());
  // A write without an answer may have happened, or not.
  EXPECT_TRUE(Check({W(1, 0, 1), W(2, 2, HistoryOp::kNever), R(2, 5, 6)}).empty());
  EXPECT_TRUE(Check({W(1, 0, 1), W(2, 2, HistoryOp::kNever), R(1, 5, 6)}).empty());
  // Keys are apart.
  EXPECT_TRUE(Check({W(1, 0, 1, "a"), W(2, 0, 1, "b"), R(1, 2, 3, "a"), R(2, 2, 3, "b")}).empty());
}

TEST(HistoryCheckTest, CatchesAStaleRead) {
  const std::vector<std::string> v = Check({W(1, 0, 1), W(2, 2, 3), R(1, 4, 5)});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("stale"), std::string::npos) << v[0];
}

TEST(HistoryCheckTest, CatchesALostWrite) {
  // Acknowledged, then every later read shows the value before it.
  const std::vector<std::string> v = Check({W(7, 0, 1), R(0, 2, 3), R(0, 4, 5)});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_NE(v[0].find("the initial value was overwritten by write a 7"), std::string::npos) << v[0];
}

TEST(HistoryCheckTest, CatchesAReadOfNothingWrittenAndFromTheFuture) {
  std::vector<std::string> v = Check({W(1, 0, 1), R(9, 2, 3)});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("no write of this value"), std::string::npos) << v[0];
  v = Check({R(1, 0, 1), W(1, 2, 3)});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("invoked after the read answered"), std::string::npos) << v[0];
}

TEST(HistoryCheckTest, CatchesANewOldInversion) {
  // Both reads overlap write 2, but the second began after the first saw 2.
  const std::vector<std::string> v = Check({W(1, 0, 1), W(2, 2, 10), R(2, 3, 4), R(1, 5, 6)});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("new-old inversion"), std::string::npos) << v[0];
}

}  // namespace
}  // namespace tessera::testing
