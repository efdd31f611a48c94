// tessera_layering_check ROOT: the layering checker (checker.h) on the
// checkout at ROOT. Prints each violation as `file:line: <floor> includes
// <header> (<its floor>): <why>` and exits 1 when there is one, 0 otherwise,
// 2 on a bad command line. The build runs it (CMake's tessera_layering).
#include <filesystem>
#include <iostream>

#include "layering/checker.h"

int main(int argc, char** argv) {
  if (argc != 2 || !std::filesystem::is_directory(std::filesystem::path(argv[1]) / "src")) {
    std::cerr << "usage: tessera_layering_check ROOT (a Tessera checkout, with src/)\n";
    return 2;
  }
  const auto violations = tessera::layering::CheckLayering(argv[1]);
  for (const auto& v : violations) std::cerr << v.ToString() << "\n";
  if (violations.empty()) return 0;
  std::cerr << violations.size()
            << " layering violation(s): a floor includes only the floors below it "
               "(docs/architecture.md, \"How the layering test enforces the floors\")\n";
  return 1;
}
