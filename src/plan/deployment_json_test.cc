// Tests of FormatDeploymentJson / ParseDeploymentJson (deployment_format.h).
// The CSV, table and SVG forms are tested in src/emit/.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_mutator.h"
#include "tessera/deployment_format.h"
#include "test_paths.h"

namespace tessera {
namespace {

// The worked example of tests/golden/deployment_small.json: 2 A100-80GB GPUs,
// 3 services, bert infeasible.
//   GPU 0: 4g.40gb@0 resnet50 (B32 x P2), 3g.40gb@4 densenet121 (B16 x P2)
//   GPU 1: 1g.10gb@0 resnet50 (B8 x P1)
// resnet50 capacity = 1004.56789 + 130.25 = 1134.81789 -> 1134.8179 in JSON.
// gpcs = 4 + 3 + 1 = 8; internal_slack = 1 - (829/1134.81789 x 5 +
// 353/412.3 x 3) / 8 = 1 - (3.65257 + 2.56852) / 8 = 0.222364 -> 0.2224;
// external_fragmentation = 1 - 8 / (2 x 7) = 0.428571 -> 0.4286.
Deployment SmallDeployment() {
  Deployment d;
  d.gpu = "a100-80gb";
  d.planner = "parva";
  d.gpus = {
      {0, 0, "",
       MigInstances{{"4g.40gb", 0, "resnet50", "resnet50", 32, 2, 1004.56789, 61.3},
                    {"3g.40gb", 4, "densenet121", "densenet121", 16, 2, 412.3, 72.15}}},
      {1, 0, "", MigInstances{{"1g.10gb", 0, "resnet50", "resnet50", 8, 1, 130.25, 58.1}}},
  };
  d.services = {
      {"resnet50", "resnet50", 829, 204.5, 1134.81789, ServiceStatus::kOk, ""},
      {"densenet121", "densenet121", 353, 183, 412.3, ServiceStatus::kOk, ""},
      {"bert", "bert-large", 19, 20, 0, ServiceStatus::kInfeasible,
       "no configuration has latency < 0.5 x 20 ms = 10 ms; fastest: 7g.80gb, batch 1, "
       "1 process, 13 ms"},
  };
  d.metrics = {
      2, 8, 0.22236418744840492, 0.4285714285714286, 2, "integer-cover", 0, 0.41237, std::nullopt,
      0, 0};
  return d;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `text` with the first `from` replaced by `to`; fails the test if absent.
std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in the golden text";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Set TESSERA_UPDATE_GOLDEN=1 to rewrite the golden file after an intended
// format change (then review the diff).
TEST(DeploymentJson, MatchesGoldenFile) {
  const std::string path = testing::SourcePath("tests/golden/deployment_small.json");
  const std::string json = FormatDeploymentJson(SmallDeployment());
  if (std::getenv("TESSERA_UPDATE_GOLDEN") != nullptr)
    std::ofstream(path, std::ios::binary) << json;
  EXPECT_EQ(json, ReadFile(path)) << "golden file " << path;
}

TEST(DeploymentJson, KeysInDesignOrderRoundedMeasurementsIntegersStay) {
  const std::string json = FormatDeploymentJson(SmallDeployment());
  // DESIGN.md key order, 2-space indent, final newline.
  EXPECT_TRUE(
      json.starts_with("{\n  \"gpu\": \"a100-80gb\",\n  \"planner\": \"parva\",\n"
                       "  \"sharing\": \"mig+mps\",\n  \"latency_rule\": {\n"))
      << json;
  EXPECT_TRUE(json.ends_with("}\n"));
  const std::vector<std::string> order = {"\"profile\"",
                                          "\"start\"",
                                          "\"service\"",
                                          "\"model\"",
                                          "\"batch\"",
                                          "\"procs\"",
                                          "\"throughput_rps\"",
                                          "\"latency_ms\"",
                                          "\"services\"",
                                          "\"name\"",
                                          "\"rate_rps\"",
                                          "\"slo_ms\"",
                                          "\"capacity_rps\"",
                                          "\"status\"",
                                          "\"metrics\"",
                                          "\"gpcs\"",
                                          "\"internal_slack\"",
                                          "\"external_fragmentation\"",
                                          "\"lower_bound\"",
                                          "\"lower_bound_kind\"",
                                          "\"gap\"",
                                          "\"plan_ms\""};
  size_t at = 0;
  for (const std::string& key : order) {
    const size_t next = json.find(key, at);
    ASSERT_NE(next, std::string::npos) << key << " missing or out of order";
    at = next;
  }
  EXPECT_NE(json.find("\"throughput_rps\": 1004.5679,"), std::string::npos);  // 4 decimals
  EXPECT_NE(json.find("\"capacity_rps\": 1134.8179,"), std::string::npos);
  EXPECT_NE(json.find("\"rate_rps\": 829,"), std::string::npos);  // not 829.0
  EXPECT_NE(json.find("\"slo_ms\": 204.5,"), std::string::npos);
  EXPECT_NE(json.find("\"gap\": 0,"), std::string::npos);
  EXPECT_NE(json.find("\"plan_ms\": 0.4124\n"), std::string::npos);
  // `reason` only where there is one: once, for bert.
  EXPECT_EQ(json.find("\"reason\""), json.rfind("\"reason\""));
  EXPECT_NE(json.find("\"status\": \"infeasible\",\n      \"reason\": \"no configuration"),
            std::string::npos);
}

TEST(DeploymentJson, ParseReadsBackEveryField) {
  const std::string json = FormatDeploymentJson(SmallDeployment());
  Result<Deployment> d = ParseDeploymentJson(json, "small.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->gpu, "a100-80gb");
  EXPECT_EQ(d->planner, "parva");
  ASSERT_EQ(d->gpus.size(), 2u);
  const Instance& in = d->gpus[0].instances()[1];
  EXPECT_EQ(in.profile, "3g.40gb");
  EXPECT_EQ(in.start, 4);
  EXPECT_EQ(in.service, "densenet121");
  EXPECT_EQ(in.batch, 16);
  EXPECT_EQ(in.procs, 2);
  EXPECT_DOUBLE_EQ(in.latency_ms, 72.15);
  EXPECT_DOUBLE_EQ(d->gpus[0].instances()[0].throughput_rps, 1004.5679);  // as rounded
  EXPECT_EQ(d->gpus[1].index, 1);
  ASSERT_EQ(d->services.size(), 3u);
  EXPECT_EQ(d->services[2].status, ServiceStatus::kInfeasible);
  EXPECT_EQ(d->services[2].model, "bert-large");
  EXPECT_EQ(d->services[2].reason, SmallDeployment().services[2].reason);
  EXPECT_EQ(d->services[0].reason, "");
  EXPECT_EQ(d->metrics.gpcs, 8);
  EXPECT_EQ(d->metrics.lower_bound_kind, "integer-cover");
  EXPECT_DOUBLE_EQ(d->metrics.external_fragmentation, 0.4286);
}

TEST(DeploymentJson, FormatParseFormatIsStable) {
  Deployment empty;
  empty.gpu = "h100-80gb";
  for (const Deployment& d : {SmallDeployment(), empty}) {
    const std::string once = FormatDeploymentJson(d);
    Result<Deployment> parsed = ParseDeploymentJson(once, "d.json");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << once;
    EXPECT_EQ(FormatDeploymentJson(*parsed), once);
  }
}

// The profiles a plan was made on round-trip; a malformed hash names its path.
TEST(DeploymentJson, ProfileSourceRoundTripsAndIsChecked) {
  Deployment d = SmallDeployment();
  EXPECT_EQ(FormatDeploymentJson(d).find("\"profiles\""), std::string::npos);  // when set only
  d.profiles = ProfileSource{"prof_data", "0123456789abcdef"};
  const std::string json = FormatDeploymentJson(d);
  EXPECT_NE(json.find("\"profiles\": {\n    \"source\": \"prof_data\",\n    \"fnv1a64\": "
                      "\"0123456789abcdef\"\n  }"),
            std::string::npos)
      << json;
  Result<Deployment> parsed = ParseDeploymentJson(json, "d.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed->profiles.has_value());
  EXPECT_EQ(parsed->profiles->source, "prof_data");
  EXPECT_EQ(parsed->profiles->fnv1a64, "0123456789abcdef");
  EXPECT_EQ(FormatDeploymentJson(*parsed), json);
  Result<Deployment> bad =
      ParseDeploymentJson(Replace(json, "0123456789abcdef", "0123456789ABCDEF"), "d.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "d.json: profiles.fnv1a64: expected 16 lowercase hex digits, got '0123456789ABCDEF'");
}

TEST(DeploymentJson, AcceptsCompactAndCrlfText) {
  const std::string json = FormatDeploymentJson(SmallDeployment());
  std::string crlf;
  for (char c : json) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  crlf.pop_back();  // and no final newline
  crlf.pop_back();
  Result<Deployment> d = ParseDeploymentJson(crlf, "crlf.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(FormatDeploymentJson(*d), json);
}

// Each bad input (an edit of the golden text) and its exact message: source,
// JSON path, what is wrong.
struct ErrorCase {
  std::string name, text, message;
};

// Each case's text fails to parse, without throwing, with a message that
// starts with the case's.
void ExpectParseErrors(const std::vector<ErrorCase>& cases) {
  for (const ErrorCase& c : cases) {
    Result<Deployment> r(Status::Internal("not run"));
    EXPECT_NO_THROW(r = ParseDeploymentJson(c.text, "d.json")) << c.name;
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.name;
    const std::string& got = r.status().message();
    EXPECT_TRUE(got.starts_with(c.message))
        << c.name << "\n  got:  " << got << "\n  want: " << c.message;
  }
}

TEST(DeploymentJson, ErrorMessagesNameSourceAndPath) {
  const std::string good = FormatDeploymentJson(SmallDeployment());
  const std::vector<ErrorCase> cases = {
      {"not JSON", "plan",
       "d.json: invalid JSON: parse error at line 1, column 1: syntax error "
       "while parsing value - invalid literal; last read: 'p'"},
      {"empty", "", "d.json: invalid JSON: parse error at line 1, column 1: "},
      {"trailing text", good + "x", "d.json: invalid JSON: parse error at line 95, column 1: "},
      {"overflow", Replace(good, "61.3", "1e400"), "d.json: invalid JSON: number overflow"},
      {"root is an array", "[]", "d.json: (root): expected an object, got []"},
      {"unknown top key", Replace(good, "\"metrics\": {", "\"x\": {"),
       "d.json: x: unknown key (expected: gpu, planner, gpus, services, metrics, sharing, "
       "latency_rule, pool, shadow_guard, profiles)"},
      {"typo at top", Replace(good, "\"planner\"", "\"planer\""),
       "d.json: planer: unknown key (expected: gpu, planner, gpus, services, metrics, sharing, "
       "latency_rule, pool, shadow_guard, profiles)"},
      {"missing planner", Replace(good, "  \"planner\": \"parva\",\n", ""),
       "d.json: planner: missing"},
      {"duplicate key", Replace(good, "\"index\": 1,", "\"index\": 1, \"index\": 2,"),
       "d.json: gpus[1].index: duplicate key"},
      {"gpus is an object",
       Replace(Replace(good, "\"gpus\": [", "\"gpus\": {\"a\": ["), "  ],\n  \"services\"",
               "  ]},\n  \"services\""),
       "d.json: gpus: expected an array, got {\"a\":[{\"index\":0,"},
      {"fractional start", Replace(good, "\"start\": 4,", "\"start\": 4.5,"),
       "d.json: gpus[0].instances[1].start: expected an integer, got 4.5"},
      {"negative start", Replace(good, "\"start\": 4,", "\"start\": -1,"),
       "d.json: gpus[0].instances[1].start: must be an integer in [0, 2147483647], got -1"},
      {"batch 0", Replace(good, "\"batch\": 8,", "\"batch\": 0,"),
       "d.json: gpus[1].instances[0].batch: must be an integer in [1, 4096], got 0"},
      // Input limits (issue 17, class 4): batch or procs 2^31 aborted simulate on allocation.
      {"batch 2^31", Replace(good, "\"batch\": 8,", "\"batch\": 2147483648,"),
       "d.json: gpus[1].instances[0].batch: must be an integer in [1, 4096], got 2147483648"},
      {"procs 2^31 - 1", Replace(good, "\"procs\": 1,", "\"procs\": 2147483647,"),
       "d.json: gpus[1].instances[0].procs: must be an integer in [1, 48], got 2147483647"},
      {"rate 1e308", Replace(good, "\"rate_rps\": 353", "\"rate_rps\": 1e308"),
       "d.json: services[1].rate_rps: must be a finite number in (0, 1e+07], got 1e+308"},
      {"huge procs", Replace(good, "\"procs\": 1,", "\"procs\": 99999999999,"),
       "d.json: gpus[1].instances[0].procs: must be an integer in [1, 48], got 99999999999"},
      {"instance typo", Replace(good, "\"batch\": 8,", "\"batch_size\": 8,"),
       "d.json: gpus[1].instances[0].batch_size: unknown key (expected: profile, start, service, "
       "model, batch, procs, throughput_rps, latency_ms)"},
      {"text throughput", Replace(good, "1004.5679", "\"fast\""),
       "d.json: gpus[0].instances[0].throughput_rps: expected a number, got \"fast\""},
      {"null latency", Replace(good, "61.3", "null"),
       "d.json: gpus[0].instances[0].latency_ms: expected a number, got null"},
      {"negative rate", Replace(good, "\"rate_rps\": 353", "\"rate_rps\": -353"),
       "d.json: services[1].rate_rps: must be a finite number in (0, 1e+07], got -353"},
      {"bad status", Replace(good, "\"infeasible\"", "\"maybe\""),
       "d.json: services[2].status: expected \"ok\" or \"infeasible\", got \"maybe\""},
      {"reason not a string",
       Replace(Replace(good, "\"reason\": \"no", "\"reason\": [\"no"), "13 ms\"", "13 ms\"]"),
       "d.json: services[2].reason: expected a string, got [\"no configuration has latency"},
      {"empty profile", Replace(good, "\"1g.10gb\"", "\"\""),
       "d.json: gpus[1].instances[0].profile: must not be empty"},
      {"duplicate gpu index", Replace(good, "\"index\": 1,", "\"index\": 0,"),
       "d.json: gpus[1].index: duplicate GPU index 0 (also gpus[0])"},
      {"duplicate service", Replace(good, "\"name\": \"bert\"", "\"name\": \"resnet50\""),
       "d.json: services[2].name: duplicate service \"resnet50\" (also services[0])"},
      {"unknown service", Replace(good, "\"service\": \"densenet121\"", "\"service\": \"vgg\""),
       "d.json: gpus[0].instances[1].service: \"vgg\" is not in services"},
      {"metrics typo", Replace(good, "\"gap\"", "\"gpa\""),
       "d.json: metrics.gpa: unknown key (expected: gpus, gpcs, internal_slack, "
       "external_fragmentation, lower_bound, lower_bound_kind, gap, plan_ms, proven_optimal, "
       "cost_per_hour, cost_lower_bound, resource_pct, predicted_violations)"},
      {"negative gpus", Replace(good, "\"gpus\": 2,", "\"gpus\": -2,"),
       "d.json: metrics.gpus: must be an integer in [0, 2147483647], got -2"},
  };
  ExpectParseErrors(cases);
}

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// 100,000 nested arrays in a reason or an unknown key used to overflow the
// stack (Describe() dumps values recursively); nesting is now bounded before
// the DOM is built, and the error names the path.
TEST(DeploymentJson, DeepNestingIsAnErrorNamingThePath) {
  const std::string good = FormatDeploymentJson(SmallDeployment());
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::vector<ErrorCase> cases = {
      {"deep reason",
       Replace(good, "\"status\": \"ok\"", "\"status\": \"ok\", \"reason\": " + deep),
       "d.json: services[0].reason[0][0][0]"},
      {"deep unknown key", Replace(good, "\"metrics\": {", "\"zzz\": " + deep + ", \"metrics\": {"),
       "d.json: zzz[0][0]"},
      {"deep root", deep, "d.json: [0][0][0]"},
      {"deep objects", Repeat("{\"a\": ", 50000) + "1" + std::string(50000, '}'),
       "d.json: a.a.a.a"},
      {"deep and unclosed", std::string(100000, '['), "d.json: [0][0]"},
  };
  for (const ErrorCase& c : cases) {
    Result<Deployment> r = ParseDeploymentJson(c.text, "d.json");
    ASSERT_FALSE(r.ok()) << c.name;
    const std::string& got = r.status().message();
    EXPECT_TRUE(got.starts_with(c.message)) << c.name << "\n  got:  " << got;
    EXPECT_NE(got.find("nested deeper than 64 levels"), std::string::npos) << c.name << ": " << got;
    EXPECT_LT(got.size(), 300u) << c.name;  // the path is cut short
  }
  // 64 levels in all are read (a reason 61 arrays deep in a service of the
  // services array of the document), 65 are not.
  const auto with_reason = [&](int arrays) {
    const std::string reason = std::string(arrays, '[') + std::string(arrays, ']');
    return ParseDeploymentJson(
        Replace(good, "\"status\": \"ok\"", "\"status\": \"ok\", \"reason\": " + reason), "d.json");
  };
  Result<Deployment> at_limit = with_reason(61);
  ASSERT_FALSE(at_limit.ok());  // a reason is a string
  EXPECT_EQ(at_limit.status().message().find("nested deeper"), std::string::npos)
      << at_limit.status().message();
  Result<Deployment> over = with_reason(62);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("nested deeper than 64 levels"), std::string::npos)
      << over.status().message();
}

// A key holding control bytes is echoed escaped, never raw.
TEST(DeploymentJson, KeysInMessagesAreEscaped) {
  const std::string good = FormatDeploymentJson(SmallDeployment());
  Result<Deployment> r = ParseDeploymentJson(
      Replace(good, "\"metrics\": {", "\"a\\u0000b\\u001b\": 1, \"metrics\": {"), "d.json");
  ASSERT_FALSE(r.ok());
  const std::string& got = r.status().message();
  EXPECT_TRUE(got.starts_with("d.json: a\\x00b\\x1b: unknown key")) << got;
  EXPECT_EQ(got.find('\0'), std::string::npos);
}

TEST(DeploymentJson, FuzzNeverThrowsAndErrorsNameTheSource) {
  const std::string good = FormatDeploymentJson(SmallDeployment());
  std::mt19937 rng(20240917);
  constexpr int kRuns = 3000;
  int errors = 0;
  for (int i = 0; i < kRuns; ++i) {
    const std::string mutant = testing::Mutate(good, rng, testing::JsonMutations());
    EXPECT_NO_THROW({
      Result<Deployment> r = ParseDeploymentJson(mutant, "fuzz.json");
      if (!r.ok()) {
        ++errors;
        EXPECT_TRUE(r.status().message().starts_with("fuzz.json: "))
            << r.status().message() << "\n--- input:\n"
            << mutant;
      } else {
        // Whatever parses formats to text that parses to the same text.
        const std::string once = FormatDeploymentJson(*r);
        Result<Deployment> again = ParseDeploymentJson(once, "fuzz.json");
        ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << once;
        EXPECT_EQ(FormatDeploymentJson(*again), once);
      }
    }) << mutant;
  }
  EXPECT_GT(errors, kRuns / 10);
  EXPECT_LT(errors, kRuns);
}

// SmallDeployment() on a mixed, priced pool: GPU 1 is an H100-80GB (named per
// GPU because it differs from the deployment's A100-80GB), with the cost
// table and the exact planner's proof and cost metrics.
//   cost_per_hour = 4.1 (A100) + 6.98 (H100) = 11.08.
Deployment PooledDeployment() {
  Deployment d = SmallDeployment();
  d.planner = "exact";
  d.gpus[1].gpu = "h100-80gb";
  d.pool = {{"a100-80gb", 4.1, 0, 1}, {"h100-80gb", 6.98, 8, 1}};
  d.metrics.proven_optimal = true;
  d.metrics.cost_per_hour = 11.08;
  d.metrics.cost_lower_bound = 11.08;
  return d;
}

TEST(DeploymentJson, PoolKeysAppearOnlyWhenSet) {
  const std::string plain = FormatDeploymentJson(SmallDeployment());
  for (const char* key : {"\"pool\"", "\"proven_optimal\"", "\"cost_per_hour\"",
                          "\"cost_lower_bound\"", "\"h100-80gb\""}) {
    EXPECT_EQ(plain.find(key), std::string::npos) << key;
  }
  const std::string pooled = FormatDeploymentJson(PooledDeployment());
  // "gpu" per GPU only on GPU 1, right after its index.
  EXPECT_NE(pooled.find("\"index\": 1,\n      \"gpu\": \"h100-80gb\",\n      \"node\": 0,"),
            std::string::npos)
      << pooled;
  EXPECT_NE(pooled.find("\"index\": 0,\n      \"node\": 0,"), std::string::npos) << pooled;
  EXPECT_NE(pooled.find("\"proven_optimal\": true,\n    \"cost_per_hour\": 11.08,\n"
                        "    \"cost_lower_bound\": 11.08\n"),
            std::string::npos)
      << pooled;
  // "pool" last, after metrics.
  EXPECT_LT(pooled.find("\"metrics\""), pooled.find("\"pool\": ["));
  EXPECT_TRUE(pooled.ends_with("\"used\": 1\n    }\n  ]\n}\n")) << pooled;
  // proven_optimal false is written (it is set), cost keys are not (cost 0).
  Deployment unproven = SmallDeployment();
  unproven.metrics.proven_optimal = false;
  const std::string text = FormatDeploymentJson(unproven);
  EXPECT_NE(text.find("\"proven_optimal\": false"), std::string::npos);
  EXPECT_EQ(text.find("\"cost_per_hour\""), std::string::npos);
}

TEST(DeploymentJson, ParsesPoolAndPerGpuModels) {
  // Hand-written keys (not the formatter's): a per-GPU "gpu" and a "pool".
  const std::string good = FormatDeploymentJson(SmallDeployment());
  std::string text = Replace(good, "\"index\": 1,", "\"index\": 1, \"gpu\": \"h100-80gb\",");
  text = Replace(text, "\"plan_ms\": 0.4124\n",
                 "\"plan_ms\": 0.4124, \"proven_optimal\": false, \"cost_per_hour\": 11.08, "
                 "\"cost_lower_bound\": 10.5\n");
  text = Replace(text, "\"services\": [",
                 "\"pool\": [{\"gpu\": \"a100-80gb\", \"price_per_hour\": 4.1, \"max_count\": 0, "
                 "\"used\": 1}, {\"gpu\": \"h100-80gb\", \"price_per_hour\": 6.98, "
                 "\"max_count\": 8, \"used\": 1}], \"services\": [");
  Result<Deployment> d = ParseDeploymentJson(text, "pool.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString() << "\n" << text;
  ASSERT_EQ(d->gpus.size(), 2u);
  EXPECT_EQ(d->gpus[0].gpu, "");
  EXPECT_EQ(GpuModelName(*d, d->gpus[0]), "a100-80gb");
  EXPECT_EQ(d->gpus[1].gpu, "h100-80gb");
  EXPECT_EQ(GpuModelName(*d, d->gpus[1]), "h100-80gb");
  ASSERT_EQ(d->pool.size(), 2u);
  EXPECT_EQ(d->pool[0].gpu, "a100-80gb");
  EXPECT_DOUBLE_EQ(d->pool[0].price_per_hour, 4.1);
  EXPECT_EQ(d->pool[0].max_count, 0);
  EXPECT_EQ(d->pool[0].used, 1);
  EXPECT_EQ(d->pool[1].gpu, "h100-80gb");
  EXPECT_DOUBLE_EQ(d->pool[1].price_per_hour, 6.98);
  EXPECT_EQ(d->pool[1].max_count, 8);
  EXPECT_EQ(d->metrics.proven_optimal, std::optional<bool>(false));
  EXPECT_DOUBLE_EQ(d->metrics.cost_per_hour, 11.08);
  EXPECT_DOUBLE_EQ(d->metrics.cost_lower_bound, 10.5);
  // The parse formats to the canonical text, which parses to itself.
  const std::string once = FormatDeploymentJson(*d);
  Result<Deployment> again = ParseDeploymentJson(once, "pool.json");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(FormatDeploymentJson(*again), once);
  // Absent optional keys read as unset.
  Result<Deployment> plain = ParseDeploymentJson(good, "plain.json");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->pool.empty());
  EXPECT_FALSE(plain->metrics.proven_optimal.has_value());
  EXPECT_EQ(plain->metrics.cost_per_hour, 0);
  EXPECT_EQ(plain->gpus[1].gpu, "");
}

TEST(DeploymentJson, PooledFormatParseFormatIsStable) {
  const Deployment d = PooledDeployment();
  const std::string once = FormatDeploymentJson(d);
  Result<Deployment> parsed = ParseDeploymentJson(once, "d.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << once;
  EXPECT_EQ(FormatDeploymentJson(*parsed), once);
  EXPECT_EQ(parsed->gpus[1].gpu, "h100-80gb");
  EXPECT_EQ(parsed->metrics.proven_optimal, std::optional<bool>(true));
  EXPECT_DOUBLE_EQ(parsed->metrics.cost_per_hour, 11.08);
  ASSERT_EQ(parsed->pool.size(), 2u);
  EXPECT_EQ(parsed->pool[1].max_count, 8);
}

TEST(DeploymentJson, PoolErrorsNameThePath) {
  const std::string good = FormatDeploymentJson(PooledDeployment());
  const std::vector<ErrorCase> cases = {
      {"typo in a pool entry", Replace(good, "\"price_per_hour\": 4.1", "\"prize\": 4.1"),
       "d.json: pool[0].prize: unknown key (expected: gpu, price_per_hour, max_count, used)"},
      {"pool entry missing used", Replace(good, ",\n      \"used\": 1\n    }\n  ]", "\n    }\n  ]"),
       "d.json: pool[1].used: missing"},
      {"negative price", Replace(good, "\"price_per_hour\": 6.98", "\"price_per_hour\": -6.98"),
       "d.json: pool[1].price_per_hour: must be a finite number in [0, 100000], got -6.98"},
      {"fractional cap", Replace(good, "\"max_count\": 8", "\"max_count\": 8.5"),
       "d.json: pool[1].max_count: expected an integer, got 8.5"},
      {"pool is an object",
       Replace(Replace(good, "\"pool\": [", "\"pool\": {\"a\": ["), "]\n}\n", "]}\n}\n"),
       "d.json: pool: expected an array, got {"},
      {"proven_optimal as a string",
       Replace(good, "\"proven_optimal\": true", "\"proven_optimal\": \"yes\""),
       "d.json: metrics.proven_optimal: expected true or false, got \"yes\""},
      {"proven_optimal as a number",
       Replace(good, "\"proven_optimal\": true", "\"proven_optimal\": 1"),
       "d.json: metrics.proven_optimal: expected true or false, got 1"},
      {"text cost", Replace(good, "\"cost_per_hour\": 11.08", "\"cost_per_hour\": \"11.08\""),
       "d.json: metrics.cost_per_hour: expected a number, got \"11.08\""},
      {"negative cost bound",
       Replace(good, "\"cost_lower_bound\": 11.08", "\"cost_lower_bound\": -1"),
       "d.json: metrics.cost_lower_bound: must be a finite number >= 0, got -1"},
      {"empty per-GPU model",
       Replace(good, "\"gpu\": \"h100-80gb\",\n      \"node\"", "\"gpu\": \"\",\n      \"node\""),
       "d.json: gpus[1].gpu: must not be empty"},
      {"per-GPU model not a string",
       Replace(good, "\"gpu\": \"h100-80gb\",\n      \"node\"", "\"gpu\": 100,\n      \"node\""),
       "d.json: gpus[1].gpu: expected a string, got 100"},
      {"typo in a GPU",
       Replace(good, "\"gpu\": \"h100-80gb\",\n      \"node\"",
               "\"model\": \"h100-80gb\",\n      \"node\""),
       "d.json: gpus[1].model: unknown key (expected: index, node, gpu, instances, resource_pct, "
       "processes)"},
      {"duplicate pool key",
       Replace(good, "\"used\": 1\n    }\n  ]", "\"used\": 1, \"used\": 2\n    }\n  ]"),
       "d.json: pool[1].used: duplicate key"},
  };
  ExpectParseErrors(cases);
}

}  // namespace
}  // namespace tessera
