#include "cli_output.h"

#include <iostream>
#include <string>

#include "tessera/util/text_io.h"

namespace tessera::cli {

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kIoError:
      return kExitBadInput;
    case StatusCode::kInternal:
      return kExitInternal;
  }
  return kExitInternal;
}

int ReportError(const Status& status) {
  PrintMessage("tessera: error: " + status.message() + "\n");
  return ExitCodeFor(status);
}

NoteSink CliNotes() {
  return [](std::string_view note) { PrintMessage("tessera: note: " + std::string(note) + "\n"); };
}

void PrintMessage(std::string_view text) { std::cerr << EscapeMessage(text); }

std::function<void(std::string_view)> CliProgress() {
  return [](std::string_view line) { PrintMessage("tessera: " + std::string(line) + "\n"); };
}

void NoteOutcomes(const Deployment& deployment) {
  for (const ServiceOutcome& s : deployment.services) {
    if (s.status == ServiceStatus::kInfeasible) {
      PrintMessage("tessera: service " + s.name + " is infeasible: " + s.reason + "\n");
    } else if (s.predicted_violation) {
      PrintMessage("tessera: note: the iGniter model predicts " + s.name +
                   " misses its latency budget or rate on this plan\n");
    }
  }
}

}  // namespace tessera::cli
