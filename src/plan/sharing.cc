#include "tessera/plan/sharing.h"

#include <string>

#include "tessera/util/text_io.h"

namespace tessera {

std::string_view SharingName(Sharing sharing) {
  switch (sharing) {
    case Sharing::kMig:
      return "mig";
    case Sharing::kMigMps:
      return "mig+mps";
    case Sharing::kMps:
      return "mps";
  }
  return "mig";
}

Result<Sharing> ParseSharing(std::string_view text) {
  for (Sharing s : {Sharing::kMig, Sharing::kMigMps, Sharing::kMps}) {
    if (SharingName(s) == text) return s;
  }
  return Status::InvalidArgument("sharing: expected mig, mig+mps or mps, got " +
                                 QuoteForMessage(text));
}

}  // namespace tessera
