// Serializations of a Deployment: canonical JSON (and its parser), the
// ParvaGPU-compatible deployment-map CSV, a text table for people, and an SVG
// drawing of every GPU's memory slices.
//
// Thread-safety: pure functions.
#ifndef TESSERA_DEPLOYMENT_FORMAT_H_
#define TESSERA_DEPLOYMENT_FORMAT_H_

#include <string>
#include <string_view>

#include "tessera/deployment.h"
#include "tessera/gpu_catalog.h"
#include "tessera/status.h"

namespace tessera {

// The canonical JSON of DESIGN.md: 2-space indent, keys in DESIGN order, a
// final newline. Measurements (throughput, latency, capacity, slack,
// fragmentation, gap, plan_ms) are rounded to 4 decimal places so output is
// stable and diff-friendly; a double with an integral value is written as an
// integer (829, not 829.0). `reason` appears only when non-empty. JSON has no
// NaN or infinity: such values come out as null, which the parser rejects.
std::string FormatDeploymentJson(const Deployment& deployment);

// Parses canonical JSON back; Format(Parse(Format(d))) == Format(d). Strict:
// unknown keys, duplicate keys, missing keys, wrong types, negative counts,
// an unknown `status`, duplicate GPU indices or service names, instances
// of unlisted services, and numbers outside their input limits
// (input_limits.h: an instance's batch, procs, throughput_rps and latency_ms,
// a process's batch, a service's rate_rps and slo_ms, a pool entry's
// price_per_hour and max_count) are errors (InvalidArgument). Errors name `source` and
// the JSON path of the field at fault, e.g.
// "plan.json: gpus[2].instances[0].start: expected an integer, got 4.5";
// syntax errors give line and column. Geometry is the validator's job.
Result<Deployment> ParseDeploymentJson(std::string_view text, std::string_view source);

// ParvaGPU's deployment map: header
// `Num instance,Num GPU,Model,Placement,Instance size,Batch size,Num proc`,
// one row per segment, GPUs in order, within a GPU by instance size
// descending. `Num instance` is the node, `Num GPU` the GPU within the node,
// `Placement` the start memory slice, `Instance size` the compute slices.
std::string FormatParvaCsv(const Deployment& deployment, const GpuModel& gpu);

// A fixed-width table: one block per GPU listing its instances, then one row
// per service (rate, capacity, SLO, status), then the metrics.
std::string FormatDeploymentTable(const Deployment& deployment);

// An SVG picture: one row per GPU, its memory slices drawn left to right,
// each instance a rectangle coloured by service and labelled with profile and
// "B x P" (batch x procs); a legend maps colours to services. Deterministic.
std::string FormatDeploymentSvg(const Deployment& deployment, const GpuModel& gpu);

}  // namespace tessera

#endif  // TESSERA_DEPLOYMENT_FORMAT_H_
