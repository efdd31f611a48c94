# The library's floors (docs/architecture.md): each one static library,
# tessera_<floor>, holding src/<floor>/; what each links directly below it;
# and what each uses outside Tessera, beside fmt. Read by the repository's
# CMakeLists.txt, which builds them, and by python/CMakeLists.txt, which can
# link a build's archives instead (TESSERA_CORE_BUILD_DIR).
set(TESSERA_FLOORS util gpu nvml profile workload plan planners transition simulate online emit
    agent k8s requests control serving)
set(TESSERA_BELOW_util)
set(TESSERA_BELOW_gpu util)
set(TESSERA_BELOW_nvml gpu)
set(TESSERA_BELOW_profile gpu)
set(TESSERA_BELOW_workload profile)
set(TESSERA_BELOW_plan workload)
set(TESSERA_BELOW_planners plan)
set(TESSERA_BELOW_transition planners)
set(TESSERA_BELOW_simulate transition)
set(TESSERA_BELOW_online planners)
set(TESSERA_BELOW_emit simulate online)
set(TESSERA_BELOW_agent emit nvml)
set(TESSERA_BELOW_k8s online)
set(TESSERA_BELOW_requests emit)
set(TESSERA_BELOW_control agent k8s requests)
set(TESSERA_BELOW_serving agent)
# What each floor uses outside Tessera, beside fmt.
set(TESSERA_USES_util nlohmann_json::nlohmann_json yaml-cpp)
set(TESSERA_USES_nvml nlohmann_json::nlohmann_json ${CMAKE_DL_LIBS})
set(TESSERA_USES_workload yaml-cpp)
set(TESSERA_USES_planners tessera_cbc)
set(TESSERA_USES_agent PkgConfig::HTTPLIB)
set(TESSERA_USES_k8s PkgConfig::HTTPLIB)
set(TESSERA_USES_control PkgConfig::SQLITE3 PkgConfig::HTTPLIB ZLIB::ZLIB)
set(TESSERA_USES_serving PkgConfig::HTTPLIB)
