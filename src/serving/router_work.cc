// ParseRouterWork (router_work.h).
#include "serving/router_work.h"

#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>
#include <string_view>

#include "tessera/emit/deploy_artifacts.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"
#include "util/json_reader.h"
#include "util/json_structure.h"

namespace tessera::serving {
namespace {

using Json = nlohmann::json;

Result<RouterServerState> ParseState(const JsonReader& r, const std::string& path,
                                     const std::string& text) {
  for (const RouterServerState s :
       {RouterServerState::kReady, RouterServerState::kDrain, RouterServerState::kMaint}) {
    if (text == RouterServerStateName(s)) return s;
  }
  return r.Error(path, "expected ready, drain or maint, got " + QuoteForMessage(text));
}

}  // namespace

Result<RouterWork> ParseRouterWork(const std::string& body, const std::string& source,
                                   const std::string& router) {
  const JsonReader r(source);
  if (const std::string bad = CheckJsonStructure(body); !bad.empty()) return r.Error("", bad);
  const Json j = Json::parse(body);
  static constexpr std::array<std::string_view, 6> kKeys = {"version",   "router",   "rule",
                                                            "base_port", "backends", "transition"};
  TESSERA_RETURN_IF_ERROR(r.Keys(j, "", kKeys));
  RouterWork work;
  if (!j["version"].is_number_integer()) return r.Error("version", "expected an integer");
  work.version = j["version"].get<int64_t>();
  TESSERA_ASSIGN_OR_RETURN(const std::string name, r.String(j, "", "router", true));
  if (name != router) {
    return r.Error("router", fmt::format("the work is for router {}, this one is {}",
                                         QuoteForMessage(name), QuoteForMessage(router)));
  }
  if (!j["rule"].is_null()) {
    TESSERA_ASSIGN_OR_RETURN(const std::string rule, r.String(j, "", "rule", true));
    Result<Router> parsed = ParseRouter(rule);
    if (!parsed.ok()) return r.Error("rule", parsed.status().message());
    TESSERA_RETURN_IF_ERROR(CheckShippable(*parsed));
    work.rule = *parsed;
  }
  TESSERA_ASSIGN_OR_RETURN(work.base_port, r.IntIn(j, "", "base_port", limits::kPort));
  TESSERA_RETURN_IF_ERROR(r.Array(j, "", "backends"));
  static constexpr std::array<std::string_view, 4> kBackendKeys = {"service", "name", "slo_ms",
                                                                   "servers"};
  static constexpr std::array<std::string_view, 6> kServerKeys = {"name",  "node",   "port",
                                                                  "batch", "weight", "state"};
  for (size_t b = 0; b < j["backends"].size(); ++b) {
    const Json& jb = j["backends"][b];
    const std::string path = fmt::format("backends[{}]", b);
    TESSERA_RETURN_IF_ERROR(r.Keys(jb, path, kBackendKeys));
    WorkBackend backend;
    TESSERA_ASSIGN_OR_RETURN(backend.service, r.String(jb, path, "service", true));
    TESSERA_ASSIGN_OR_RETURN(backend.name, r.String(jb, path, "name", true));
    if (!IsDns1123Label(backend.name)) {
      return r.Error(path + ".name",
                     "expected a DNS-1123 label, got " + QuoteForMessage(backend.name));
    }
    if (!jb["slo_ms"].is_null()) {
      TESSERA_ASSIGN_OR_RETURN(backend.slo_ms, r.In(jb, path, "slo_ms", limits::kSloMs));
    }
    TESSERA_RETURN_IF_ERROR(r.Array(jb, path, "servers"));
    for (size_t k = 0; k < jb["servers"].size(); ++k) {
      const Json& js = jb["servers"][k];
      const std::string sp = fmt::format("{}.servers[{}]", path, k);
      TESSERA_RETURN_IF_ERROR(r.Keys(js, sp, kServerKeys));
      WorkServer s;
      TESSERA_ASSIGN_OR_RETURN(s.server.name, r.String(js, sp, "name", true));
      if (!IsDns1123Label(s.server.name)) {
        return r.Error(sp + ".name",
                       "expected a DNS-1123 label, got " + QuoteForMessage(s.server.name));
      }
      TESSERA_ASSIGN_OR_RETURN(s.server.node, r.String(js, sp, "node", true));
      TESSERA_ASSIGN_OR_RETURN(s.server.port, r.IntIn(js, sp, "port", limits::kPort));
      TESSERA_ASSIGN_OR_RETURN(s.server.batch, r.IntIn(js, sp, "batch", limits::kBatch));
      TESSERA_ASSIGN_OR_RETURN(s.server.weight, r.IntIn(js, sp, "weight", InputRange{0, 256}));
      TESSERA_ASSIGN_OR_RETURN(const std::string state, r.String(js, sp, "state", true));
      TESSERA_ASSIGN_OR_RETURN(s.state, ParseState(r, sp + ".state", state));
      backend.servers.push_back(std::move(s));
    }
    work.backends.push_back(std::move(backend));
  }
  const Json& t = j["transition"];
  if (t.is_null()) return work;
  static constexpr std::array<std::string_view, 4> kStepKeys = {"id", "phase", "state", "step"};
  TESSERA_RETURN_IF_ERROR(r.Keys(t, "transition", kStepKeys));
  RouterWork::Step step;
  if (!t["id"].is_number_integer()) return r.Error("transition.id", "expected an integer");
  step.id = t["id"].get<int64_t>();
  TESSERA_ASSIGN_OR_RETURN(step.phase, r.Int(t, "transition", "phase", 0));
  if (!t["step"].is_null()) {
    TESSERA_ASSIGN_OR_RETURN(step.step, r.String(t, "transition", "step", true));
    if (step.step != "drain" && step.step != "ready") {
      return r.Error("transition.step",
                     "expected \"drain\" or \"ready\", got " + QuoteForMessage(step.step));
    }
  }
  work.transition = std::move(step);
  return work;
}

}  // namespace tessera::serving
