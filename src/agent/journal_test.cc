#include "agent/journal.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "test_paths.h"

namespace tessera::agent {
namespace {

std::vector<nlohmann::json> Lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(AgentJournal, BeginAndEndAreLinesWithSeqAndTheSubject) {
  const auto dir = testing::FreshTestDir();
  Result<Journal> j = Journal::Open(dir.string(), nullptr);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  Result<long long> seq = j->Begin({"create-gpu-instance", 2, "3g.40gb", 4, ""});
  ASSERT_TRUE(seq.ok());
  ASSERT_TRUE(j->End(*seq, true, "GI 1").ok());
  ASSERT_TRUE(j->Record("note", {{"why", "test"}}).ok());
  const auto lines = Lines(j->path());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["event"], "begin");
  EXPECT_EQ(lines[0]["op"], "create-gpu-instance");
  EXPECT_EQ(lines[0]["gpu"], 2);
  EXPECT_EQ(lines[0]["profile"], "3g.40gb");
  EXPECT_EQ(lines[0]["start"], 4);
  EXPECT_EQ(lines[1]["event"], "end");
  EXPECT_EQ(lines[1]["of"], *seq);
  EXPECT_EQ(lines[1]["ok"], true);
  EXPECT_EQ(lines[1]["detail"], "GI 1");
  EXPECT_EQ(lines[2]["why"], "test");
  EXPECT_LT(lines[0]["seq"].get<long long>(), lines[2]["seq"].get<long long>());
}

TEST(AgentJournal, ReopeningReturnsTheStepsLeftOpenAndContinuesTheSequence) {
  const auto dir = testing::FreshTestDir();
  long long open_seq = 0;
  {
    Result<Journal> j = Journal::Open(dir.string(), nullptr);
    ASSERT_TRUE(j.ok());
    const long long done = *j->Begin({"start-mps", 0, "1g.10gb", 6, "mps:gpu0-start6"});
    ASSERT_TRUE(j->End(done, true, "").ok());
    open_seq = *j->Begin({"destroy-gpu-instance", 1, "7g.80gb", 0, "GI 1"});
  }
  std::vector<OpenStep> open;
  Result<Journal> j = Journal::Open(dir.string(), &open);
  ASSERT_TRUE(j.ok());
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].seq, open_seq);
  EXPECT_EQ(open[0].subject.op, "destroy-gpu-instance");
  EXPECT_EQ(open[0].subject.gpu, 1);
  EXPECT_EQ(open[0].subject.profile, "7g.80gb");
  ASSERT_TRUE(j->End(open_seq, false, "interrupted", true).ok());
  const long long next = *j->Begin({"x", 0, "", 0, ""});
  EXPECT_GT(next, open_seq + 1);
  const auto lines = Lines(j->path());
  EXPECT_EQ(lines[lines.size() - 2]["interrupted"], true);
}

TEST(AgentJournal, ATornLastLineIsCutOffAndTheRestKept) {
  const auto dir = testing::FreshTestDir();
  {
    Result<Journal> j = Journal::Open(dir.string(), nullptr);
    ASSERT_TRUE(j.ok());
    (void)j->Begin({"create-gpu-instance", 0, "3g.40gb", 4, ""});
  }
  std::ofstream(dir / "journal.jsonl", std::ios::app) << "{\"seq\":99,\"event\":\"en";
  std::vector<OpenStep> open;
  Result<Journal> j = Journal::Open(dir.string(), &open);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(open.size(), 1u);
  ASSERT_TRUE(j->End(open[0].seq, false, "interrupted", true).ok());
  EXPECT_EQ(Lines(j->path()).size(), 2u);  // throws on a torn line
}

TEST(AgentJournal, LinesOfAnotherShapeArePassedOver) {
  const auto dir = testing::FreshTestDir();
  std::ofstream(dir / "journal.jsonl")
      << "not json\n[1,2]\n{\"seq\":\"x\",\"event\":\"begin\"}\n{\"seq\":5,\"event\":\"begin\","
         "\"gpu\":\"zero\",\"op\":7}\n";
  std::vector<OpenStep> open;
  Result<Journal> j = Journal::Open(dir.string(), &open);
  ASSERT_TRUE(j.ok());
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].seq, 5);
  EXPECT_EQ(open[0].subject.gpu, 0);
  EXPECT_EQ(open[0].subject.op, "");
  EXPECT_EQ(*j->Begin({"y", 0, "", 0, ""}), 6);
}

TEST(AgentJournal, AJournalThatCannotBeWrittenIsAnIoErrorNamingIt) {
  const auto dir = testing::FreshTestDir();
  std::filesystem::create_directories(dir / "journal.jsonl");
  Result<Journal> j = Journal::Open(dir.string(), nullptr);
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("journal.jsonl"), std::string::npos) << j.status().message();
}

}  // namespace
}  // namespace tessera::agent
