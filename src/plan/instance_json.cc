#include "plan/instance_json.h"

#include "tessera/util/input_limits.h"
#include "util/json_numbers.h"

namespace tessera {

void AddInstanceJson(const Instance& instance, nlohmann::ordered_json& j) {
  j["profile"] = instance.profile;
  j["start"] = instance.start;
  j["service"] = instance.service;
  j["model"] = instance.model;
  j["batch"] = instance.batch;
  j["procs"] = instance.procs;
  j["throughput_rps"] = JsonMeasurement(instance.throughput_rps);
  j["latency_ms"] = JsonMeasurement(instance.latency_ms);
}

Result<Instance> ReadInstanceJson(const JsonReader& reader, const nlohmann::json& j,
                                  const std::string& path) {
  Instance in;
  TESSERA_ASSIGN_OR_RETURN(in.profile, reader.String(j, path, "profile", true));
  TESSERA_ASSIGN_OR_RETURN(in.start, reader.Int(j, path, "start", 0));
  TESSERA_ASSIGN_OR_RETURN(in.service, reader.String(j, path, "service", true));
  TESSERA_ASSIGN_OR_RETURN(in.model, reader.String(j, path, "model", true));
  TESSERA_ASSIGN_OR_RETURN(in.batch, reader.IntIn(j, path, "batch", limits::kBatch));
  TESSERA_ASSIGN_OR_RETURN(in.procs, reader.IntIn(j, path, "procs", limits::kProcs));
  TESSERA_ASSIGN_OR_RETURN(in.throughput_rps,
                           reader.In(j, path, "throughput_rps", limits::kThroughputRps));
  TESSERA_ASSIGN_OR_RETURN(in.latency_ms, reader.In(j, path, "latency_ms", limits::kLatencyMs));
  return in;
}

}  // namespace tessera
