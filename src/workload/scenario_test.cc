#include "tessera/scenario.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "fuzz_mutator.h"
#include "test_paths.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

// ---- Helpers --------------------------------------------------------------

using testing::FreshTestDir;
using testing::WriteTextFile;

// What YAML mutants are made of: its indicators and bytes, and numbers (and
// non-numbers) a parser must reject.
const std::array<std::string, 14> kYamlNumbers = {"-1",     "NaN", ".nan",   "inf", ".inf",
                                                  "1e400",  "",    "abc",    "0",   "1.5",
                                                  "\"12\"", "[1]", "{a: 1}", "~"};
const std::string kYamlBytes = std::string(",\n\r\"' :-{}[]#&*!|>\t\x01\xff", 22) + '\0';
const testing::MutationVocabulary kYamlMutations = {kYamlBytes, kYamlNumbers};

// Checks one parse of a mutant: a value, or an error that starts with `prefix`
// (the source name).
void ExpectValueOrNamedError(const Result<Scenario>& r, const std::string& prefix,
                             const std::string& input, int& errors) {
  if (r.ok()) return;
  ++errors;
  EXPECT_TRUE(r.status().message().starts_with(prefix)) << r.status().message() << "\n--- input:\n"
                                                        << input;
}

const std::string kYaml =
    "# S-like scenario\n"
    "name: S3\n"
    "gpu: A100-80GB\n"
    "services:\n"
    "  - {name: bert, model: bert, rate_rps: 46, slo_ms: 4294}\n"
    "  - name: resnet50\n"
    "    model: ResNet50\n"
    "    rate_rps: 1463\n"
    "    slo_ms: 138.5\n"
    "  - {name: vgg19, model: vgg19, rate_rps: 6.5e2, slo_ms: 265}\n";

// ---- YAML -----------------------------------------------------------------

TEST(ScenarioYaml, ParsesFlowAndBlockServices) {
  Result<Scenario> s = ParseScenarioYaml(kYaml, "s3.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->name, "S3");
  EXPECT_EQ(s->gpu, "a100-80gb");  // the catalog's spelling
  EXPECT_EQ(s->source, "s3.yaml");
  ASSERT_EQ(s->services.size(), 3u);
  const Service& bert = s->services[0];
  EXPECT_EQ(bert.name, "bert");
  EXPECT_EQ(bert.model, "bert-large");  // canonical model name
  EXPECT_EQ(bert.rate_rps, 46);
  EXPECT_EQ(bert.slo_ms, 4294);
  EXPECT_EQ(bert.line, 5);
  EXPECT_EQ(s->services[1].model, "resnet50");
  EXPECT_EQ(s->services[1].slo_ms, 138.5);  // fractions are kept
  EXPECT_EQ(s->services[1].line, 6);
  EXPECT_EQ(s->services[2].rate_rps, 650);
}

TEST(ScenarioYaml, AcceptsCrlfNoFinalNewlineAndOptionalKeys) {
  const std::string text =
      "services:\r\n"
      "  - {name: a, model: resnet50, rate_rps: 10, slo_ms: 100}\r\n"
      "  - {name: b, model: resnet50, rate_rps: 20, slo_ms: 100}";
  Result<Scenario> s = ParseScenarioYaml(text, "crlf.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->name, "");
  EXPECT_EQ(s->gpu, "");  // not given: the CLI's --gpu decides
  ASSERT_EQ(s->services.size(), 2u);
  EXPECT_EQ(s->services[1].line, 3);
}

// Each bad input and the start of its message: file, 1-based line, field.
TEST(ScenarioYaml, ErrorMessagesNameFileLineAndField) {
  const std::string kHead = "name: X\nservices:\n";
  auto svc = [&](const std::string& body) { return kHead + "  - " + body + "\n"; };
  struct Case {
    std::string name, text, message;
  };
  const std::vector<Case> cases = {
      {"empty file", "", "s.yaml:1: field 'services': empty scenario: no services"},
      {"only a comment", "# nothing\n", "s.yaml:1: field 'services': empty scenario"},
      {"empty services", "services: []\n",
       "s.yaml:1: field 'services': empty scenario: no service"},
      {"no services", "name: X\ngpu: a100-80gb\n", "s.yaml:1: field 'services': missing"},
      {"root is a list", "- a\n- b\n",
       "s.yaml:1: field 'services': a scenario is a mapping with keys name, gpu, pool, services, "
       "got a sequence"},
      {"unknown top key", "name: X\nservises: []\n",
       "s.yaml:2: field 'servises': unknown key (expected one of: name, gpu, pool, services)"},
      {"gpu and pool", "gpu: a100-80gb\npool: []\nservices: []\n",
       "s.yaml:2: field 'pool': give either gpu (one model) or pool (several, priced), not both"},
      {"empty pool", "pool: []\nservices: []\n",
       "s.yaml:1: field 'pool': expected a non-empty sequence"},
      {"pool entry not a map", "pool:\n  - a100-80gb\nservices: []\n",
       "s.yaml:2: field 'pool': each entry is a mapping with keys gpu, price_per_hour, max_count"},
      {"pool price missing", "pool:\n  - {gpu: a100-80gb}\nservices: []\n",
       "s.yaml:2: field 'price_per_hour': missing"},
      {"pool price zero", "pool:\n  - {gpu: a100-80gb, price_per_hour: 0}\nservices: []\n",
       "s.yaml:2: field 'price_per_hour': must be a finite number in [0.001, 100000], got '0'"},
      // Input limits: prices the exact planner's solver resolves (issue 17, class 6).
      {"pool price 1e16", "pool:\n  - {gpu: a100-80gb, price_per_hour: 1e16}\nservices: []\n",
       "s.yaml:2: field 'price_per_hour': must be a finite number in [0.001, 100000], got '1e16'"},
      {"pool price 1e25", "pool:\n  - {gpu: a100-80gb, price_per_hour: 1e25}\nservices: []\n",
       "s.yaml:2: field 'price_per_hour': must be a finite number in [0.001, 100000], got '1e25'"},
      {"pool unknown gpu", "pool:\n  - {gpu: v100, price_per_hour: 1}\nservices: []\n",
       "s.yaml:2: field 'gpu': "},
      {"pool fractional cap",
       "pool:\n  - {gpu: a100-80gb, price_per_hour: 1, max_count: 2.5}\nservices: []\n",
       "s.yaml:2: field 'max_count': must be an integer in [1, 1e+06], got '2.5'"},
      {"pool model twice",
       "pool:\n  - {gpu: a100-80gb, price_per_hour: 1}\n  - {gpu: A100-80GB, price_per_hour: 2}\n"
       "services: []\n",
       "s.yaml:3: field 'gpu': a100-80gb is listed twice (first at line 2)"},
      {"pool typo", "pool:\n  - {gpu: a100-80gb, price: 1}\nservices: []\n",
       "s.yaml:2: field 'price': unknown key (expected one of: gpu, price_per_hour, max_count)"},
      {"duplicate top key", "name: X\nname: Y\nservices: []\n",
       "s.yaml:2: field 'name': duplicate key"},
      {"unknown gpu", "gpu: v100\nservices: []\n",
       "s.yaml:1: field 'gpu': unknown GPU 'v100' (known: a100-40gb"},
      {"gpu is a list", "gpu: [a100-80gb]\nservices: []\n",
       "s.yaml:1: field 'gpu': expected a string, got a sequence"},
      {"services is a map", "services:\n  a: 1\n",
       "s.yaml:2: field 'services': expected a sequence of services, got a mapping"},
      {"service is a scalar", kHead + "  - resnet50\n",
       "s.yaml:3: field 'services': item 1 must be a mapping with keys name, model, rate_rps, "
       "slo_ms, got the scalar 'resnet50'"},
      {"unknown service key", svc("{name: a, model: m, rate: 1, rate_rps: 1, slo_ms: 1}"),
       "s.yaml:3: field 'rate': unknown key (expected one of: name, model, rate_rps, slo_ms)"},
      {"missing slo", svc("{name: a, model: m, rate_rps: 1}"), "s.yaml:3: field 'slo_ms': missing"},
      {"negative rate", svc("{name: a, model: m, rate_rps: -1, slo_ms: 1}"),
       "s.yaml:3: field 'rate_rps': must be a finite number in (0, 1e+07], got '-1'"},
      {"zero rate", svc("{name: a, model: m, rate_rps: 0, slo_ms: 1}"),
       "s.yaml:3: field 'rate_rps': must be a finite number in (0, 1e+07], got '0'"},
      {"NaN rate", svc("{name: a, model: m, rate_rps: .nan, slo_ms: 1}"),
       "s.yaml:3: field 'rate_rps': must be a finite number in (0, 1e+07], got '.nan'"},
      {"inf slo", svc("{name: a, model: m, rate_rps: 1, slo_ms: .inf}"),
       "s.yaml:3: field 'slo_ms': must be a finite number in [0.01, 3.6e+06], got '.inf'"},
      {"overflowing slo", svc("{name: a, model: m, rate_rps: 1, slo_ms: 1e400}"),
       "s.yaml:3: field 'slo_ms': must be a finite number in [0.01, 3.6e+06], got '1e400'"},
      {"text rate", svc("{name: a, model: m, rate_rps: fast, slo_ms: 1}"),
       "s.yaml:3: field 'rate_rps': must be a finite number in (0, 1e+07], got 'fast'"},
      // Input limits (issue 17, class 4): 1e308 aborted, 1e12 took > 10 GB.
      {"rate 1e308", svc("{name: a, model: m, rate_rps: 1e308, slo_ms: 1}"),
       "s.yaml:3: field 'rate_rps': must be a finite number in (0, 1e+07], got '1e308'"},
      {"rate 1e12", svc("{name: a, model: m, rate_rps: 1e12, slo_ms: 1}"),
       "s.yaml:3: field 'rate_rps': must be a finite number in (0, 1e+07], got '1e12'"},
      {"slo of a day", svc("{name: a, model: m, rate_rps: 1, slo_ms: 86400000}"),
       "s.yaml:3: field 'slo_ms': must be a finite number in [0.01, 3.6e+06], got '86400000'"},
      {"tiny slo", svc("{name: a, model: m, rate_rps: 1, slo_ms: 1e-300}"),
       "s.yaml:3: field 'slo_ms': must be a finite number in [0.01, 3.6e+06], got '1e-300'"},
      {"cap past a million",
       "pool:\n  - {gpu: a100-80gb, price_per_hour: 1, max_count: 2147483648}\nservices: []\n",
       "s.yaml:2: field 'max_count': must be an integer in [1, 1e+06], got '2147483648'"},
      // Names are written back byte for byte: invalid UTF-8 is refused (class 7).
      {"name not UTF-8", svc("{name: a\xff, model: m, rate_rps: 1, slo_ms: 1}"),
       "s.yaml:3: field 'name': must be valid UTF-8; byte 2 (0xff) is not"},
      {"model not UTF-8", svc("{name: a, model: \xc3(, rate_rps: 1, slo_ms: 1}"),
       "s.yaml:3: field 'model': must be valid UTF-8; byte 1 (0xc3) is not"},
      {"scenario name not UTF-8", "name: \xed\xa0\x80\nservices: []\n",
       "s.yaml:1: field 'name': must be valid UTF-8; byte 1 (0xed) is not"},
      {"quoted rate", svc("{name: a, model: m, rate_rps: \"829\", slo_ms: 1}"),
       "s.yaml:3: field 'rate_rps': expected a number, got the quoted string '829'"},
      {"list rate", svc("{name: a, model: m, rate_rps: [1], slo_ms: 1}"),
       "s.yaml:3: field 'rate_rps': expected a number, got a sequence"},
      {"null slo", kHead + "  - name: a\n    model: m\n    rate_rps: 1\n    slo_ms:\n",
       "s.yaml:7: field 'slo_ms': expected a number, got null"},
      {"model is a map", svc("{name: a, model: {x: 1}, rate_rps: 1, slo_ms: 1}"),
       "s.yaml:3: field 'model': expected a string, got a mapping"},
      {"empty name", svc("{name: '', model: m, rate_rps: 1, slo_ms: 1}"),
       "s.yaml:3: field 'name': must not be empty"},
      {"duplicate service",
       kHead + "  - {name: a, model: m, rate_rps: 1, slo_ms: 1}\n" +
           "  - {name: a, model: n, rate_rps: 2, slo_ms: 2}\n",
       "s.yaml:4: field 'name': duplicate service name 'a' (first at line 3)"},
      {"syntax error", "services: [\n", "s.yaml:2: YAML syntax error: "},
      // yaml-cpp 0.7's LoadAll loops forever (allocating) on this; Load reads it as empty.
      {"stray comma", ",name: X\nservices: []\n", "s.yaml:1: YAML syntax error: unexpected ','"},
      {"two documents", "services: []\n---\nname: X\n",
       "s.yaml:3: field '---': a second YAML document"},
  };
  for (const Case& c : cases) {
    Result<Scenario> r(Status::Internal("not run"));
    EXPECT_NO_THROW(r = ParseScenarioYaml(c.text, "s.yaml")) << c.name;
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_TRUE(r.status().message().starts_with(c.message))
        << c.name << "\n  got:  " << r.status().message() << "\n  want: " << c.message;
  }
}

// Deep nesting (issue 17) is an error naming the file, the line and the
// path, from flow and block YAML alike, never yaml-cpp's "bad file" or a
// crash; a second document is reported without being parsed.
TEST(ScenarioYaml, DeepNestingIsAClearErrorWithFileAndLine) {
  std::string block = "services:\n";
  for (int i = 0; i < 1000; ++i) block += std::string(2 * i + 2, ' ') + "-\n";
  std::string indent = "name: x\nservices:\n";
  for (int i = 0; i < 1000; ++i) indent += std::string(i + 2, ' ') + "a:\n";
  const struct {
    std::string name, text, message;
  } cases[] = {
      {"flow sequences", "services: " + std::string(100000, '[') + std::string(100000, ']'),
       "s.yaml:1: field 'services[0][0][0]"},
      {"flow mappings",
       "services: " +
           [] {
             std::string s;
             for (int i = 0; i < 100000; ++i) s += "{a: ";
             return s + "1" + std::string(100000, '}');
           }(),
       "s.yaml:1: field 'services.a.a.a"},
      {"unclosed", "services: " + std::string(100000, '['), "s.yaml:1: field 'services[0]"},
      {"block sequences", block, "s.yaml:65: field 'services[0][0][0]"},
      {"block mappings", indent, "s.yaml:66: field 'services.a.a.a"},
      {"deep second document", "services: []\n---\n" + std::string(100000, '['),
       "s.yaml:3: field '---': a second YAML document"},
  };
  for (const auto& c : cases) {
    Result<Scenario> r(Status::Internal("not run"));
    EXPECT_NO_THROW(r = ParseScenarioYaml(c.text, "s.yaml")) << c.name;
    ASSERT_FALSE(r.ok()) << c.name;
    const std::string& got = r.status().message();
    EXPECT_TRUE(got.starts_with(c.message)) << c.name << "\n  got:  " << got;
    EXPECT_EQ(got.find("bad file"), std::string::npos) << c.name;
    if (c.name != "deep second document") {
      EXPECT_NE(got.find("nested deeper than 64 levels"), std::string::npos)
          << c.name << ": " << got;
    }
  }
}

// Anchors and aliases read as yaml-cpp's YAML::Load read them.
TEST(ScenarioYaml, AliasesReadAsTheirAnchors) {
  Result<Scenario> r = ParseScenarioYaml(
      "services:\n"
      "  - &base {name: a, model: resnet50, rate_rps: &rate 10, slo_ms: 100}\n"
      "  - {name: b, model: resnet50, rate_rps: *rate, slo_ms: 50}\n",
      "s.yaml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->services.size(), 2u);
  EXPECT_EQ(r->services[1].rate_rps, 10);
  EXPECT_EQ(r->services[1].line, 3);
}

TEST(ScenarioYaml, ParsesAPricedPool) {
  Result<Scenario> r = ParseScenarioYaml(
      "pool:\n"
      "  - {gpu: A100-80GB, price_per_hour: 4.1}\n"
      "  - {gpu: h100-80gb, price_per_hour: 6.98, max_count: 8}\n"
      "services:\n"
      "  - {name: a, model: resnet50, rate_rps: 10, slo_ms: 100}\n",
      "s.yaml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->gpu.empty());
  ASSERT_EQ(r->pool.size(), 2u);
  EXPECT_EQ(r->pool[0].gpu, "a100-80gb");  // as the catalog spells it
  EXPECT_DOUBLE_EQ(r->pool[0].price_per_hour, 4.1);
  EXPECT_EQ(r->pool[0].max_count, 0);
  EXPECT_EQ(r->pool[0].line, 2);
  EXPECT_EQ(r->pool[1].gpu, "h100-80gb");
  EXPECT_EQ(r->pool[1].max_count, 8);
}

TEST(ScenarioYaml, LoadMissingFileIsNotFound) {
  Result<Scenario> r = LoadScenarioYaml("/nonexistent/tessera/s.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "/nonexistent/tessera/s.yaml: no such file or directory");
}

TEST(ScenarioYaml, LoadNamesTheFileInMessages) {
  const fs::path dir = FreshTestDir();
  WriteTextFile(dir / "bad.yaml", "services:\n  - {name: a, model: m, rate_rps: -5, slo_ms: 1}\n");
  Result<Scenario> r = LoadScenarioYaml((dir / "bad.yaml").string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            (dir / "bad.yaml").string() +
                ":2: field 'rate_rps': must be a finite number in (0, 1e+07], got '-5'");
  fs::remove_all(dir);
}

// ---- ValidateScenario, ReplicateScenario ----------------------------------

Scenario TwoServices() {
  Scenario s;
  s.name = "two";
  s.source = "two.yaml";
  s.services = {{"a", "resnet50", 100, 50, 3}, {"b", "vgg19", 200, 80, 4}};
  return s;
}

TEST(ScenarioValidate, AcceptsAValidScenarioAndNamesTheFault) {
  EXPECT_TRUE(ValidateScenario(TwoServices()).ok());
  struct Case {
    std::string name;
    void (*edit)(Scenario&);
    std::string message;
  };
  const std::vector<Case> cases = {
      {"no service", [](Scenario& s) { s.services.clear(); },
       "two.yaml: field 'services': empty scenario"},
      {"empty name", [](Scenario& s) { s.services[1].name = ""; },
       "two.yaml:4: field 'name': must not be empty"},
      {"empty model", [](Scenario& s) { s.services[0].model = ""; },
       "two.yaml:3: field 'model': must not be empty"},
      {"NaN rate", [](Scenario& s) { s.services[0].rate_rps = std::nan(""); },
       "two.yaml:3: field 'rate_rps': must be a finite number in (0, 1e+07], got nan"},
      {"rate 1e308", [](Scenario& s) { s.services[0].rate_rps = 1e308; },
       "two.yaml:3: field 'rate_rps': must be a finite number in (0, 1e+07], got 1e+308"},
      {"name not UTF-8", [](Scenario& s) { s.services[1].name = "b\x80"; },
       "two.yaml:4: field 'name': must be valid UTF-8; byte 2 (0x80) is not"},
      {"too many services",
       [](Scenario& s) {
         for (int k = 0; k < 100'000; ++k) s.services.push_back({std::to_string(k), "m", 1, 1, 0});
       },
       "two.yaml: field 'services': 100002 services; a scenario holds an integer in [1, 100000]"},
      {"pool price 1e25",
       [](Scenario& s) { s.pool = {{.gpu = "a100-80gb", .price_per_hour = 1e25, .line = 2}}; },
       "two.yaml:2: field 'price_per_hour': must be a finite number in [0.001, 100000], got 1e+25"},
      {"zero slo", [](Scenario& s) { s.services[1].slo_ms = 0; },
       "two.yaml:4: field 'slo_ms': must be a finite number in [0.01, 3.6e+06], got 0"},
      {"duplicate", [](Scenario& s) { s.services[1].name = "a"; },
       "two.yaml:4: field 'name': duplicate service name 'a' (first at two.yaml:3)"},
      {"built in code",
       [](Scenario& s) { s.source = "", s.services[0].line = 0, s.services[0].slo_ms = -1; },
       "scenario: field 'slo_ms': must be a finite number in [0.01, 3.6e+06], got -1"},
  };
  for (const Case& c : cases) {
    Scenario s = TwoServices();
    c.edit(s);
    const Status status = ValidateScenario(s);
    ASSERT_FALSE(status.ok()) << c.name;
    EXPECT_EQ(status.message(), c.message) << c.name;
  }
}

TEST(ScenarioReplicate, RenamesCopiesFromTwoOn) {
  const Scenario three = ReplicateScenario(TwoServices(), 3);
  std::vector<std::string> names;
  for (const Service& s : three.services) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "a#2", "b#2", "a#3", "b#3"}));
  EXPECT_EQ(three.services[4].model, "resnet50");
  EXPECT_EQ(three.services[5].rate_rps, 200);
  EXPECT_EQ(three.services[5].slo_ms, 80);
  EXPECT_TRUE(ValidateScenario(three).ok());
  EXPECT_EQ(ReplicateScenario(TwoServices(), 1).services.size(), 2u);
  // ParvaGPU's scalability study: S5 x 10 = 110 services.
  Scenario eleven;
  for (const std::string& m : ParvaModelColumns()) eleven.services.push_back({m, m, 1, 1, 0});
  EXPECT_EQ(ReplicateScenario(eleven, 10).services.size(), 110u);
}

// ---- ParvaGPU SLO rows ----------------------------------------------------

TEST(ScenarioParva, ModelColumnsAreInFileOrder) {
  EXPECT_EQ(ParvaModelColumns(),
            (std::vector<std::string>{"bert", "densenet121", "densenet169", "densenet201",
                                      "inceptionv3", "mobilenetv2", "resnet101", "resnet152",
                                      "resnet50", "vgg16", "vgg19"}));
}

// Two rows in the artifact's style: CRLF, no final newline, N/A and 0 absent.
const std::string kRates =
    "19,353,N/A,N/A,460,677,N/A,N/A,829,N/A,354\r\n"
    "19,353,308,276,460,677,393,281,829,410,0";
const std::string kSlos =
    "6434,183,N/A,N/A,418.5,167,N/A,N/A,204.5,N/A,396.5\r\n"
    "6434,183,216.5,168.5,418.5,167,211.5,212.5,204.5,399.5,N/A";

TEST(ScenarioParva, ImportsOneRow) {
  const fs::path dir = FreshTestDir();
  WriteTextFile(dir / "SLO_req_rate.csv", kRates);
  WriteTextFile(dir / "SLO_latency.csv", kSlos);
  Result<Scenario> s = ImportParvaSloRow(dir.string(), 1);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->name, "ParvaGPU row 1");
  EXPECT_EQ(s->gpu, "a100-80gb");
  ASSERT_EQ(s->services.size(), 6u);
  EXPECT_EQ(s->services[0].name, "bert");
  EXPECT_EQ(s->services[0].model, "bert-large");
  EXPECT_EQ(s->services[2].name, "inceptionv3");
  EXPECT_EQ(s->services[2].slo_ms, 418.5);  // not truncated: that is a planner rule
  EXPECT_EQ(s->services[4].name, "resnet50");
  EXPECT_EQ(s->services[4].rate_rps, 829);
  Result<Scenario> row2 = ImportParvaSloRow(dir.string(), 2);
  ASSERT_TRUE(row2.ok()) << row2.status().ToString();
  EXPECT_EQ(row2->services.size(), 10u);  // vgg19 is 0 / N/A there
  fs::remove_all(dir);
}

TEST(ScenarioParva, ErrorMessagesNameFileLineAndField) {
  const fs::path dir = FreshTestDir();
  const std::string rates = (dir / "SLO_req_rate.csv").string();
  const std::string slos = (dir / "SLO_latency.csv").string();
  struct Case {
    std::string name, rates, slos;
    int row;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"row 0", kRates, kSlos, 0, rates + ": row 0 is out of range: the file has 2 rows"},
      {"row 3", kRates, kSlos, 3, rates + ": row 3 is out of range: the file has 2 rows"},
      {"ten columns", "1,2,3,4,5,6,7,8,9,10\n", kSlos, 1,
       rates + ":1: field 'row': expected 11 columns (bert,densenet121,densenet169,densenet201,"
               "inceptionv3,mobilenetv2,resnet101,resnet152,resnet50,vgg16,vgg19), got 10: "
               "'1,2,3,4,5,6,7,8,9,10'"},
      {"negative rate",
       "19,353,N/A,N/A,460,677,N/A,N/A,-829,N/A,354\n" + kRates.substr(kRates.find('\n') + 1),
       kSlos, 1,
       rates + ":1: field 'resnet50': must be N/A, 0 (absent) or a finite number in (0, 1e+07], "
               "got '-829'"},
      {"rate 1e308",
       "19,353,N/A,N/A,460,677,N/A,N/A,1e308,N/A,354\n" + kRates.substr(kRates.find('\n') + 1),
       kSlos, 1,
       rates + ":1: field 'resnet50': must be N/A, 0 (absent) or a finite number in (0, 1e+07], "
               "got '1e308'"},
      {"text slo", kRates,
       "6434,183,N/A,N/A,418.5,fast,N/A,N/A,204.5,N/A,396.5\r\n" +
           kSlos.substr(kSlos.find('\n') + 1),
       1,
       slos + ":1: field 'mobilenetv2': must be N/A, 0 (absent) or a finite number in [0.01, "
              "3.6e+06], got 'fast'"},
      {"NaN slo", kRates,
       "6434,183,N/A,N/A,418.5,NaN,N/A,N/A,204.5,N/A,396.5\r\n" +
           kSlos.substr(kSlos.find('\n') + 1),
       1,
       slos + ":1: field 'mobilenetv2': must be N/A, 0 (absent) or a finite number in [0.01, "
              "3.6e+06], got 'NaN'"},
      {"presence differs", kRates,
       "6434,183,1,N/A,418.5,167,N/A,N/A,204.5,N/A,396.5\r\n" + kSlos.substr(kSlos.find('\n') + 1),
       1, slos + ":1: field 'densenet169': present here but absent (N/A or 0) in " + rates + ":1"},
      {"row counts differ", kRates, kSlos.substr(0, kSlos.find('\r')), 1,
       slos + ": 1 rows but " + rates + " has 2"},
      {"blank row inside", "\n" + kRates, "\n" + kSlos, 1,
       rates + ":1: field 'row': expected 11 columns"},
      {"empty row", "0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A",
       "N/A,N/A,N/A,N/A,N/A,N/A,N/A,"
       "N/A,N/A,N/A,N/A",
       1, rates + ":1: field 'row': empty scenario: every column is N/A or 0 in this row"},
  };
  for (const Case& c : cases) {
    WriteTextFile(rates, c.rates);
    WriteTextFile(slos, c.slos);
    Result<Scenario> r = ImportParvaSloRow(dir.string(), c.row);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_TRUE(r.status().message().starts_with(c.message))
        << c.name << "\n  got:  " << r.status().message() << "\n  want: " << c.message;
  }
  fs::remove(slos);
  Result<Scenario> missing = ImportParvaSloRow(dir.string(), 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), slos + ": no such file or directory");
  fs::remove_all(dir);
}

// Rows 1..6 of the artifact are ParvaGPU's Table IV, and equal the bundled
// examples/scenarios/s1.yaml .. s6.yaml.
TEST(ScenarioParvaConformance, RowsMatchTableIvAndTheBundledExamples) {
  TESSERA_SKIP_WITHOUT_SHARED_DATA("parvagpu/SLO");
  const std::string dir = testing::SharedDataPath("parvagpu/SLO");
  // data/parvagpu/README.md: active services and total request rate per row.
  const std::array<size_t, 6> services = {6, 11, 11, 11, 11, 11};
  const std::array<double, 6> totals = {2692, 4360, 8716, 13071, 26229, 39342};
  for (int row = 1; row <= 6; ++row) {
    SCOPED_TRACE("row " + std::to_string(row));
    Result<Scenario> imported = ImportParvaSloRow(dir, row);
    ASSERT_TRUE(imported.ok()) << imported.status().ToString();
    EXPECT_EQ(imported->services.size(), services[row - 1]);
    double total = 0;
    for (const Service& s : imported->services) total += s.rate_rps;
    EXPECT_EQ(total, totals[row - 1]);

    const std::string path =
        testing::SourcePath("examples/scenarios/s" + std::to_string(row) + ".yaml");
    Result<Scenario> example = LoadScenarioYaml(path);
    ASSERT_TRUE(example.ok()) << example.status().ToString();
    EXPECT_EQ(example->name, "S" + std::to_string(row));
    EXPECT_EQ(example->gpu, "a100-80gb");
    ASSERT_EQ(example->services.size(), imported->services.size());
    for (size_t i = 0; i < example->services.size(); ++i) {
      const Service& want = imported->services[i];
      const Service& got = example->services[i];
      EXPECT_EQ(got.name, want.name);
      EXPECT_EQ(got.model, want.model);
      EXPECT_EQ(got.rate_rps, want.rate_rps) << want.name;
      EXPECT_EQ(got.slo_ms, want.slo_ms) << want.name;
    }
  }
  Result<Scenario> seven = ImportParvaSloRow(dir, 7);
  ASSERT_FALSE(seven.ok());
  EXPECT_NE(seven.status().message().find("row 7 is out of range: the file has 6 rows"),
            std::string::npos);
}

// ---- Fuzz -----------------------------------------------------------------

TEST(ScenarioFuzz, YamlNeverCrashesOrThrows) {
  std::mt19937 rng(20240917);
  int errors = 0;
  constexpr int kRuns = 3000;
  for (int i = 0; i < kRuns; ++i) {
    const std::string mutant = testing::Mutate(kYaml, rng, kYamlMutations);
    EXPECT_NO_THROW(ExpectValueOrNamedError(ParseScenarioYaml(mutant, "fuzz.yaml"),
                                            "fuzz.yaml:", mutant, errors));
  }
  EXPECT_GT(errors, kRuns / 10);
  EXPECT_LT(errors, kRuns);
}

TEST(ScenarioFuzz, SloRowsNeverCrashOrThrow) {
  const fs::path dir = FreshTestDir();
  std::mt19937 rng(5);
  int errors = 0;
  constexpr int kRuns = 2000;
  for (int i = 0; i < kRuns; ++i) {
    // Mutate one file at a time so that most mutants stay close to valid.
    const bool rates_file = i % 2 == 0;
    const std::string rates = rates_file ? testing::Mutate(kRates, rng, kYamlMutations) : kRates;
    const std::string slos = rates_file ? kSlos : testing::Mutate(kSlos, rng, kYamlMutations);
    WriteTextFile(dir / "SLO_req_rate.csv", rates);
    WriteTextFile(dir / "SLO_latency.csv", slos);
    const int row = 1 + i % 3;  // 3 is out of range unless a line was duplicated
    EXPECT_NO_THROW(ExpectValueOrNamedError(ImportParvaSloRow(dir.string(), row),
                                            (dir / "SLO_").string(), rates + "\n---\n" + slos,
                                            errors));
  }
  EXPECT_GT(errors, kRuns / 10);
  EXPECT_LT(errors, kRuns);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera
