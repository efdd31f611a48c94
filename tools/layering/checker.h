// The layering checker: the floors of docs/architecture.md (../shared/DESIGN.md, "Target layout"),
// enforced on every `#include "..."` of src/, app/ and include/tessera/.
//
// A floor includes only floors below it:
//
//   util -> gpu -> profile -> workload -> plan -> planners -> transition
//        -> {simulate, online} -> emit -> agent -> control -> app
//   emit -> requests -> control   (requests: one typed request per job, which
//                                  every front-end calls)
//   util -> gpu -> nvml -> agent   (nvml declares NVML's API and loads it; its fake
//                                  library enforces the catalog's MIG rules)
//   online -> k8s -> control       (k8s: the Kubernetes API server's client, for
//                                  the scheduler extender)
//   agent -> serving -> app        (serving: the Triton emulator and the
//                                  rehearsal of a plan's data path)
//
// (the simulator replays a transition plan, so transition sits below it).
// Floors on one level (simulate, online) must not include each other.
// src/planners/<p>/ folders are all the planners floor, but one planner's
// folder must not include another's: a planners/<x>/ file may
// include planners/<x>/ files and the planners' shared files directly under
// src/planners/, nothing from planners/<y>/. app/ includes only public headers
// (include/tessera/) and its own files, never src/.
//
// A file's floor is its directory's. A public header include/tessera/F/X.h
// is floor F's (F must be a floor); one at the top, include/tessera/X.h,
// has the floor of the src/ directory holding X.cc (searched recursively);
// headers without one are classified in kHeaderOnlyFloors below, and an
// unclassified public header is itself a violation. tests/ and bench/ are
// outside the floors and are not checked; a *_test.cc under src/ is its
// directory's floor and may also include the helpers in tests/. Includes
// with <> are external and ignored; so is a quoted include found nowhere in
// the tree whose first component is not a floor's directory ("fmt/format.h").
//
// Run on every build (tools/layering/main.cc, the tessera_layering target),
// so that an include that goes up a floor fails the build; tests/
// layering_test.cc runs it on the checkout and on synthetic trees.
#ifndef TESSERA_TOOLS_LAYERING_CHECKER_H_
#define TESSERA_TOOLS_LAYERING_CHECKER_H_

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace tessera::layering {

struct Violation {
  std::string file;  // relative to the root, with '/'
  int line = 0;      // 1-based; 0 = the file or directory as a whole
  std::string message;

  std::string ToString() const {
    return line > 0 ? file + ":" + std::to_string(line) + ": " + message : file + ": " + message;
  }
};

// Every layering violation under `root` (a checkout: src/, app/,
// include/tessera/), sorted by file. `dir_floors` names the floor of src/
// directories that are not floors themselves (e.g. {"serve", "simulate"}).
std::vector<Violation> CheckLayering(const std::filesystem::path& root,
                                     std::map<std::string, std::string> dir_floors = {});

}  // namespace tessera::layering

#endif  // TESSERA_TOOLS_LAYERING_CHECKER_H_
