// Tests of FormatTransitionJson, ParseTransitionJson, FormatTransitionText
// and FormatTransitionSummary (transition_format.h).
#include "tessera/transition/transition_format.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "fuzz_mutator.h"

namespace tessera {
namespace {

// The example, plus a reconfigure in a second phase.
Transition Example() {
  Transition t;
  t.gpu = "a100-80gb";
  t.spare_gpus = 2;
  t.gpu_map = {{0, 0}, {2, 1}, {10, 3}};
  TransitionStep create{
      "s1", StepAction::kCreate, 3, "3g.40gb", 4, "bert", "bert-large", 8, 2, 120.5, ""};
  TransitionStep destroy{"s2", StepAction::kDestroy, 0, "1g.10gb", 2, "resnet50", "", 1, 1, 0, ""};
  TransitionStep reconfigure{
      "s3",      StepAction::kReconfigure, 1, "2g.20gb", 0, "bert", "bert-large", 16, 1, 210.123456,
      "resnet50"};
  t.phases = {{{create, destroy}}, {{reconfigure}}};
  t.summary = {3, 2, 3, 16, 1.0212345};
  return t;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in the text";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The error of parsing `text` as "t.json"; fails the test if it parses.
std::string ErrorOf(const std::string& text) {
  Result<Transition> t = ParseTransitionJson(text, "t.json");
  EXPECT_FALSE(t.ok()) << text;
  if (t.ok()) return "";
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  return t.status().message();
}

TEST(TransitionJson, KeysInTheFixedOrderNumbersRounded) {
  const std::string json = FormatTransitionJson(Example());
  EXPECT_TRUE(
      json.starts_with("{\n  \"format\": \"tessera-transition\",\n  \"version\": 1,\n"
                       "  \"gpu\": \"a100-80gb\",\n  \"spare_gpus\": 2,\n"
                       "  \"gpu_map\": {\n    \"0\": 0,\n    \"2\": 1,\n    \"10\": 3\n"
                       "  },\n  \"phases\": [\n"))
      << json;
  EXPECT_TRUE(
      json.ends_with("  \"summary\": {\n    \"steps\": 3,\n    \"phases\": 2,\n"
                     "    \"gpus_touched\": 3,\n    \"peak_gpus\": 16,\n"
                     "    \"min_capacity_ratio\": 1.0212\n  }\n}\n"))
      << json;
  // A create's keys in order; a destroy has no model; a reconfigure ends
  // with from_service.
  EXPECT_NE(json.find("\"id\": \"s1\",\n          \"action\": \"create\",\n          \"gpu\": 3,\n"
                      "          \"profile\": \"3g.40gb\",\n          \"start\": 4,\n"
                      "          \"service\": \"bert\",\n          \"model\": \"bert-large\",\n"
                      "          \"batch\": 8,\n          \"procs\": 2,\n"
                      "          \"throughput_rps\": 120.5\n"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"service\": \"resnet50\"\n        }"), std::string::npos) << json;
  EXPECT_NE(json.find("\"throughput_rps\": 210.1235,\n          \"from_service\": \"resnet50\"\n"),
            std::string::npos)
      << json;
}

TEST(TransitionJson, RoundTrips) {
  const std::string json = FormatTransitionJson(Example());
  Result<Transition> t = ParseTransitionJson(json, "t.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->gpu, "a100-80gb");
  EXPECT_EQ(t->spare_gpus, 2);
  EXPECT_EQ(t->gpu_map, (std::map<int, int>{{0, 0}, {2, 1}, {10, 3}}));
  ASSERT_EQ(t->phases.size(), 2u);
  ASSERT_EQ(t->phases[0].steps.size(), 2u);
  const TransitionStep& s1 = t->phases[0].steps[0];
  EXPECT_EQ(s1.id, "s1");
  EXPECT_EQ(s1.action, StepAction::kCreate);
  EXPECT_EQ(s1.gpu, 3);
  EXPECT_EQ(s1.profile, "3g.40gb");
  EXPECT_EQ(s1.start, 4);
  EXPECT_EQ(s1.service, "bert");
  EXPECT_EQ(s1.model, "bert-large");
  EXPECT_EQ(s1.batch, 8);
  EXPECT_EQ(s1.procs, 2);
  EXPECT_DOUBLE_EQ(s1.throughput_rps, 120.5);
  EXPECT_EQ(t->phases[0].steps[1].action, StepAction::kDestroy);
  const TransitionStep& s3 = t->phases[1].steps[0];
  EXPECT_EQ(s3.action, StepAction::kReconfigure);
  EXPECT_EQ(s3.from_service, "resnet50");
  EXPECT_DOUBLE_EQ(s3.throughput_rps, 210.1235);
  EXPECT_EQ(t->summary.steps, 3);
  EXPECT_EQ(t->summary.phases, 2);
  EXPECT_EQ(t->summary.gpus_touched, 3);
  EXPECT_EQ(t->summary.peak_gpus, 16);
  EXPECT_DOUBLE_EQ(t->summary.min_capacity_ratio, 1.0212);
  EXPECT_EQ(FormatTransitionJson(*t), json);
}

TEST(TransitionJson, AnEmptyTransitionRoundTrips) {
  Transition t;
  t.gpu = "a30-24gb";
  const std::string json = FormatTransitionJson(t);
  EXPECT_NE(json.find("\"gpu_map\": {},\n  \"phases\": [],\n"), std::string::npos) << json;
  Result<Transition> back = ParseTransitionJson(json, "t.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->phases.empty());
  EXPECT_EQ(FormatTransitionJson(*back), json);
}

TEST(TransitionJson, RejectsEveryErrorClassNamingSourceAndPath) {
  const std::string json = FormatTransitionJson(Example());
  struct Case {
    std::string text;
    std::string expected;  // the whole message starts with "t.json: " + this
  };
  const std::vector<Case> cases = {
      {Replace(json, "\"spare_gpus\"", "\"spare\""), "spare: unknown key (expected: format,"},
      {Replace(json, "\"gpu\": 3,", "\"gpu\": 3, \"gpu\": 4,"),
       "phases[0].steps[0].gpu: duplicate key"},
      {Replace(json, "\"batch\": 8", "\"batch\": 4.5"),
       "phases[0].steps[0].batch: expected an integer, got 4.5"},
      {Replace(json, "\"batch\": 8", "\"batch\": \"8\""),
       "phases[0].steps[0].batch: expected an integer, got \"8\""},
      {Replace(json, "\"batch\": 8", "\"batch\": 5000"),
       "phases[0].steps[0].batch: must be an integer in [1, 4096], got 5000"},
      {Replace(json, "\"gpu\": 3,", "\"gpu\": 2000000,"),
       "phases[0].steps[0].gpu: must be an integer in [0, 1e+06], got 2000000"},
      {Replace(json, "\"spare_gpus\": 2", "\"spare_gpus\": -1"),
       "spare_gpus: must be an integer in [0, 100000], got -1"},
      {Replace(json, "\"throughput_rps\": 120.5", "\"throughput_rps\": 1e300"),
       "phases[0].steps[0].throughput_rps: must be a finite number in [0.001, 1e+08]"},
      {Replace(json, "\"action\": \"create\"", "\"action\": \"move\""),
       "phases[0].steps[0].action: expected \"create\", \"destroy\" or \"reconfigure\", got "
       "\"move\""},
      {Replace(json, "\"action\": \"destroy\"", "\"action\": \"create\""),
       "phases[0].steps[1].model: missing"},
      {Replace(json, "\"from_service\": \"resnet50\"", "\"from_service\": \"\""),
       "phases[1].steps[0].from_service: must not be empty"},
      {Replace(json, "\"version\": 1", "\"version\": 2"),
       "version: unsupported version 2 (this Tessera reads 1)"},
      {Replace(json, "\"tessera-transition\"", "\"tessera-deployment\""),
       "format: expected \"tessera-transition\", got \"tessera-deployment\""},
      {Replace(json, "\"10\": 3", "\"010\": 3"), "gpu_map.010: expected a GPU index of B"},
      {Replace(json, "\"10\": 3", "\"-1\": 3"), "gpu_map.-1: expected a GPU index of B"},
      {Replace(json, "\"10\": 3", "\"10\": 3.5"), "gpu_map.10: expected an integer, got 3.5"},
      {Replace(json, "\"phases\": [", "\"phases\": {\"a\": ["), "invalid JSON: parse error"},
      {Replace(json, "\"min_capacity_ratio\": 1.0212", "\"min_capacity_ratio\": -1"),
       "summary.min_capacity_ratio: must be a finite number >= 0, got -1"},
      {Replace(json, "\"peak_gpus\": 16,", ""), "summary.peak_gpus: missing"},
      {Replace(json, "{\n          \"id\": \"s1\"", "[{\n          \"id\": \"s1\""),
       "invalid JSON: parse error"},
      {json.substr(0, json.size() / 2), "invalid JSON: parse error"},
      {"", "invalid JSON: parse error"},
      {std::string(100, '[') + std::string(100, ']'), "[0][0]"},
      {Replace(json, "\"bert-large\"", "\"bert\xff\""), "invalid JSON: parse error"},
      {"[]", "(root): expected an object, got []"},
  };
  for (const Case& c : cases) {
    const std::string error = ErrorOf(c.text);
    EXPECT_TRUE(error.starts_with("t.json: ")) << error;
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << "expected '" << c.expected << "' in: " << error;
  }
}

TEST(TransitionJson, DeepNestingIsRejectedBeforeTheReadersRecurse) {
  const std::string deep =
      "{\"format\": " + std::string(100'000, '[') + std::string(100'000, ']') + "}";
  const std::string error = ErrorOf(deep);
  EXPECT_NE(error.find("nested deeper than 64 levels"), std::string::npos) << error;
}

// Mutants of a valid file either parse, and then write and read back the
// same, or fail with a message naming the file: never crash.
TEST(TransitionJson, MutantsFailCleanlyOrRoundTrip) {
  const std::array<std::string, 10> numbers = {
      "-1", "NaN", "1e400", "", "\"x\"", "1.5", "null", "[]", "{}", "99999999999999999999"};
  const std::string bytes = std::string(",\n\"' :{}[]\\\x01\xff", 14) + '\0';
  const testing::MutationVocabulary vocabulary = {bytes, numbers};
  const std::string json = FormatTransitionJson(Example());
  std::mt19937 rng(18);
  for (int i = 0; i < 2000; ++i) {
    const std::string mutant = testing::Mutate(json, rng, vocabulary);
    Result<Transition> t = ParseTransitionJson(mutant, "m.json");
    if (!t.ok()) {
      EXPECT_TRUE(t.status().message().starts_with("m.json: ")) << t.status().message();
      continue;
    }
    const std::string once = FormatTransitionJson(*t);
    Result<Transition> again = ParseTransitionJson(once, "once.json");
    ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << once;
    EXPECT_EQ(FormatTransitionJson(*again), once);
  }
}

TEST(TransitionText, PhasesStepsAndSummary) {
  const std::string text = FormatTransitionText(Example());
  EXPECT_EQ(text,
            "transition on a100-80gb, 2 spare GPUs\n"
            "GPUs of B on the cluster: 0->0 2->1 10->3\n"
            "phase 1 (2 steps)\n"
            "  s1  create       GPU 3  3g.40gb@4  bert (bert-large, batch 8 x 2 procs, 120.5 "
            "req/s)\n"
            "  s2  destroy      GPU 0  1g.10gb@2  resnet50\n"
            "phase 2 (1 step)\n"
            "  s3  reconfigure  GPU 1  2g.20gb@0  resnet50 -> bert (bert-large, batch 16 x 1 "
            "proc, 210.123 req/s)\n"
            "summary: 3 steps, 2 phases, 3 GPUs touched, peak 16 GPUs, min capacity ratio 1.021\n");
}

TEST(TransitionText, SummaryOnOneLine) {
  EXPECT_EQ(FormatTransitionSummary({1, 1, 1, 1, 1}),
            "1 step, 1 phase, 1 GPU touched, peak 1 GPU, min capacity ratio 1");
}

}  // namespace
}  // namespace tessera
