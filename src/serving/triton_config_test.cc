// ParseTritonConfig: what deploy writes reads back; Triton's other fields
// are read and ignored; errors name the file, the line and the field.
#include "tessera/serving/triton_config.h"

#include <gtest/gtest.h>

#include <string>

#include "fuzz_mutator.h"
#include "tessera/emit/deploy_artifacts.h"

namespace tessera {
namespace {

TEST(TritonConfigTest, ReadsWhatDeployWrites) {
  const std::string text = FormatTritonConfig("BERT_large", 16, 20000);
  Result<TritonBatching> b = ParseTritonConfig(text, "b16.pbtxt");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->name, "BERT_large");
  EXPECT_EQ(b->max_batch_size, 16);
  EXPECT_TRUE(b->dynamic_batching);
  EXPECT_EQ(b->preferred_batch_sizes, std::vector<int>{16});
  EXPECT_EQ(b->max_queue_delay_us, 20000);
}

TEST(TritonConfigTest, IgnoresOtherFieldsAndReadsRepeatedForms) {
  const std::string text =
      "name: 'm'  # a comment\n"
      "platform: \"onnxruntime_onnx\"\n"
      "max_batch_size: 8\n"
      "input [ { name: \"x\" data_type: TYPE_FP32 dims: [ 3, 224, 224 ] } ]\n"
      "dynamic_batching {\n"
      "  preferred_batch_size: 8\n"
      "  preferred_batch_size: 4\n"
      "  default_queue_policy { timeout_action: REJECT }\n"
      "}\n"
      "optimization < cuda { graphs: true } >\n";
  Result<TritonBatching> b = ParseTritonConfig(text, "c.pbtxt");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->preferred_batch_sizes, (std::vector<int>{4, 8}));
  EXPECT_EQ(b->max_queue_delay_us, 0);
  Result<TritonBatching> none = ParseTritonConfig("max_batch_size: 0", "c.pbtxt");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->dynamic_batching);
}

TEST(TritonConfigTest, ErrorsNameTheFileLineAndField) {
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {"name: \"m\"\nmax_batch_size: x\n", "c.pbtxt:2: max_batch_size: expected an integer"},
      {"max_batch_size: 99999", "c.pbtxt:1: max_batch_size: expected an integer in [0, 4096]"},
      {"max_batch_size: 4\ndynamic_batching {\n preferred_batch_size: 8\n}",
       "preferred_batch_size: 8 is above max_batch_size 4"},
      {"dynamic_batching {\n max_queue_delay_microseconds: -1 }",
       "c.pbtxt:2: dynamic_batching.max_queue_delay_microseconds: expected an integer"},
      {"dynamic_batching {\n", "missing '}'"},
      {"name: \"open", "c.pbtxt:1: unterminated string"},
      {"}", "unexpected }"},
      {"max_batch_size 4", "c.pbtxt:1: max_batch_size: expected ':', '{' or '['"},
      {"a: [1 2]", "a: expected ',' or ']'"},
      {"a: @", "unexpected character"},
      {std::string(100, '{'), "expected a field name"},
      {"a {" + std::string(40 * 4, ' ') + "}", ""},
  };
  for (const auto& c : cases) {
    Result<TritonBatching> b = ParseTritonConfig(c.text, "c.pbtxt");
    if (c.message.empty()) {
      EXPECT_TRUE(b.ok()) << c.text;
      continue;
    }
    ASSERT_FALSE(b.ok()) << c.text;
    EXPECT_NE(b.status().message().find(c.message), std::string::npos) << c.text << "\n"
                                                                       << b.status().message();
  }
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "a { ";
  Result<TritonBatching> b = ParseTritonConfig(deep, "c.pbtxt");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("nested too deeply"), std::string::npos)
      << b.status().message();
  EXPECT_FALSE(ParseTritonConfig(std::string((1 << 20) + 1, ' '), "c.pbtxt").ok());
}

// Seeded mutants of what deploy writes: each parses or fails with a message
// naming the file; none crashes or hangs.
TEST(TritonConfigTest, MutantsParseOrNameTheFile) {
  const std::string text = FormatTritonConfig("resnet50", 32, 90000);
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const std::string mutant = testing::Mutate(text, rng, testing::JsonMutations());
    Result<TritonBatching> b = ParseTritonConfig(mutant, "m.pbtxt");
    if (!b.ok()) {
      EXPECT_EQ(b.status().message().rfind("m.pbtxt", 0), 0u) << b.status().message();
    } else {
      EXPECT_LE(b->max_batch_size, 4096);
    }
  }
}

}  // namespace
}  // namespace tessera
