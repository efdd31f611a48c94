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
// Every error names the file, the line and the field. Nothing is dropped
// silently: a malformed row is an error, not a skipped row.
#ifndef TESSERA_PROFILE_IO_H_
#define TESSERA_PROFILE_IO_H_

#include <string>
#include <string_view>

#include "tessera/profile_table.h"
#include "tessera/status.h"

namespace tessera {

// Loads `path`: a directory is read as a ParvaGPU prof_data directory, a file
// by its header (Tessera CSV, or a single ParvaGPU model CSV named after its
// model). `parva_gpu` is the catalog GPU ParvaGPU data is attributed to.
Result<ProfileTable> LoadProfiles(const std::string& path,
                                  std::string_view parva_gpu = "a100-80gb");

// Parses Tessera CSV text. `source` names the file in error messages.
Result<ProfileTable> ParseTesseraProfileCsv(std::string_view text, std::string_view source);

// Parses one ParvaGPU model CSV into entries for `model` on `gpu`.
Result<ProfileTable> ParseParvaProfileCsv(std::string_view text, std::string_view source,
                                          std::string_view model, std::string_view gpu);

// Tessera CSV text for `table`, rows in table order, numbers round-trippable.
std::string FormatTesseraProfileCsv(const ProfileTable& table);

}  // namespace tessera

#endif  // TESSERA_PROFILE_IO_H_
