// The JSON of a plan's MIG instance, the one writer and reader of the type
// the plan floor owns: the deployment's JSON (deployment_json.cc) lists
// instances so, and a node plan (emit/node_plan.cc) writes the same keys
// with what its node needs beside them.
//
// Keys, in the order written: profile, start, service, model, batch, procs,
// throughput_rps, latency_ms (predictions as measurements: 4 decimals).
// Reading keeps the formats' strictness: every key present with its type
// and range, each error naming the document, the path and the key; the
// caller checks the object's keys (kInstanceJsonKeys and its own).
//
// Thread-safety: pure functions.
#ifndef TESSERA_PLAN_INSTANCE_JSON_H_
#define TESSERA_PLAN_INSTANCE_JSON_H_

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tessera/deployment.h"
#include "tessera/status.h"
#include "util/json_reader.h"

namespace tessera {

inline constexpr std::array<std::string_view, 8> kInstanceJsonKeys = {
    "profile", "start", "service", "model", "batch", "procs", "throughput_rps", "latency_ms"};

// Adds `instance`'s keys to `j` (an object), after those it holds.
void AddInstanceJson(const Instance& instance, nlohmann::ordered_json& j);

// The instance `j` (at `path`) describes.
Result<Instance> ReadInstanceJson(const JsonReader& reader, const nlohmann::json& j,
                                  const std::string& path);

}  // namespace tessera

#endif  // TESSERA_PLAN_INSTANCE_JSON_H_
