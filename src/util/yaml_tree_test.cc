#include "util/yaml_tree.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera {
namespace {

TEST(YamlTree, KeepsKindsLinesScalarsAndQuoting) {
  Result<YamlTree> t =
      ParseYamlDocument("a: 1\nb: '2'\nc:\n  - x\n  - [y, z]\nd:\n", "t.yaml", "a test file");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const YamlTree::NodeId root = t->root();
  ASSERT_TRUE(t->IsMap(root));
  EXPECT_EQ(t->size(root), 4u);
  const YamlTree::NodeId a = t->Get(root, "a"), b = t->Get(root, "b"), c = t->Get(root, "c");
  EXPECT_EQ(t->scalar(a), "1");
  EXPECT_FALSE(t->NonPlain(a));
  EXPECT_EQ(t->scalar(b), "2");
  EXPECT_TRUE(t->NonPlain(b));  // quoted
  EXPECT_EQ(t->line(b), 2);
  ASSERT_TRUE(t->IsSequence(c));
  ASSERT_EQ(t->size(c), 2u);
  EXPECT_EQ(t->line(t->children(c)[1]), 5);
  EXPECT_EQ(t->size(t->children(c)[1]), 2u);
  EXPECT_TRUE(t->IsNull(t->Get(root, "d")));
  EXPECT_EQ(t->Get(root, "e"), YamlTree::kNone);
  EXPECT_EQ(t->Get(a, "x"), YamlTree::kNone);  // not a mapping
}

TEST(YamlTree, EmptyTextHasNoRoot) {
  Result<YamlTree> t = ParseYamlDocument("# only a comment\n", "t.yaml", "a test file");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->root(), YamlTree::kNone);
}

TEST(YamlTree, NestingIsBoundedAtMaxDepth) {
  const auto nested = [](int n) { return std::string(n, '[') + std::string(n, ']'); };
  EXPECT_TRUE(ParseYamlDocument(nested(8), "t.yaml", "f", 8).ok());
  Result<YamlTree> deep = ParseYamlDocument(nested(9), "t.yaml", "f", 8);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().message(),
            "t.yaml:1: field '[0][0][0][0][0][0][0][0]': nested deeper than 8 levels of "
            "sequences and mappings");
  Result<YamlTree> key = ParseYamlDocument("{[[1]]: 2}", "t.yaml", "f", 2);
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.status().message().find("'(key)"), std::string::npos) << key.status().message();
}

TEST(YamlTree, OneDocumentOnly) {
  Result<YamlTree> two = ParseYamlDocument("a: 1\n---\nb: [\n", "t.yaml", "a test file");
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().message(),
            "t.yaml:3: field '---': a second YAML document; a test file holds exactly one");
  Result<YamlTree> syntax = ParseYamlDocument("a: [1\n", "t.yaml", "a test file");
  ASSERT_FALSE(syntax.ok());
  EXPECT_TRUE(syntax.status().message().starts_with("t.yaml:2: YAML syntax error: "))
      << syntax.status().message();
}

}  // namespace
}  // namespace tessera
