// Loading and writing profile tables.
//
// Formats (DESIGN.md, Formats):
//  * Tessera CSV: header `model,gpu,profile,batch,procs,throughput_rps,latency_ms`
//    with optional trailing columns `p99_ms,mem_gib` (any order after the
//    required ones); throughput is per segment. Many models and GPUs per file.
//  * ParvaGPU `prof_data` directory: one `<model>.csv` per model with header
//    `Mig instance,Batch size,Workload Number,Throughput,Latency` (per-process
//    samples/s, seconds; `0,0` = infeasible row, skipped; CRLF accepted).
//    The data is from an A100 80GB; sizes 1,2,3,4,7 map to that GPU's primary
//    profiles. The segment throughput is Throughput x Workload Number and the
//    latency is Latency x 1000 ms.
//
// Every error is InvalidArgument (NotFound / IoError for unreadable paths) and
// reads "<file>:<line>: field '<column>': <what is wrong, with the value>",
// e.g. "bert.csv:7: field 'Latency': must be a finite number >= 0, got '-1'".
// Every number lies in its range of input_limits.h: batch in kBatch, procs
// (Workload Number) in kProcs, a segment's throughput in kThroughputRps
// (ParvaGPU: per process and times the processes), latency in kLatencyMs
// (ParvaGPU: seconds x 1000), p99_ms in kLatencyMs, mem_gib in kMemGib.
// Nothing is dropped silently: a malformed row is an error, not a skipped row
// (blank lines hold no data and are ignored). LF or CRLF, with or without a
// final newline.
//
// Thread-safety: pure functions.
#ifndef TESSERA_PROFILE_IO_H_
#define TESSERA_PROFILE_IO_H_

#include <string>
#include <string_view>

#include "tessera/profile_table.h"
#include "tessera/status.h"

namespace tessera {

// Loads `path`: a directory is read as a ParvaGPU prof_data directory (every
// *.csv in it, in name order; the model is CanonicalModelName(file stem), so
// bert.csv is "bert-large"; NotFound if there is none), a file by its header
// (Tessera CSV, or a single ParvaGPU model CSV named after its model).
// `parva_gpu` is the catalog GPU ParvaGPU data is attributed to.
Result<ProfileTable> LoadProfiles(const std::string& path,
                                  std::string_view parva_gpu = "a100-80gb");

// Parses Tessera CSV text. `source` names the file in error messages. GPU
// names must be in the catalog (stored as the catalog spells them), profiles
// among that GPU's; models go through CanonicalModelName. An empty p99_ms or
// mem_gib cell means "not measured". A repeated key is an error.
Result<ProfileTable> ParseTesseraProfileCsv(std::string_view text, std::string_view source);

// Parses one ParvaGPU model CSV into entries for `model` (canonicalized) on
// `gpu`: `Mig instance` g maps to gpu's primary profile with g compute slices.
// `0,0` rows are skipped; a row with only one of them 0 is an error.
Result<ProfileTable> ParseParvaProfileCsv(std::string_view text, std::string_view source,
                                          std::string_view model, std::string_view gpu);

// Tessera CSV text for `table`, rows in table order, numbers in their
// shortest round-trip form: ParseTesseraProfileCsv reads back the same
// entries, bit for bit. Optional columns appear when any entry has them.
// REQUIRES: names hold no ',' or newline (true of every parsed table).
std::string FormatTesseraProfileCsv(const ProfileTable& table);

}  // namespace tessera

#endif  // TESSERA_PROFILE_IO_H_
