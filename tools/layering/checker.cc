#include "layering/checker.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::layering {
namespace {

namespace fs = std::filesystem;

// Every floor with the floors directly below it; a floor may include the
// floors reachable downward from it.
struct FloorSpec {
  std::string_view name;
  std::vector<std::string_view> below;
};

const std::vector<FloorSpec>& FloorSpecs() {
  static const std::vector<FloorSpec> specs = {
      {"util", {}},
      {"gpu", {"util"}},
      {"nvml", {"gpu"}},
      {"profile", {"gpu"}},
      {"workload", {"profile"}},
      {"plan", {"workload"}},
      {"planners", {"plan"}},
      {"transition", {"planners"}},
      {"simulate", {"transition"}},
      {"online", {"planners"}},
      {"emit", {"simulate", "online"}},
      {"agent", {"emit", "nvml"}},
      {"k8s", {"online"}},
      {"requests", {"emit"}},
      {"control", {"agent", "k8s", "requests"}},
      {"serving", {"agent"}},
      {"app", {"control", "serving"}},
  };
  return specs;
}

bool IsFloor(std::string_view name) {
  const auto& specs = FloorSpecs();
  return std::any_of(specs.begin(), specs.end(),
                     [&](const FloorSpec& spec) { return spec.name == name; });
}

// True when `lower` is strictly below `upper`.
bool IsBelow(std::string_view lower, std::string_view upper) {
  for (const FloorSpec& spec : FloorSpecs()) {
    if (spec.name != upper) continue;
    for (std::string_view next : spec.below) {
      if (next == lower || IsBelow(lower, next)) return true;
    }
  }
  return false;
}

// Public headers without an X.cc of their own, classified by reading them.
const std::map<std::string, std::string>& HeaderOnlyFloors() {
  static const std::map<std::string, std::string> floors = {
      // Instance, GpuAssignment, ServiceOutcome, Deployment: the plan's values.
      {"deployment.h", "plan"},
      // Its canonical JSON and parser are src/plan/deployment_json.cc; the
      // ParvaGPU CSV, table and SVG it also declares live in src/emit/, which
      // includes it downward.
      {"deployment_format.h", "plan"},
      // Planner, PlanContext, PlanResult and the planners' registry.
      {"planner.h", "plan"},
  };
  return floors;
}

struct Floor {
  std::string name;
  std::string planner;  // the folder under src/planners/, if any

  std::string ToString() const { return planner.empty() ? name : name + "/" + planner; }
};

struct QuotedInclude {
  int line = 0;
  std::string path;
};

// `#include "x"` with any spaces around '#' and `include`, and anything after
// the closing quote (a trailing comment).
std::optional<std::string> ParseQuotedInclude(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line[i] != '#') return std::nullopt;
  i = line.find_first_not_of(" \t", i + 1);
  constexpr std::string_view kInclude = "include";
  if (i == std::string_view::npos || line.substr(i, kInclude.size()) != kInclude) {
    return std::nullopt;
  }
  i = line.find_first_not_of(" \t", i + kInclude.size());
  if (i == std::string_view::npos || line[i] != '"') return std::nullopt;
  const size_t end = line.find('"', i + 1);
  if (end == std::string_view::npos || end == i + 1) return std::nullopt;
  return std::string(line.substr(i + 1, end - i - 1));
}

std::vector<QuotedInclude> ReadQuotedIncludes(const fs::path& file) {
  std::vector<QuotedInclude> includes;
  std::ifstream in(file);
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (std::optional<std::string> path = ParseQuotedInclude(text)) {
      includes.push_back({number, *path});
    }
  }
  return includes;
}

bool IsSourceFile(const fs::path& path) {
  static const std::set<std::string> kExtensions = {".h", ".hh", ".hpp", ".cc", ".cpp", ".inc"};
  return kExtensions.count(path.extension().string()) > 0;
}

std::vector<std::string> Components(const std::string& relative) {
  std::vector<std::string> parts;
  for (const fs::path& part : fs::path(relative)) parts.push_back(part.string());
  return parts;
}

class LayeringChecker {
 public:
  // `dir_floors` names the floor of src/ directories that are not floors
  // themselves (e.g. {"serve", "simulate"} for trees older than the rename).
  LayeringChecker(fs::path root, std::map<std::string, std::string> dir_floors)
      : root_(std::move(root)), dir_floors_(std::move(dir_floors)) {}

  std::vector<Violation> Run() {
    ClassifyPublicHeaders();
    std::vector<std::string> files;
    for (const char* top : {"src", "app", "include/tessera"}) {
      const fs::path dir = root_ / top;
      if (!fs::is_directory(dir)) continue;
      for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        if (entry.is_regular_file() && IsSourceFile(entry.path())) {
          files.push_back(fs::relative(entry.path(), root_).generic_string());
        }
      }
    }
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) CheckFile(file);
    for (const std::string& dir : unknown_dirs_) {
      violations_.push_back({dir, 0, "directory with no floor: add it to the floors"});
    }
    std::stable_sort(violations_.begin(), violations_.end(),
                     [](const Violation& a, const Violation& b) { return a.file < b.file; });
    return violations_;
  }

 private:
  std::optional<std::string> DirFloor(const std::string& dir) const {
    if (IsFloor(dir) && dir != "app") return dir;
    if (auto it = dir_floors_.find(dir); it != dir_floors_.end()) return it->second;
    return std::nullopt;
  }

  // The floor of a src/ path, or nullopt (an unknown directory is recorded).
  std::optional<Floor> SrcFloor(const std::vector<std::string>& parts, bool record_unknown) {
    if (parts.size() < 3) {
      if (record_unknown) violations_.push_back({"src/" + parts.back(), 0, "file with no floor"});
      return std::nullopt;
    }
    std::optional<std::string> name = DirFloor(parts[1]);
    if (!name) {
      if (record_unknown) unknown_dirs_.insert("src/" + parts[1]);
      return std::nullopt;
    }
    Floor floor{*name, ""};
    if (*name == "planners" && parts.size() >= 4) floor.planner = parts[2];
    return floor;
  }

  void ClassifyPublicHeaders() {
    std::map<std::string, std::set<std::string>> implementations;  // stem -> floors
    std::map<std::string, Floor> floor_of;                         // floor string -> Floor
    if (fs::is_directory(root_ / "src")) {
      for (const auto& entry : fs::recursive_directory_iterator(root_ / "src")) {
        if (!entry.is_regular_file() || entry.path().extension() != ".cc") continue;
        std::optional<Floor> floor =
            SrcFloor(Components(fs::relative(entry.path(), root_).generic_string()), false);
        if (!floor) continue;
        implementations[entry.path().stem().string()].insert(floor->ToString());
        floor_of[floor->ToString()] = *floor;
      }
    }
    const fs::path dir = root_ / "include" / "tessera";
    if (!fs::is_directory(dir)) return;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!entry.is_regular_file() || !IsSourceFile(entry.path())) continue;
      const std::string name = entry.path().filename().string();
      const std::string relative = "include/tessera/" + name;
      const auto found = implementations.find(entry.path().stem().string());
      if (found != implementations.end() && found->second.size() == 1) {
        header_floors_[name] = floor_of[*found->second.begin()];
      } else if (found != implementations.end()) {
        std::string where;
        for (const std::string& floor : found->second) where += " " + floor;
        violations_.push_back(
            {relative, 0,
             "public header implemented on several floors (" + where.substr(1) + "): classify it"});
      } else if (auto it = HeaderOnlyFloors().find(name); it != HeaderOnlyFloors().end()) {
        header_floors_[name] = Floor{it->second, ""};
      } else {
        violations_.push_back({relative, 0,
                               "public header with no floor (no " + entry.path().stem().string() +
                                   ".cc under src/): classify it"});
      }
    }
  }

  // Where a file is: its floor, outside the floors (tests/, bench/), or
  // nowhere known (nullopt; reported where it is found).
  struct Place {
    std::optional<Floor> floor;
    bool outside = false;
  };

  Place Locate(const std::string& relative, bool record_unknown) {
    const std::vector<std::string> parts = Components(relative);
    if (parts.empty()) return {};
    if (parts[0] == "tests" || parts[0] == "bench") return {std::nullopt, true};
    if (parts[0] == "app") return {Floor{"app", ""}, false};
    if (parts[0] == "src") return {SrcFloor(parts, record_unknown), false};
    if (parts.size() == 3 && parts[0] == "include" && parts[1] == "tessera") {
      if (auto it = header_floors_.find(parts[2]); it != header_floors_.end()) {
        return {it->second, false};
      }
    }
    // include/tessera/<floor>/X.h: a floor's public header beyond the top level.
    if (parts.size() == 4 && parts[0] == "include" && parts[1] == "tessera") {
      if (IsFloor(parts[2]) && parts[2] != "app") return {Floor{parts[2], ""}, false};
      if (record_unknown) unknown_dirs_.insert("include/tessera/" + parts[2]);
    }
    return {};
  }

  // The included file relative to the root, searched as the compiler does
  // (the includer's directory, then src/, include/, tests/); a floor-named
  // path that exists nowhere still counts as that floor's. nullopt = external.
  std::optional<std::string> Resolve(const std::string& includer, const std::string& header) {
    const fs::path from = fs::path(includer).parent_path();
    for (const fs::path& dir : {from, fs::path("src"), fs::path("include"), fs::path("tests")}) {
      if (fs::is_regular_file(root_ / dir / header)) {
        return (dir / header).lexically_normal().generic_string();
      }
    }
    const std::vector<std::string> parts = Components(header);
    if (parts.size() >= 2 && parts[0] == "tessera") return "include/" + header;
    if (parts.size() >= 2 && DirFloor(parts[0])) return "src/" + header;
    return std::nullopt;
  }

  void CheckFile(const std::string& file) {
    const Place place = Locate(file, true);
    if (!place.floor) return;
    const Floor& floor = *place.floor;
    const bool is_test = file.size() > 8 && file.substr(file.size() - 8) == "_test.cc";
    for (const QuotedInclude& include : ReadQuotedIncludes(root_ / file)) {
      const std::optional<std::string> target = Resolve(file, include.path);
      if (!target) continue;
      auto report = [&](const std::string& what) {
        violations_.push_back(
            {file, include.line, floor.ToString() + " includes " + include.path + " " + what});
      };
      const Place to = Locate(*target, false);
      const bool is_public = target->rfind("include/tessera/", 0) == 0;
      if (to.outside) {
        if (!is_test) report("(" + *target + "): only tests may include tests/ and bench/");
        continue;
      }
      if (!to.floor) {
        if (is_public && !fs::exists(root_ / *target)) report("(no such public header)");
        continue;  // an unclassified header or unknown directory is reported once, as such
      }
      const std::string where = "(" + to.floor->ToString() + "): ";
      if (floor.name == "app") {
        if (!is_public && to.floor->name != "app") {
          report(where + "app includes only include/tessera/ headers and its own");
        }
      } else if (floor.name == to.floor->name) {
        if (!floor.planner.empty() && !to.floor->planner.empty() &&
            floor.planner != to.floor->planner) {
          report(where + "another planner's folder (planners/" + floor.planner +
                 "/ may include only its own folder and src/planners/ itself)");
        }
      } else if (IsBelow(floor.name, to.floor->name)) {
        report(where + "upward");
      } else if (!IsBelow(to.floor->name, floor.name)) {
        report(where + "sideways (" + floor.name + " and " + to.floor->name +
               " are on one level and must not include each other)");
      }
    }
  }

  fs::path root_;
  std::map<std::string, std::string> dir_floors_;
  std::map<std::string, Floor> header_floors_;  // include/tessera/ file name -> floor
  std::set<std::string> unknown_dirs_;
  std::vector<Violation> violations_;
};

}  // namespace

std::vector<Violation> CheckLayering(const fs::path& root,
                                     std::map<std::string, std::string> dir_floors) {
  return LayeringChecker(root, std::move(dir_floors)).Run();
}

}  // namespace tessera::layering
