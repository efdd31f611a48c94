// ExtenderArgs (extender_args.h): the one-pass reader gives exactly the
// whole-body reader's answer, on the bodies kube-scheduler writes and on
// mutants of them.
#include "k8s/extender_args.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "fuzz_mutator.h"

namespace tessera {
namespace {

using nlohmann::json;

const json kPod = {{"metadata", {{"name", "p"}, {"namespace", "team-a"}, {"uid", "u1"}}},
                   {"spec", {{"containers", {{{"name", "main"}, {"image", "img\\\"x\u00e9"}}}}}}};

// The same answer: both fail with the same message, or both read the same
// arguments.
void ExpectSameAnswer(const std::string& body) {
  const Result<ExtenderArgs> fast = ReadExtenderArgs(body);
  const Result<ExtenderArgs> tree = ReadExtenderArgsThroughTree(body);
  ASSERT_EQ(fast.ok(), tree.ok()) << body;
  if (!fast.ok()) {
    EXPECT_EQ(fast.status().ToString(), tree.status().ToString()) << body;
    return;
  }
  EXPECT_EQ(fast->pod, tree->pod) << body;
  EXPECT_EQ(fast->by_name, tree->by_name) << body;
  EXPECT_EQ(fast->names, tree->names) << body;
  EXPECT_EQ(fast->objects, tree->objects) << body;
  EXPECT_EQ(fast->list, tree->list) << body;
}

TEST(ExtenderArgs, ReadsNodeNamesAsKubeSchedulerWritesThem) {
  const std::string body =
      R"({"Pod":)" + kPod.dump() + R"(,"Nodes":null,"NodeNames":["node-a","node-b.x_1"]})";
  const Result<ExtenderArgs> args = ReadExtenderArgs(body);
  ASSERT_TRUE(args.ok()) << args.status().ToString();
  EXPECT_EQ(args->pod, kPod);
  EXPECT_TRUE(args->by_name);
  EXPECT_EQ(args->names, (std::vector<std::string>{"node-a", "node-b.x_1"}));
  ExpectSameAnswer(body);
  // Spaces, another key order, an empty list.
  ExpectSameAnswer("\n { \"NodeNames\" : [ ] ,\t\"Pod\" : " + kPod.dump(2) + " } \r\n");
}

TEST(ExtenderArgs, ReadsNodeObjects) {
  json list = {{"kind", "NodeList"}, {"metadata", json::object()}};
  list["items"] = {{{"metadata", {{"name", "node-a"}}}}, {{"metadata", {{"name", "node-b"}}}}};
  const std::string body = json{{"Pod", kPod}, {"Nodes", list}, {"NodeNames", nullptr}}.dump();
  const Result<ExtenderArgs> args = ReadExtenderArgs(body);
  ASSERT_TRUE(args.ok()) << args.status().ToString();
  EXPECT_FALSE(args->by_name);
  EXPECT_EQ(args->names, (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_EQ(args->objects[1], list["items"][1]);
  EXPECT_FALSE(args->list.contains("items"));
  EXPECT_EQ(args->list.at("kind"), "NodeList");
  ExpectSameAnswer(body);
}

TEST(ExtenderArgs, UnusualBodiesGetTheWholeBodyReadersAnswer) {
  const std::string pod = kPod.dump();
  const std::vector<std::string> bodies = {
      // Escapes and non-ASCII names, another key, NodeNames given twice.
      R"({"Pod":)" + pod + R"(,"NodeNames":["node\u002da","n\u00f6de"]})",
      R"({"Pod":)" + pod + R"(,"NodeNames":["a"],"Extra":1})",
      R"({"Pod":)" + pod + R"(,"NodeNames":["a"],"NodeNames":["b"]})",
      // Errors: each names its field or the syntax error's place.
      R"({"NodeNames":["a"]})",
      R"({"Pod":null,"NodeNames":["a"]})",
      R"({"Pod":)" + pod + "}",
      R"({"Pod":)" + pod + R"(,"NodeNames":"a"})",
      R"({"Pod":)" + pod + R"(,"NodeNames":["a",1]})",
      R"({"Pod":)" + pod + R"(,"Nodes":{"items":[{"metadata":1}]}})",
      R"({"Pod":)" + pod + R"(,"Nodes":[]})",
      R"({"Pod":)" + pod + R"(,"NodeNames":["a"]} x)",
      R"({"Pod":)" + pod + R"(,"NodeNames":["a)" + std::string(1, '\x01') + R"("]})",
      R"({"Pod":{"a":1]},"NodeNames":["a"]})",
      R"({"Pod":{"a":"}"},"NodeNames":["a"]})",
      "[]",
      "",
      "\xEF\xBB\xBF"
      R"({"Pod":)" +
          pod + R"(,"NodeNames":["a"]})",
      R"({"Pod":)" + std::string(100, '[') + std::string(100, ']') + R"(,"NodeNames":[]})",
  };
  for (const std::string& body : bodies) ExpectSameAnswer(body);
  EXPECT_EQ(ReadExtenderArgs(bodies[3]).status().message(), "Pod: missing or not an object");
  EXPECT_EQ(ReadExtenderArgs(bodies[7]).status().message(), "NodeNames: must hold strings");
  EXPECT_TRUE(ReadExtenderArgs(bodies[2]).status().message().find("duplicate key") !=
              std::string::npos)
      << ReadExtenderArgs(bodies[2]).status().ToString();
  EXPECT_TRUE(ReadExtenderArgs(bodies[12]).status().message().starts_with("invalid JSON"));
  EXPECT_TRUE(ReadExtenderArgs(bodies.back()).status().message().find("nested deeper") !=
              std::string::npos);
}

TEST(ExtenderArgs, MutantsGetTheWholeBodyReadersAnswer) {
  json list = {{"kind", "NodeList"}};
  list["items"] = {{{"metadata", {{"name", "node-0"}}}}};
  const std::vector<std::string> seeds = {
      json{{"Pod", kPod}, {"Nodes", nullptr}, {"NodeNames", {"node-0", "node-1", "node-2"}}}.dump(),
      json{{"Pod", kPod}, {"Nodes", list}, {"NodeNames", nullptr}}.dump(1),
      json{{"Pod", kPod}, {"NodeNames", {"a", "b"}}}.dump(1)};
  std::mt19937 rng(20261126);
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    const std::string& seed = seeds[round % seeds.size()];
    const std::string body = testing::Mutate(seed, rng, testing::JsonMutations());
    ExpectSameAnswer(body);
    if (::testing::Test::HasFailure()) return;
    accepted += ReadExtenderArgs(body).ok();
  }
  // The mutants reach accepted bodies as well as errors.
  EXPECT_GT(accepted, 300);
}

}  // namespace
}  // namespace tessera
