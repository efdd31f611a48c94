// Serializations of a Transition: the fixed JSON that other tools read
// ("format": "tessera-transition", "version": 1; docs/transitions.md), its
// strict parser, and a text listing for people.
//
// JSON: {"format", "version", "gpu", "spare_gpus", "gpu_map": {"<B index>":
// <cluster index>}, "phases": [{"steps": [...]}], "summary": {"steps",
// "phases", "gpus_touched", "peak_gpus", "min_capacity_ratio"}}. A step has
// "id", "action", "gpu", "profile", "start", "service"; create and
// reconfigure add "model", "batch", "procs", "throughput_rps"; reconfigure
// adds "from_service". 2-space indent, a final newline, doubles rounded to 4
// decimals and written as integers when integral.
//
// Thread-safety: pure functions.
#ifndef TESSERA_TRANSITION_FORMAT_H_
#define TESSERA_TRANSITION_FORMAT_H_

#include <string>
#include <string_view>

#include "tessera/status.h"
#include "tessera/transition.h"
#include "tessera/transition/transition_check.h"

namespace tessera {

std::string FormatTransitionJson(const Transition& transition);

// Strict: unknown, duplicate, missing keys, wrong types, an unknown action or
// format, a version other than 1, numbers outside their input limits
// (input_limits.h; gpu indices limits::kClusterGpuIndex, spare_gpus
// limits::kSpareGpus) and nesting deeper than the JSON depth bound are
// InvalidArgument naming `source` and the JSON path, e.g.
// "t.json: phases[1].steps[0].batch: expected an integer, got 4.5"; syntax
// errors give line and column. Whether the plan is legal is the checker's job.
Result<Transition> ParseTransitionJson(std::string_view text, std::string_view source);

// One block per phase, a line per step, then the summary.
std::string FormatTransitionText(const Transition& transition);

// The summary on one line: "3 steps, 2 phases, 2 GPUs touched, peak 16 GPUs,
// min capacity ratio 1.02" (what `transition check` prints after "ok: ").
std::string FormatTransitionSummary(const TransitionSummary& summary);

// A check's outcome as JSON (`transition check --format json`): {"ok",
// "violations": [...], "summary": {the measured summary, keyed as in the
// transition JSON}}; same number style, 2-space indent, final newline.
std::string FormatTransitionCheckJson(const TransitionCheck& check);

}  // namespace tessera

#endif  // TESSERA_TRANSITION_FORMAT_H_
