// Renderings of a GSLICE runtime report (gslice_runtime.h): a table for
// people (summary, timeline, events) and JSON for programs.
//
// Thread-safety: free functions without state.
#ifndef TESSERA_GSLICE_REPORT_FORMAT_H_
#define TESSERA_GSLICE_REPORT_FORMAT_H_

#include <string>

#include "tessera/simulate/gslice_runtime.h"

namespace tessera {

// The report for people (summary, timeline, events) and for programs.
std::string FormatGsliceReportTable(const GsliceReport& report);
std::string FormatGsliceReportJson(const GsliceReport& report);

}  // namespace tessera

#endif  // TESSERA_GSLICE_REPORT_FORMAT_H_
