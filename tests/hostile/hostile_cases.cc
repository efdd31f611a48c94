// The generators of the hostile-input suite (hostile_case.h): for each file
// format and flag, the same families of bad values, so a new field or flag
// gets the whole family by one line here.
#include <cctype>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "hostile/hostile_case.h"

namespace tessera::hostile {
namespace {

const char kScenario[] =
    "gpu: a100-80gb\n"
    "services:\n"
    "  - {name: web, model: resnet50, rate_rps: 500, slo_ms: 200}\n"
    "  - {name: nlp, model: bert-large, rate_rps: 20, slo_ms: 400}\n";

const char kProfiles[] =
    "model,gpu,profile,batch,procs,throughput_rps,latency_ms\n"
    "resnet50,a100-80gb,1g.10gb,8,1,130,50\n"
    "resnet50,a100-80gb,7g.80gb,32,2,1500,40\n"
    "bert-large,a100-80gb,7g.80gb,4,1,60,60\n";

const char kCoefficients[] = R"({
 "resnet50": {"n_k": 20, "k_sch_ms": 0.03, "d_load": 602112, "d_feedback": 4000,
   "k": [0.004, 8.7, 23.7, 0.05, 0.34], "alpha_cache": 0.002,
   "power_coef": [0.02, 37.1], "cache_coef": [0.003, 2.0]},
 "hardware": {"gpu": "v100-16gb", "F": 1530, "P": 300, "p_idle": 53.5, "unit": 2.5,
   "B_pcie": 10000000, "alpha_f": -1.02, "alpha_sch": 0.0047, "beta_sch": -0.009}
})";

const char kMpsScenario[] =
    "gpu: v100-16gb\n"
    "services:\n"
    "  - {name: w1, model: resnet50, rate_rps: 200, slo_ms: 40}\n";

const char kNodes[] =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "node-0,64000,262144,2,V100M16\n"
    "node-1,64000,262144,8,A100\n";

const char kPods[] =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
    "pod-0,12000,16384,1,1000,,LS,Running,0,12537,0\n"
    "pod-1,6000,12288,1,460,,LS,Running,427,12902,427\n"
    "pod-2,4000,8192,1,250,,BE,Running,900,2000,900\n";

const char kSamples[] =
    "model,quantity,batch,resource_pct,value\n"
    "resnet50,active_ms,1,10,7.5\n"
    "resnet50,active_ms,4,50,9.1\n"
    "resnet50,active_ms,8,100,8.2\n";

// Numbers and words that are no good value of a numeric field, and some that
// are legal but extreme.
const std::vector<std::pair<std::string, std::string>>& BadNumbers() {
  static const std::vector<std::pair<std::string, std::string>> values = {
      {"neg", "-1"},         {"zero", "0"},         {"huge", "1e308"},
      {"overflow", "1e400"}, {"tiny", "1e-300"},    {"nan", ".nan"},
      {"inf", ".inf"},       {"ninf", "-.inf"},     {"text", "fast"},
      {"quoted", "\"12\""},  {"list", "[1]"},       {"map", "{a: 1}"},
      {"empty", "''"},       {"big", "1e12"},       {"int31", "2147483648"},
      {"hex", "0x1F"},       {"frac", "0.0000001"}, {"many", "123456789012345678901234567890"},
  };
  return values;
}

// The same for CSV cells and flags (no YAML syntax).
const std::vector<std::pair<std::string, std::string>>& BadCells() {
  static const std::vector<std::pair<std::string, std::string>> values = {
      {"neg", "-1"},           {"zero", "0"},
      {"huge", "1e308"},       {"overflow", "1e400"},
      {"tiny", "1e-300"},      {"nan", "nan"},
      {"inf", "inf"},          {"text", "fast"},
      {"empty", ""},           {"big", "1e12"},
      {"int31", "2147483648"}, {"frac", "2.5"},
      {"space", " 7 "},        {"many", "123456789012345678901234567890"},
  };
  return values;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  if (at == std::string::npos) throw std::logic_error("hostile case: no '" + from + "'");
  return s.replace(at, from.size(), to);
}

// `depth` opening brackets, then as many closing ones.
std::string Nested(char open, char close, size_t depth) {
  return std::string(depth, open) + std::string(depth, close);
}

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Seeded garbage bytes.
std::string Garbage(unsigned seed, size_t n) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xFF);
  return s;
}

// Structural damage any text format can suffer, applied to `good`.
std::vector<std::pair<std::string, std::string>> Damaged(const std::string& good) {
  std::vector<std::pair<std::string, std::string>> out = {
      {"empty", ""},
      {"blank", "\n\n   \n"},
      {"garbage", Garbage(1, 4096)},
      {"garbage_small", Garbage(2, 17)},
      {"nul_inside",
       good.substr(0, good.size() / 2) + std::string(1, '\0') + good.substr(good.size() / 2)},
      {"bad_utf8",
       good.substr(0, good.size() / 3) + "\xC3\x28\xFF\xFE" + good.substr(good.size() / 3)},
      {"bom_crlf", "\xEF\xBB\xBF" + Replace(good, "\n", "\r\n")},
      {"doubled", good + good},
  };
  for (int cut : {1, 5, 20, 50, 80, 95}) {
    out.push_back({"cut" + std::to_string(cut), good.substr(0, good.size() * cut / 100)});
  }
  return out;
}

void Add(std::vector<HostileCase>& out, HostileCase c) { out.push_back(std::move(c)); }

// ---- Scenario YAML ------------------------------------------------------------

void ScenarioCases(std::vector<HostileCase>& out) {
  const std::string plan = "plan --scenario s.yaml -o out.json --format json";
  for (const char* field : {"rate_rps", "slo_ms"}) {
    for (const auto& [tag, value] : BadNumbers()) {
      const std::string from = std::string(field) + (field[0] == 'r' ? ": 500" : ": 200");
      Add(out, {std::string("scenario_") + field + "_" + tag,
                {{"s.yaml", Replace(kScenario, from, std::string(field) + ": " + value)}},
                plan,
                "s.yaml",
                {0, 2, 3}});
    }
  }
  for (const auto& [tag, text] : Damaged(kScenario)) {
    Add(out, {"scenario_" + tag, {{"s.yaml", text}}, plan, "s.yaml", {0, 2}});
  }
  const std::string head = "services:\n";
  const std::vector<std::pair<std::string, FileText>> structural = {
      {"deep_flow", FileText([] { return "services: " + Nested('[', ']', 100000) + "\n"; })},
      {"deep_block", FileText([] {
         std::string s = "services:\n";
         for (int i = 0; i < 3000; ++i) s += std::string(2 * i + 2, ' ') + "- \n";
         return s;
       })},
      {"deep_map", FileText([] { return "services: " + Nested('{', '}', 50000) + "\n"; })},
      {"dup_key", Replace(kScenario, "rate_rps: 500", "rate_rps: 500, rate_rps: 600")},
      {"dup_service",
       std::string(kScenario) + "  - {name: web, model: resnet50, rate_rps: 5, slo_ms: 200}\n"},
      {"services_scalar", "services: 5\n"},
      {"services_string", "services: \"x\"\n"},
      {"name_list", head + "  - {name: [1], model: resnet50, rate_rps: 5, slo_ms: 200}\n"},
      {"model_map", head + "  - {name: a, model: {x: 1}, rate_rps: 5, slo_ms: 200}\n"},
      {"unknown_key", Replace(kScenario, "gpu:", "gpuu:")},
      {"unknown_model", Replace(kScenario, "model: resnet50", "model: resnet5000")},
      {"unknown_gpu", Replace(kScenario, "a100-80gb", "a100-81gb")},
      {"gpu_no_mig", Replace(kScenario, "a100-80gb", "v100-16gb")},
      {"long_name", FileText([] {
         return Replace(kScenario, "name: web", "name: " + std::string(100000, 'w'));
       })},
      {"nul_name", Replace(kScenario, "name: web", std::string("name: \"w\\0b\""))},
      {"utf8_name", Replace(kScenario, "name: web", "name: \"w\xC3\x28\"")},
      {"two_docs", std::string(kScenario) + "---\n" + kScenario},
      {"anchor_bomb",
       "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nservices: [*c, *c, *c]\n"},
      {"tab_indent", Replace(kScenario, "  - {name: nlp", "\t- {name: nlp")},
      {"pool_and_gpu", std::string(kScenario) + "pool:\n  - {gpu: a100-80gb, price_per_hour: 4}\n"},
  };
  for (const auto& [tag, text] : structural) {
    Add(out, {"scenario_" + tag, {{"s.yaml", text}}, plan, "s.yaml", {0, 2}});
  }
  // A pool: prices and caps.
  const std::string pooled =
      "pool:\n  - {gpu: a100-80gb, price_per_hour: 4.1, max_count: 16}\n"
      "  - {gpu: h100-80gb, price_per_hour: 7}\n" +
      std::string(kScenario).substr(std::string(kScenario).find("services:"));
  for (const auto& [tag, value] : BadNumbers()) {
    Add(out, {"pool_price_" + tag,
              {{"s.yaml", Replace(pooled, "price_per_hour: 4.1", "price_per_hour: " + value)}},
              plan,
              "s.yaml",
              {0, 2, 3}});
    Add(out, {"pool_max_count_" + tag,
              {{"s.yaml", Replace(pooled, "max_count: 16", "max_count: " + value)}},
              plan,
              "s.yaml",
              {0, 2, 3}});
  }
  // Scale: many services, planned by a heuristic (the exact planner's time at
  // this scale is issue 22's).
  const FileText many([] {
    std::string text = "gpu: a100-80gb\nservices:\n";
    for (int i = 0; i < 10000; ++i) {
      text += "  - {name: s" + std::to_string(i) +
              ", model: resnet50, rate_rps: " + std::to_string(50 + i % 900) + ", slo_ms: 300}\n";
    }
    return text;
  });
  Add(out, {"scenario_10k_services_parva",
            {{"s.yaml", many}},
            "plan --scenario s.yaml --planner parva --format json -o out.json",
            "",
            {0}});
  Add(out, {"scenario_10k_services_validate_missing",
            {{"s.yaml", many}},
            "validate --scenario s.yaml --deployment none.json",
            "none.json",
            {2}});
}

// ---- Profiles CSV -------------------------------------------------------------

void ProfileCases(std::vector<HostileCase>& out) {
  const std::string plan =
      "plan --scenario s.yaml --profiles p.csv --planner parva -o out.json --format json";
  const std::string row = "resnet50,a100-80gb,7g.80gb,32,2,1500,40";
  const char* fields[] = {"batch", "procs", "throughput_rps", "latency_ms"};
  for (int f = 0; f < 4; ++f) {
    for (const auto& [tag, value] : BadCells()) {
      std::vector<std::string> cells = {"resnet50", "a100-80gb", "7g.80gb", "32",
                                        "2",        "1500",      "40"};
      cells[3 + f] = value;
      std::string bad;
      for (size_t i = 0; i < cells.size(); ++i) bad += (i ? "," : "") + cells[i];
      Add(out, {std::string("profiles_") + fields[f] + "_" + tag,
                {{"s.yaml", kScenario}, {"p.csv", Replace(kProfiles, row, bad)}},
                plan,
                "p.csv",
                {0, 2, 3}});
    }
  }
  for (const auto& [tag, text] : Damaged(kProfiles)) {
    Add(out, {"profiles_" + tag, {{"s.yaml", kScenario}, {"p.csv", text}}, plan, "p.csv", {0, 2}});
  }
  Add(out, {"profiles_dir_empty",
            {{"s.yaml", kScenario}, {"d/.keep", ""}},
            "plan --scenario s.yaml --profiles d -o out.json",
            "d",
            {2}});
  Add(out, {"profiles_missing",
            {{"s.yaml", kScenario}},
            "plan --scenario s.yaml --profiles nope.csv -o out.json",
            "nope.csv",
            {2}});
}

// ---- Deployment JSON (validate, simulate) ---------------------------------------

void DeploymentCases(std::vector<HostileCase>& out) {
  const std::string good = ReadSource("tests/golden/deployment_small.json");
  const std::string scenario =
      "gpu: a100-80gb\nservices:\n"
      "  - {name: resnet50, model: resnet50, rate_rps: 829, slo_ms: 204.5}\n"
      "  - {name: densenet121, model: densenet121, rate_rps: 353, slo_ms: 183}\n"
      "  - {name: bert, model: bert-large, rate_rps: 19, slo_ms: 20}\n";
  const std::vector<std::pair<std::string, std::string>> damaged = Damaged(good);
  std::vector<std::pair<std::string, FileText>> bad(damaged.begin(), damaged.end());
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"\"batch\": 32", "batch"},
      {"\"start\": 4", "start"},
      {"\"procs\": 2", "procs"},
      {"\"throughput_rps\": 412.3", "throughput_rps"},
      {"\"latency_ms\": 58.1", "latency_ms"},
      {"\"rate_rps\": 829", "rate_rps"},
      {"\"gpus\": 2", "gpus"},
      {"\"factor\": 0.5", "factor"},
  };
  const std::vector<std::pair<std::string, std::string>> values = {
      {"neg", "-1"},           {"huge", "1e308"},
      {"int31", "2147483648"}, {"frac", "2.5"},
      {"text", "\"x\""},       {"null", "null"},
      {"list", "[1]"},         {"deep", Nested('[', ']', 5000)},
  };
  for (const auto& [from, field] : fields) {
    for (const auto& [tag, value] : values) {
      const std::string key = from.substr(0, from.find(':'));
      bad.push_back({field + "_" + tag, Replace(good, from, key + ": " + value)});
    }
  }
  bad.push_back({"deep_reason", FileText([good] {
                   return Replace(
                       good, "\"status\": \"infeasible\",",
                       "\"status\": \"infeasible\", \"x\": " + Nested('[', ']', 200000) + ",");
                 })});
  bad.push_back({"dup_key", Replace(good, "\"planner\": \"parva\",",
                                    "\"planner\": \"parva\", \"planner\": \"x\",")});
  bad.push_back({"nan_literal", Replace(good, "\"latency_ms\": 58.1", "\"latency_ms\": NaN")});
  bad.push_back({"gpus_object", Replace(good, "\"gpus\": [", "\"gpus\": {\"a\": [")});
  bad.push_back({"sharing_bad", Replace(good, "\"sharing\": \"mig+mps\"", "\"sharing\": \"x\"")});
  bad.push_back({"router_bad", Replace(good, "\"router\": \"weighted\"", "\"router\": 7")});
  for (const auto& [tag, text] : bad) {
    Add(out, {"validate_" + tag,
              {{"s.yaml", scenario}, {"d.json", text}},
              "validate --scenario s.yaml --deployment d.json",
              "d.json",
              {0, 2}});
    Add(out, {"simulate_" + tag,
              {{"s.yaml", scenario}, {"d.json", text}},
              "simulate --scenario s.yaml --deployment d.json --duration 2s -o r.txt",
              "d.json",
              {0, 2}});
  }
}

// ---- Transition JSON (transition check) ----------------------------------------

// A transition of tests/golden/deployment_small.json onto itself: GPU 1's
// resnet50 instance destroyed, then created again.
const char kTransition[] = R"({
  "format": "tessera-transition", "version": 1, "gpu": "a100-80gb", "spare_gpus": 0,
  "gpu_map": {"0": 0, "1": 1},
  "phases": [
    {"steps": [{"id": "s1", "action": "destroy", "gpu": 1, "profile": "1g.10gb", "start": 0,
                "service": "resnet50"}]},
    {"steps": [{"id": "s2", "action": "create", "gpu": 1, "profile": "1g.10gb", "start": 0,
                "service": "resnet50", "model": "resnet50", "batch": 8, "procs": 1,
                "throughput_rps": 130.25}]}
  ],
  "summary": {"steps": 2, "phases": 2, "gpus_touched": 1, "peak_gpus": 2,
              "min_capacity_ratio": 0}
})";

void TransitionCases(std::vector<HostileCase>& out) {
  const std::string plan = ReadSource("tests/golden/deployment_small.json");
  const std::string good = kTransition;
  const std::string check = "transition check --from a.json --to a.json --plan t.json";
  std::vector<std::pair<std::string, std::string>> bad = Damaged(good);
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"\"gpu\": 1", "gpu"},
      {"\"batch\": 8", "batch"},
      {"\"spare_gpus\": 0", "spare_gpus"},
      {"\"min_capacity_ratio\": 0", "min_capacity_ratio"},
  };
  const std::vector<std::pair<std::string, std::string>> values = {
      {"neg", "-1"},   {"huge", "1e308"}, {"int31", "2147483648"},
      {"frac", "2.5"}, {"text", "\"x\""}, {"deep", Nested('[', ']', 5000)},
  };
  for (const auto& [from, field] : fields) {
    for (const auto& [tag, value] : values) {
      const std::string key = from.substr(0, from.find(':'));
      bad.push_back({field + "_" + tag, Replace(good, from, key + ": " + value)});
    }
  }
  bad.push_back({"version_2", Replace(good, "\"version\": 1", "\"version\": 2")});
  bad.push_back({"action_bad", Replace(good, "\"action\": \"destroy\"", "\"action\": \"move\"")});
  bad.push_back(
      {"nan_literal", Replace(good, "\"throughput_rps\": 130.25", "\"throughput_rps\": NaN")});
  bad.push_back({"dup_key", Replace(good, "\"version\": 1,", "\"version\": 1, \"version\": 1,")});
  bad.push_back({"phases_object", Replace(good, "\"phases\": [", "\"phases\": {\"a\": [")});
  for (const auto& [tag, text] : bad) {
    Add(out, {"transition_check_" + tag,
              {{"a.json", plan}, {"t.json", text}},
              check,
              "t.json",
              {0, 2, 3}});
  }
  Add(out, {"transition_check_plan_garbage",
            {{"a.json", Garbage(3, 512)}, {"t.json", good}},
            check,
            "a.json",
            {2}});
  Add(out, {"transition_check_missing_plan", {{"a.json", plan}}, check, "t.json", {2}});
}

// ---- Flags --------------------------------------------------------------------

void FlagCases(std::vector<HostileCase>& out) {
  const std::map<std::string, FileText> scenario = {{"s.yaml", kScenario}};
  const std::vector<std::pair<std::string, std::string>> values = {
      {"neg", "-1"},  {"zero", "0"},  {"huge", "1e300"}, {"tiny", "1e-300"},
      {"nan", "nan"}, {"inf", "inf"}, {"text", "abc"},   {"int64", "18446744073709551617"},
  };
  struct FlagOf {
    std::string command, flag, suffix;
  };
  const std::vector<FlagOf> flags = {
      {"plan --scenario s.yaml -o out.json", "--time-limit", ""},
      {"plan --scenario s.yaml -o out.json", "--seed", ""},
      {"plan --scenario s.yaml -o out.json", "--latency-factor", ""},
      {"plan --scenario s.yaml -o out.json", "--replicate", ""},
      {"plan --scenario s.yaml -o out.json --verify", "--verify-duration", ""},
      {"plan --scenario s.yaml -o out.json --planner migserving-ga", "--time-limit", ""},
      {"simulate --scenario s.yaml --deployment d.json -o r.txt", "--duration", ""},
      {"simulate --scenario s.yaml --deployment d.json -o r.txt --arrivals bursty",
       "--burst-on-share", ""},
      {"simulate --scenario s.yaml --deployment d.json -o r.txt --arrivals bursty", "--burst-on-s",
       ""},
      {"simulate --scenario s.yaml --deployment d.json -o r.txt", "--max-queue-delay-ms", ""},
      {"simulate --scenario s.yaml --deployment d.json -o r.txt", "--drop-after-ms", ""},
      {"simulate --scenario s.yaml --deployment d.json -o r.txt", "--variability", "lognormal:"},
      {"gslice --scenario s.yaml -o r.txt --duration 5s", "--period", ""},
      {"gslice --scenario s.yaml -o r.txt", "--duration", ""},
      {"gslice --scenario s.yaml -o r.txt --duration 5s", "--initial-share", ""},
      {"gslice --scenario s.yaml -o r.txt --duration 5s", "--reload-delay", ""},
      {"replay --nodes n.csv --pods p.csv -o r.txt --policy mecc", "--mecc-window", ""},
      {"replay --nodes n.csv --pods p.csv -o r.txt --policy grmu", "--consolidate-every", ""},
      {"replay --nodes n.csv --pods p.csv -o r.txt", "--gpus-per-host", ""},
      {"replay --nodes n.csv --pods p.csv -o r.txt --policy grmu", "--heavy-share", ""},
      {"gen --preset normal-1 -o g.yaml", "--services", ""},
      {"gen --preset normal-1 -o g.yaml", "--seed", ""},
  };
  const std::string deployment = ReadSource("tests/golden/deployment_small.json");
  for (const FlagOf& f : flags) {
    for (const auto& [tag, value] : values) {
      std::string name = "flag_" + f.command.substr(0, f.command.find(' ')) + f.flag + "_" + tag;
      for (char& c : name) c = (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
      if (f.command.find("migserving") != std::string::npos) name += "_ga";
      if (f.command.find("bursty") != std::string::npos && f.flag == "--duration") name += "_b";
      std::map<std::string, FileText> files = scenario;
      files["n.csv"] = kNodes;
      files["p.csv"] = kPods;
      files["d.json"] = deployment;
      files["s.yaml"] =
          f.command.starts_with("simulate")
              ? "gpu: a100-80gb\nservices:\n"
                "  - {name: resnet50, model: resnet50, rate_rps: 829, slo_ms: 204.5}\n"
                "  - {name: densenet121, model: densenet121, rate_rps: 353, slo_ms: 183}\n"
                "  - {name: bert, model: bert-large, rate_rps: 19, slo_ms: 20}\n"
              : kScenario;
      // A flag taking a time accepts "1e300"; the word form of the same.
      Add(out, {name,
                files,
                f.command + " " + f.flag + " '" + f.suffix + value + "'",
                f.flag,
                {0, 2, 3}});
    }
  }
}

// ---- VM traces (replay) ---------------------------------------------------------

void TraceCases(std::vector<HostileCase>& out) {
  const std::string replay = "replay --nodes n.csv --pods p.csv --compare -o r.txt";
  for (const auto& [tag, text] : Damaged(kPods)) {
    Add(out, {"pods_" + tag, {{"n.csv", kNodes}, {"p.csv", text}}, replay, "p.csv", {0, 2}});
  }
  for (const auto& [tag, text] : Damaged(kNodes)) {
    Add(out, {"nodes_" + tag, {{"n.csv", text}, {"p.csv", kPods}}, replay, "n.csv", {0, 2}});
  }
  const std::string row = "pod-1,6000,12288,1,460,,LS,Running,427,12902,427";
  const char* fields[] = {"cpu_milli", "num_gpu", "gpu_milli", "creation_time", "deletion_time"};
  const int column[] = {1, 3, 4, 8, 9};
  for (int f = 0; f < 5; ++f) {
    for (const auto& [tag, value] : BadCells()) {
      std::vector<std::string> cells;
      std::stringstream ss(row);
      for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
      cells.resize(11);
      cells[column[f]] = value;
      std::string bad;
      for (size_t i = 0; i < cells.size(); ++i) bad += (i ? "," : "") + cells[i];
      Add(out, {std::string("pods_") + fields[f] + "_" + tag,
                {{"n.csv", kNodes}, {"p.csv", Replace(kPods, row, bad)}},
                replay,
                "p.csv",
                {0, 2}});
    }
  }
  for (const auto& [tag, value] : BadCells()) {
    Add(out, {"nodes_gpu_" + tag,
              {{"n.csv", Replace(kNodes, "64000,262144,8,A100", "64000,262144," + value + ",A100")},
               {"p.csv", kPods}},
              replay,
              "n.csv",
              {0, 2}});
  }
  Add(out, {"pods_huge_times",
            {{"n.csv", kNodes}, {"p.csv", Replace(kPods, "900,2000,900", "1e21,1e22,1e21")}},
            "replay --nodes n.csv --pods p.csv --policy mecc -o r.txt",
            "p.csv",
            {0, 2}});
}

// ---- iGniter coefficients, samples, MPS scenarios --------------------------------

void MpsCases(std::vector<HostileCase>& out) {
  const std::string plan = "plan --scenario s.yaml --coeffs c.json -o out.json";
  for (const auto& [tag, text] : Damaged(kCoefficients)) {
    Add(out,
        {"coeffs_" + tag, {{"s.yaml", kMpsScenario}, {"c.json", text}}, plan, "c.json", {0, 2}});
  }
  const std::vector<std::string> fields = {"\"n_k\": 20",        "\"k_sch_ms\": 0.03",
                                           "\"d_load\": 602112", "\"F\": 1530",
                                           "\"unit\": 2.5",      "\"B_pcie\": 10000000"};
  const std::vector<std::pair<std::string, std::string>> values = {
      {"neg", "-1"}, {"zero", "0"}, {"huge", "1e308"}, {"tiny", "1e-300"}, {"text", "\"x\""}};
  for (const std::string& from : fields) {
    const std::string key = from.substr(0, from.find(':'));
    const std::string name = "coeffs_" + from.substr(1, from.find('"', 1) - 1) + "_";
    for (const auto& [tag, value] : values) {
      Add(out,
          {name + tag,
           {{"s.yaml", kMpsScenario}, {"c.json", Replace(kCoefficients, from, key + ": " + value)}},
           plan,
           "c.json",
           {0, 2, 3}});
    }
    Add(out, {name + "deep",
              {{"s.yaml", kMpsScenario}, {"c.json", FileText([from, key] {
                                            return Replace(kCoefficients, from,
                                                           key + ": " + Nested('[', ']', 100000));
                                          })}},
              plan,
              "c.json",
              {0, 2, 3}});
  }
  for (const auto& [tag, value] : BadNumbers()) {
    Add(out, {"mps_rate_" + tag,
              {{"s.yaml", Replace(kMpsScenario, "rate_rps: 200", "rate_rps: " + value)},
               {"c.json", kCoefficients}},
              plan,
              "s.yaml",
              {0, 2, 3}});
  }
  for (const auto& [tag, text] : Damaged(kSamples)) {
    Add(out, {"samples_" + tag, {{"f.csv", text}}, "igniter fit f.csv -o c.json", "f.csv", {0, 2}});
  }
  for (const auto& [tag, value] : BadCells()) {
    Add(out, {"samples_value_" + tag,
              {{"f.csv", Replace(kSamples, "4,50,9.1", "4,50," + value)}},
              "igniter fit f.csv -o c.json",
              "f.csv",
              {0, 2}});
  }
}

// ---- Outputs ---------------------------------------------------------------------

// ---- compare, profiles, gpus ------------------------------------------------------

void OtherCommandCases(std::vector<HostileCase>& out) {
  const std::string compare = "compare --scenario s.yaml --repeat 1 --time-limit 1";
  for (const auto& [tag, text] : Damaged(kScenario)) {
    Add(out, {"compare_" + tag, {{"s.yaml", text}}, compare, "s.yaml", {0, 2}});
  }
  for (const auto& [tag, value] : BadNumbers()) {
    Add(out, {"compare_rate_" + tag,
              {{"s.yaml", Replace(kScenario, "rate_rps: 500", "rate_rps: " + value)}},
              compare,
              "s.yaml",
              {0, 2}});
  }
  for (const char* gpu : {"v100-16gb", "a100", "", "A100-80GB", "\x01"}) {
    std::string tag = gpu;
    for (char& c : tag) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    Add(out, {"profiles_synth_gpu_" + tag + "_" + std::to_string(out.size()),
              {},
              std::string("profiles synth --gpu '") + gpu + "' -o p.csv",
              "--gpu",
              {0, 2}});
    Add(out, {"gpus_gpu_" + tag + "_" + std::to_string(out.size()),
              {},
              std::string("gpus --gpu '") + gpu + "' --layouts",
              "--gpu",
              {0, 2}});
  }
}

void OutputCases(std::vector<HostileCase>& out) {
  const std::map<std::string, FileText> scenario = {{"s.yaml", kScenario}};
  Add(out, {"output_into_missing_dir",
            scenario,
            "plan --scenario s.yaml -o no/such/dir/o.json",
            "no/such/dir/o.json",
            {2}});
  Add(out, {"output_is_a_directory",
            {{"s.yaml", kScenario}, {"o.json/.keep", ""}},
            "plan --scenario s.yaml -o o.json",
            "o.json",
            {2}});
  Add(out, {"svg_into_missing_dir",
            scenario,
            "plan --scenario s.yaml --svg no/dir/p.svg",
            "no/dir/p.svg",
            {2}});
  Add(out, {"unknown_subcommand", scenario, "plann --scenario s.yaml", "", {2}});
  Add(out, {"unknown_flag", scenario, "plan --scenario s.yaml --colour", "--colour", {2}});
  Add(out, {"missing_scenario", {}, "plan --scenario nope.yaml", "nope.yaml", {2}});
  Add(out, {"scenario_is_dir", {{"d.yaml/.keep", ""}}, "plan --scenario d.yaml", "d.yaml", {2}});
}

}  // namespace

// ---- deploy: its flags and inputs ------------------------------------------------

// Every case is bad input, so deploy must exit 2 having written nothing
// (no --out folder either). The NodePlan parser's hostile inputs are in
// src/emit/node_plan_test.cc: no command reads a NodePlan yet.
void DeployCases(std::vector<HostileCase>& out) {
  const std::string plan = ReadSource("tests/golden/deployment_small.json");
  const std::string deploy = "deploy --deployment d.json --out o";
  const std::vector<std::pair<std::string, std::string>> values = {
      {"neg", "-1"},  {"zero", "0"},   {"huge", "1e300"},
      {"nan", "nan"}, {"text", "abc"}, {"int64", "18446744073709551617"},
  };
  for (const auto& [flag, name] : std::vector<std::pair<std::string, std::string>>{
           {"--gpus-per-node", "gpus_per_node"}, {"--base-port", "base_port"}}) {
    for (const auto& [tag, value] : values) {
      Add(out, {"deploy_" + name + "_" + tag,
                {{"d.json", plan}},
                deploy + " " + flag + " " + value,
                flag,
                {2}});
    }
  }
  const std::vector<std::tuple<std::string, std::string, std::string>> flags = {
      {"nodes_upper", "--nodes Bad_Name", "--nodes"},
      {"nodes_dash", "--nodes a,-b", "--nodes"},
      {"nodes_twice", "--nodes a,a", "--nodes"},
      {"nodes_long", "--nodes " + std::string(64, 'a'), "--nodes"},
      {"namespace_bad", "--namespace Bad", "--namespace"},
      {"mps_root_relative", "--mps-root run/mps", "--mps-root"},
      {"model_repository_empty", "--model-repository ''", "--model-repository"},
      {"driver_lib_relative", "--driver-lib-dir lib", "--driver-lib-dir"},
      {"triton_image_empty", "--triton-image ''", "--triton-image"},
      {"agent_image_space", "--agent-image 'a b'", "--agent-image"},
      {"base_port_too_high", "--base-port 65000", "base port"},
      {"format_bad", "--format yaml", "--format"},
      {"coeffs", "--coeffs c.json", "--coeffs"},
  };
  for (const auto& [tag, args, names] : flags) {
    Add(out, {"deploy_" + tag, {{"d.json", plan}}, deploy + " " + args, names, {2}});
  }
  Add(out, {"deploy_plan_garbage", {{"d.json", Garbage(5, 512)}}, deploy, "d.json", {2}});
  Add(out, {"deploy_plan_missing", {}, deploy, "d.json", {2}});
  Add(out, {"deploy_transition_garbage",
            {{"d.json", plan}, {"t.json", Garbage(6, 512)}},
            deploy + " --transition t.json",
            "t.json",
            {2}});
  Add(out, {"deploy_transition_unmapped",
            {{"d.json", plan},
             {"t.json", Replace(kTransition, "\"gpu_map\": {\"0\": 0, \"1\": 1}",
                                "\"gpu_map\": {\"0\": 0}")}},
            deploy + " --transition t.json",
            "t.json",
            {2}});
  Add(out, {"deploy_out_is_file", {{"d.json", plan}, {"o", "x"}}, deploy, "--out", {2}});
}

// ---- The node agent -----------------------------------------------------------

// The agent reads a NodePlan and a transition before it touches anything; a
// library that cannot load (the runs below name a missing one) stops it
// before its state directory is made.
void AgentCases(std::vector<HostileCase>& out) {
  const std::string good = ReadSource("tests/golden/deploy_small/nodes/node-0.json");
  const std::string agent =
      "agent --node node-0 --plan p.json --state-dir st --nvml ./no-nvml.so --once";
  std::vector<std::pair<std::string, std::string>> bad = Damaged(good);
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"\"http_port\": 20000", "http_port"},
      {"\"start\": 0", "start"},
      {"\"batch\": 8", "batch"},
      {"\"gpus_per_node\": 8", "gpus_per_node"},
      {"\"active_thread_percentage\": 50", "active_thread_percentage"},
  };
  const std::vector<std::pair<std::string, std::string>> values = {
      {"neg", "-1"},   {"huge", "1e308"}, {"int31", "2147483648"},
      {"frac", "2.5"}, {"text", "\"x\""}, {"deep", Nested('[', ']', 5000)},
  };
  for (const auto& [from, field] : fields) {
    if (good.find(from) == std::string::npos) continue;
    for (const auto& [tag, value] : values) {
      const std::string key = from.substr(0, from.find(':'));
      bad.push_back({field + "_" + tag, Replace(good, from, key + ": " + value)});
    }
  }
  bad.push_back({"format_other", Replace(good, "\"tessera-nodeplan\"", "\"tessera-transition\"")});
  bad.push_back({"dup_key", Replace(good, "\"version\": 1,", "\"version\": 1, \"version\": 1,")});
  for (const auto& [tag, text] : bad) {
    Add(out, {"agent_plan_" + tag, {{"p.json", text}}, agent, "", {2}});
  }
  for (const auto& [tag, text] : Damaged(kTransition)) {
    Add(out, {"agent_transition_" + tag,
              {{"p.json", good}, {"t.json", text}},
              agent + " --transition t.json",
              "",
              {2}});
  }
  const std::vector<std::tuple<std::string, std::string, std::string>> flags = {
      {"ready_nan", "--ready-timeout nan", "--ready-timeout"},
      {"ready_zero", "--ready-timeout 0", "--ready-timeout"},
      {"ready_huge", "--ready-timeout 1e300", "--ready-timeout"},
      {"drain_neg", "--drain-timeout -1", "--drain-timeout"},
      {"interval_tiny", "--interval 1e-300", "--interval"},
      {"phase_zero", "--transition t.json --phase 0", "--phase"},
      {"phase_huge", "--transition t.json --phase 18446744073709551617", "--phase"},
      {"phase_alone", "--phase 1", "--phase"},
      {"format_bad", "--format yaml", "--format"},
      {"node_other", "--node node-9", "node"},
  };
  for (const auto& [tag, args, names] : flags) {
    Add(out, {"agent_" + tag,
              {{"p.json", good}, {"t.json", kTransition}},
              Replace(agent, "--node node-0", "--node node-0 " + args),
              names,
              {2}});
  }
  Add(out, {"agent_nvml_missing", {{"p.json", good}}, agent, "no-nvml.so", {2}});
  Add(out, {"agent_inventory_nvml_missing",
            {},
            "agent inventory --nvml ./no-nvml.so",
            "no-nvml.so",
            {2}});
  // `agent mig create|destroy`, the DRA node plugin's one-instance calls.
  const std::vector<std::tuple<std::string, std::string, std::string>> mig = {
      {"no_subcommand", "agent mig", ""},
      {"create_no_gpu", "agent mig create --profile-id 9 --start 4", "--gpu"},
      {"create_no_start", "agent mig create --gpu 0 --profile-id 9", "--start"},
      {"create_no_profile", "agent mig create --gpu 0 --start 4", "--profile-id"},
      {"create_gpu_negative", "agent mig create --gpu -1 --profile-id 9 --start 4", "--gpu"},
      {"create_gpu_huge", "agent mig create --gpu 99999999999 --profile-id 9 --start 4", "--gpu"},
      {"create_start_eight", "agent mig create --gpu 0 --profile-id 9 --start 8", "--start"},
      {"create_start_nan", "agent mig create --gpu 0 --profile-id 9 --start nan", "--start"},
      {"create_profile_text", "agent mig create --gpu 0 --profile-id 3g --start 4", "--profile-id"},
      {"create_format_bad", "agent mig create --gpu 0 --profile-id 9 --start 4 --format yaml",
       "--format"},
      {"create_nvml_missing",
       "agent mig create --gpu 0 --profile-id 9 --start 4 --nvml ./no-nvml.so", "no-nvml.so"},
      {"destroy_no_start", "agent mig destroy --gpu 0", "--start"},
      {"destroy_profile_flag", "agent mig destroy --gpu 0 --start 0 --profile-id 9",
       "--profile-id"},
      {"destroy_nvml_missing", "agent mig destroy --gpu 0 --start 0 --nvml ./no-nvml.so",
       "no-nvml.so"},
  };
  for (const auto& [tag, args, names] : mig) {
    Add(out, {"agent_mig_" + tag, {}, args, names, {2}});
  }
}

// ---- The serving data path's control loop ----------------------------------

// `rehearse --serve`, `serve --router-agent` and `router-agent`: every bad
// flag is refused before any process starts.
void ControlLoopCases(std::vector<HostileCase>& out) {
  const std::string scenario =
      "name: pair\ngpu: a100-80gb\nservices:\n"
      "  - {name: resnet50, model: resnet50, rate_rps: 100, slo_ms: 138}\n";
  const std::string rehearse = "rehearse --serve --scenario s.yaml --duration 10s ";
  const std::vector<std::tuple<std::string, std::string, std::string>> rehearse_flags = {
      {"no_step", "", "--load-step"},
      {"step_no_colon", "--load-step resnet50@5s", "--load-step"},
      {"step_no_at", "--load-step resnet50:1.5", "--load-step"},
      {"step_nan", "--load-step resnet50:nan@5s", "--load-step"},
      {"step_zero", "--load-step resnet50:0@5s", "--load-step"},
      {"step_huge", "--load-step resnet50:1e300@5s", "--load-step"},
      {"step_time_bad", "--load-step resnet50:1.5@forever", "--load-step"},
      {"step_late", "--load-step resnet50:1.5@20s", "load step"},
      {"step_unknown", "--load-step vgg16:1.5@5s", "vgg16"},
      {"step_nul", std::string("--load-step resnet50:1.5\x01@5s"), "--load-step"},
      {"window_zero", "--load-step resnet50:1.5@5s --window 0", "--window"},
      {"window_long", "--load-step resnet50:1.5@5s --window 20s", "window"},
      {"hold_neg", "--load-step resnet50:1.5@5s --replan-hold -1", "--replan-hold"},
      {"hold_nan", "--load-step resnet50:1.5@5s --replan-hold nan", "--replan-hold"},
      {"with_deployment", "--load-step resnet50:1.5@5s --deployment d.json", "--deployment"},
      {"day_and_step", "--load-step resnet50:1.5@5s --rates d.csv", "--rates"},
      {"rates_missing", "--rates nothere.csv", "nothere.csv"},
      {"rates_gap", "--rates gap.csv", "gap.csv:3"},
      {"minute_zero", "--rates d.csv --minute 0", "--minute"},
      {"minute_long", "--rates d.csv --minute 2m", "--minute"},
      {"minute_without_rates", "--load-step resnet50:1.5@5s --minute 1s", "--rates"},
      {"day_lead_short", "--rates d.csv --lead 1s", "--lead"},
      {"day_margin_nan", "--rates d.csv --margin nan", "--margin"},
      {"day_forecaster", "--rates d.csv --forecaster arima", "arima"},
      {"day_steps_bad", "--rates d.csv --step-durations boot=1s", "--step-durations"},
      {"day_spare_neg", "--rates d.csv --spare-gpus -1", "--spare-gpus"},
  };
  const std::map<std::string, FileText> rehearse_files = {
      {"s.yaml", scenario},
      {"d.csv", "minute,multiplier\n0,1\n1,0.5\n"},
      {"gap.csv", "minute,multiplier\n0,1\n2,0.5\n"}};
  for (const auto& [tag, args, names] : rehearse_flags) {
    Add(out, {"rehearse_serve_" + tag, rehearse_files, rehearse + args, names, {2}});
  }
  Add(out, {"rehearse_rates_without_serve",
            rehearse_files,
            "rehearse --scenario s.yaml --rates d.csv",
            "--serve",
            {2}});
  Add(out, {"rehearse_step_without_serve",
            {{"s.yaml", scenario}},
            "rehearse --scenario s.yaml --load-step resnet50:1.5@5s",
            "--serve",
            {2}});
  const std::vector<std::tuple<std::string, std::string, std::string>> serve_flags = {
      {"router_space", "--router-agent 'a b'", "--router-agent"},
      {"router_upper", "--router-agent Edge", "--router-agent"},
      {"router_long", "--router-agent " + std::string(64, 'a'), "--router-agent"},
      {"hold_neg", "--replan-hold -1", "--replan-hold"},
      {"hold_huge", "--replan-hold 1e300", "--replan-hold"},
      {"hold_nan", "--replan-hold nan", "--replan-hold"},
      {"threshold_nan", "--replan-threshold nan", "--replan-threshold"},
      {"autoscale_minute_zero", "--autoscale --autoscale-minute 0", "--autoscale-minute"},
      {"autoscale_minute_long", "--autoscale --autoscale-minute 2h", "--autoscale-minute"},
      {"lead_without_autoscale", "--lead 5m", "--autoscale"},
      {"autoscale_lead_short", "--autoscale --lead 1s", "--lead"},
      {"autoscale_forecaster", "--autoscale --forecaster arima", "arima"},
      {"autoscale_steps_bad", "--autoscale --step-durations model-load=2h", "--step-durations"},
  };
  for (const auto& [tag, args, names] : serve_flags) {
    Add(out, {"serve_" + tag, {}, "serve --listen 127.0.0.1:0 --db t.db " + args, names, {2}});
  }
  // The store and the replica's part in its election.
  // (a fixed port: a replica advertises its address.)
  const std::string etcd = "--listen 127.0.0.1:7 --store etcd:";
  const std::vector<std::tuple<std::string, std::string, std::string>> store_flags = {
      {"store_scheme", "--store mysql:t", "--store"},
      {"store_bare_path", "--store t.db", "--store"},
      {"store_etcd_empty", etcd, "--store"},
      {"store_etcd_blank_item", etcd + "http://127.0.0.1:9,,http://127.0.0.1:8", "--store"},
      {"store_etcd_https", etcd + "https://127.0.0.1:9", "--store"},
      {"store_etcd_path", etcd + "http://127.0.0.1:9/v3", "--store"},
      {"store_etcd_port", etcd + "http://127.0.0.1:99999", "--store"},
      {"store_etcd_unreachable", etcd + "http://127.0.0.1:9", "--store"},
      {"store_etcd_any_port", "--listen 127.0.0.1:0 --store etcd:http://127.0.0.1:9",
       "--advertise-url"},
      {"store_and_db", "--store sqlite:a.db --db b.db", "--db"},
      {"advertise_https", etcd + "http://127.0.0.1:9 --advertise-url https://h:1",
       "--advertise-url"},
      {"advertise_path", etcd + "http://127.0.0.1:9 --advertise-url http://h:1/x",
       "--advertise-url"},
      {"lease_zero", "--lease-ttl 0", "--lease-ttl"},
      {"lease_huge", "--lease-ttl 301", "--lease-ttl"},
      {"lease_nan", "--lease-ttl nan", "--lease-ttl"},
      {"lease_fraction", "--lease-ttl 1.5", "--lease-ttl"},
  };
  for (const auto& [tag, args, names] : store_flags) {
    Add(out, {"serve_" + tag, {}, "serve " + args, names, {2}});
  }
  const std::string agent = "router-agent --server http://127.0.0.1:1 --name edge --work-dir w ";
  const std::vector<std::tuple<std::string, std::string, std::string>> agent_flags = {
      {"name_bad", "--name Bad_Name", "--name"},
      {"server_https", "--server https://127.0.0.1:1", "--server"},
      {"server_path", "--server http://127.0.0.1:1/v1", "--server"},
      {"interval_zero", "--report-interval 0", "--report-interval"},
      {"interval_nan", "--report-interval nan", "--report-interval"},
      {"dilation_zero", "--dilation 0", "--dilation"},
      {"poll_huge", "--poll-wait 61", "--poll-wait"},
      {"port_zero", "--frontend-port 0", "--frontend-port"},
      {"metrics_huge", "--metrics-port 70000", "--metrics-port"},
      {"node_address_bad", "--node-address node-0", "--node-address"},
      {"node_address_port", "--node-address node-0=h:99999", "--node-address"},
      {"node_address_blank", "--node-address 'node-0=a b'", "--node-address"},
      {"token_missing", "--token-file no-token", "no-token"},
      {"connections_zero", "--max-connections 0", "--max-connections"},
  };
  for (const auto& [tag, args, names] : agent_flags) {
    Add(out, {"router_agent_" + tag, {}, agent + args, names, {2}});
  }
}

// ---- tessera autoscale -----------------------------------------------------

// The rates file and every flag of `autoscale`: a bad one is exit 2 naming
// it; a good short day runs (three minutes, so each case stays quick).
void AutoscaleCases(std::vector<HostileCase>& out) {
  const std::string scenario =
      "name: pair\ngpu: a100-80gb\nservices:\n"
      "  - {name: resnet50, model: resnet50, rate_rps: 100, slo_ms: 204.5}\n"
      "  - {name: vgg19, model: vgg19, rate_rps: 50, slo_ms: 396.5}\n";
  const std::string run = "autoscale --scenario s.yaml --rates r.csv --sample 0.2s ";
  const std::string good = "minute,multiplier\n0,1\n1,0.5\n2,1\n";
  const std::vector<std::tuple<std::string, std::string>> files = {
      {"empty", ""},
      {"header_only", "minute,multiplier\n"},
      {"one_minute", "minute,multiplier\n0,1\n"},
      {"first_column", "time,multiplier\n0,1\n1,1\n"},
      {"unknown_service", "minute,resnet50,vgg16\n0,1,1\n1,1,1\n"},
      {"missing_service", "minute,resnet50\n0,1\n1,1\n"},
      {"twice", "minute,resnet50,resnet50,vgg19\n0,1,1,1\n1,1,1,1\n"},
      {"gap", "minute,multiplier\n0,1\n2,1\n"},
      {"start_one", "minute,multiplier\n1,1\n2,1\n"},
      {"nan", "minute,multiplier\n0,nan\n1,1\n"},
      {"inf", "minute,multiplier\n0,inf\n1,1\n"},
      {"negative", "minute,multiplier\n0,-1\n1,1\n"},
      {"zero", "minute,multiplier\n0,0\n1,1\n"},
      {"huge_multiplier", "minute,multiplier\n0,1e6\n1,1\n"},
      {"huge_rate", "minute,resnet50,vgg19\n0,1e300,1\n1,1,1\n"},
      {"extra_field", "minute,multiplier\n0,1,1\n1,1\n"},
      {"short_row", "minute,resnet50,vgg19\n0,1\n1,1,1\n"},
      {"nul", std::string("minute,multiplier\n0,1") + '\0' + "\n1,1\n"},
      {"binary", std::string("\x7f\x45\x4c\x46\x02\x01\x01\x00\xff\xfe", 10)},
      {"invalid_utf8", "minute,multi\xffplier\n0,1\n1,1\n"},
  };
  for (const auto& [tag, text] : files) {
    Add(out,
        {"autoscale_rates_" + tag, {{"s.yaml", scenario}, {"r.csv", text}}, run, "r.csv", {2}});
  }
  Add(out, {"autoscale_rates_missing", {{"s.yaml", scenario}}, run, "r.csv", {2}});
  Add(out, {"autoscale_rates_crlf_bom",
            {{"s.yaml", scenario},
             {"r.csv", "\xEF\xBB\xBF# day\r\nminute,multiplier\r\n0,1\r\n1,0.5\r\n"}},
            run,
            "",
            {0}});
  Add(out, {"autoscale_good_day",
            {{"s.yaml", scenario}, {"r.csv", good}},
            run + "--svg d.svg -o d.txt",
            "",
            {0}});
  const std::vector<std::tuple<std::string, std::string, std::string>> flags = {
      {"no_rates", "autoscale --scenario s.yaml", "--rates"},
      {"no_scenario", "autoscale --rates r.csv", "--scenario"},
      {"lead_zero", run + "--lead 0", "--lead"},
      {"lead_long", run + "--lead 2d", "--lead"},
      {"lead_nan", run + "--lead nan", "--lead"},
      {"margin_negative", run + "--margin -0.1", "--margin"},
      {"margin_nan", run + "--margin nan", "--margin"},
      {"margin_two", run + "--margin 2", "--margin"},
      {"hysteresis_one", run + "--hysteresis 1", "--hysteresis"},
      {"hold_negative", run + "--down-hold -1", "--down-hold"},
      {"hold_long", run + "--down-hold 2d", "--down-hold"},
      {"spare_negative", run + "--spare-gpus -1", "--spare-gpus"},
      {"spare_huge", run + "--spare-gpus 99999999999", "--spare-gpus"},
      {"spare_fraction", run + "--spare-gpus 1.5", "--spare-gpus"},
      {"consolidate_value", run + "--consolidate=maybe", "--consolidate"},
      {"plan_windows_zero", run + "--plan-windows 0", "--plan-windows"},
      {"hedge_turns_value", run + "--hedge-turns=maybe", "--hedge-turns"},
      {"steps_key", run + "--step-durations load=3s", "--step-durations"},
      {"steps_no_equals", run + "--step-durations model-load", "--step-durations"},
      {"steps_negative", run + "--step-durations model-load=-1s", "--step-durations"},
      {"steps_long", run + "--step-durations drain=2h", "--step-durations"},
      {"steps_nan", run + "--step-durations mig-create=nan", "--step-durations"},
      {"steps_empty", run + "--step-durations ,", "--step-durations"},
      {"sample_zero", run + "--sample 0", "--sample"},
      {"sample_long", run + "--sample 2m", "--sample"},
      {"oracle_short", run + "--oracle-interval 30s", "--oracle-interval"},
      {"jobs_many", run + "--jobs 100", "--jobs"},
      {"jobs_negative", run + "--jobs -1", "--jobs"},
      {"forecaster_unknown", run + "--forecaster arima", "arima"},
      {"format_bad", run + "--format yaml", "--format"},
      {"planner_unknown", run + "--planner nosuch", "nosuch"},
      {"planner_mps", run + "--planner igniter", "--planner"},
      {"coeffs", run + "--coeffs c.json", "--coeffs"},
      {"seed_negative", run + "--seed -1", "--seed"},
  };
  for (const auto& [tag, args, names] : flags) {
    Add(out, {"autoscale_" + tag, {{"s.yaml", scenario}, {"r.csv", good}}, args, names, {2}});
  }
}

std::vector<HostileCase> AllCases() {
  std::vector<HostileCase> cases;
  ScenarioCases(cases);
  ProfileCases(cases);
  DeploymentCases(cases);
  TransitionCases(cases);
  FlagCases(cases);
  TraceCases(cases);
  MpsCases(cases);
  OtherCommandCases(cases);
  OutputCases(cases);
  DeployCases(cases);
  AgentCases(cases);
  ControlLoopCases(cases);
  AutoscaleCases(cases);
  std::set<std::string> names;
  for (const HostileCase& c : cases) {
    if (!names.insert(c.name).second) throw std::logic_error("duplicate hostile case " + c.name);
  }
  return cases;
}

}  // namespace tessera::hostile
