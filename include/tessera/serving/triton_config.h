// Triton config: what Triton's dynamic batcher reads from a model
// configuration (config.pbtxt, protobuf text format), parsed for the serving
// emulator (triton_emulator.h). The parser reads the whole protobuf text
// grammar Triton's configurations use (fields, nested messages, lists,
// strings, numbers, '#' comments) and keeps the batcher's fields; other
// fields are read and ignored, as Triton ignores nothing but the emulator
// needs nothing else.
//
// Errors (InvalidArgument) name the source, the line and the field:
// "b8.pbtxt:4: max_batch_size: expected an integer in [0, 4096], got
// \"x\"". A configuration without dynamic_batching batches nothing
// (preferred empty, delay 0: every request runs as soon as the instance is
// free, with what is queued, up to max_batch_size).
//
// Thread-safety: pure functions.
#ifndef TESSERA_TRITON_CONFIG_H_
#define TESSERA_TRITON_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/status.h"

namespace tessera {

struct TritonBatching {
  std::string name;        // the model's name (empty when the file gives none)
  int max_batch_size = 0;  // 0: no batching (each request alone)
  bool dynamic_batching = false;
  std::vector<int> preferred_batch_sizes;  // ascending, each in [1, max_batch_size]
  int64_t max_queue_delay_us = 0;          // in [0, 3.6e9] (an hour)
};

// Parses `text` read from `source`. InvalidArgument (source, line, field)
// for a syntax error, a batcher field of the wrong type or out of range, a
// preferred size above max_batch_size, or text past 1 MiB.
Result<TritonBatching> ParseTritonConfig(std::string_view text, std::string_view source);

}  // namespace tessera

#endif  // TESSERA_TRITON_CONFIG_H_
