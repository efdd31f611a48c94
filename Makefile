# The README's commands. Each target runs the set-up script first (a no-op when
# every package is present), then configures and builds out of tree in build/.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
WERROR ?= $(or $(TESSERA_WERROR),OFF)
# TESSERA_UNITY_BUILD=ON (CI sets it): sources compiled in batches, a build
# from scratch in less time (CMakeLists.txt); unset, the build keeps what it
# was configured with.
UNITY_FLAG = $(if $(TESSERA_UNITY_BUILD),-DTESSERA_UNITY_BUILD=$(TESSERA_UNITY_BUILD))
SCENARIO ?= examples/scenarios/s3.yaml

ASAN_DIR ?= build-asan
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60

.PHONY: setup configure build build-cli run test check build-asan test-asan bench mutation fuzz format clean

setup:
	@./scripts/setup.sh

# -DTESSERA_WERROR only when asked for (TESSERA_WERROR or WERROR set): a
# build configured with warnings as errors keeps them, instead of every
# object rebuilding the next time `make check` runs without the variable.
configure: setup
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release \
	    $(if $(TESSERA_WERROR)$(filter-out file,$(origin WERROR)),-DTESSERA_WERROR=$(WERROR)) \
	    $(UNITY_FLAG) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) -- --no-print-directory

build-cli: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target tessera -- --no-print-directory

# Plans a bundled scenario on the embedded default profiles and draws every GPU.
run: build-cli
	./$(BUILD_DIR)/tessera plan --scenario $(SCENARIO) --svg $(BUILD_DIR)/plan.svg
	@echo "SVG of every GPU written to $(BUILD_DIR)/plan.svg"

# The Python validators of deploy's artifacts (tests/deploy/, ctest's
# DeployValidators) and the Python package's tests (python/tests/, ctest's
# PythonPackage; scripts/pypackage.sh builds and installs the package there
# first, linking this build's core archives and recompiling only what
# changed) run in $(BUILD_DIR)/pyenv, the
# dashboard's browser test (tests/dashboard/, DashboardE2E) with the npm packages of
# $(BUILD_DIR)/nodeenv: both made here, before ctest starts its parallel
# tests, and only when missing or stale. TESSERA_DOCS_SCREENSHOT=1 makes
# DashboardE2E rewrite docs/dashboard.png too. The extender's cluster tests
# (tessera_k8s_tests) need a real etcd, kube-apiserver and kube-scheduler:
# scripts/k8s-bins.sh builds them into build/k8s/bin (the default of CMake's
# TESSERA_K8S_BIN_DIR), and does nothing when they were built from the
# current tools/k8s-cluster/go.mod and go.sum.
test: build
	@./scripts/pyenv.sh $(BUILD_DIR)/pyenv
	@TESSERA_WERROR=$(WERROR) ./scripts/pypackage.sh $(BUILD_DIR)/pyenv $(BUILD_DIR)/python $(BUILD_DIR)
	@./scripts/nodeenv.sh $(BUILD_DIR)/nodeenv
	@./scripts/k8s-bins.sh
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# The quick loop: the unit, CLI and hostile-input tests, the agents and the
# control plane on the fake NVML over loopback, on a warm build. Left out:
# the tests labelled external (the Kubernetes cluster of Go binaries, the
# venv's Python tests, the browser, schemathesis) and those that run HAProxy
# (CHECK_EXCLUDE: the rehearsals, the router agent's live HAProxy). `make
# test` runs everything. It prints its time.
CHECK_EXCLUDE ?= ^RehearseCliTest\.|^RouterAgentTest\.Haproxy|^RouterObserverTest\..*Haproxy
check: configure
	@start=$$(date +%s); \
	cmake --build $(BUILD_DIR) -j $(JOBS) --target tessera tessera-net tessera-fake-nvml \
	    tessera-standin tessera_tests tessera_agent_tests -- --no-print-directory && \
	(cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE external -E '$(CHECK_EXCLUDE)'); \
	status=$$?; echo "make check: $$(( $$(date +%s) - start )) s"; exit $$status

# The unit, CLI and hostile-input tests again, built with AddressSanitizer and
# UBSan (-fno-sanitize-recover=all): the first report fails the test. CI runs
# it after `make test`. ASAN_EXCLUDE leaves out the four suites that search
# plans rather than read input (planner properties, the GA's seeds, SLO
# compliance of every planner, the exact planner's cross-check): together
# they took 14 of the 32 CPU-minutes of the full sanitized run, and
# `make test` runs them unsanitized; so are two tests that run every
# planner (`tessera compare` under its time limits, 38 s sanitized; every
# planner within --max-count, 26 s), whose planners' own tests run here.
# ASAN_EXCLUDE= runs everything. The sanitized build registers its tests
# with ctest one process per suite (CMakeLists.txt's TESSERA_TESTS_BY_SUITE:
# a sanitized process takes 0.35 s to start and end), and ASAN_EXCLUDE's
# tests are left out of those processes' filters when ctest starts
# (TESSERA_TESTS_EXCLUDED), not by `ctest -E`.
# It also leaves out the control loop under live traffic (RehearseCliTest.
# ServeReplans..., ACompressedDay...): sanitized, on two cores beside the rest of the suite, its
# emulators fell behind their batch times (resnet50 44% within its SLO in one
# window of a fresh-clone run, p99 1.4 s against 138 ms), so the window measured
# the sanitizer, not the loop; its code paths run sanitized in ControlPlaneTest,
# RouterAgentTest and the rehearsal's other tests.
# It leaves out the replicated control plane's fault tests too
# (ReplicaE2eTest: five sanitized processes and a three-member etcd on two
# cores beside the suite, with a 2 s lease, time the sanitizer, not the
# election); the etcd store, the election, the fence and the re-campaign
# after a lapsed lease run sanitized in ControlStoreTest, EtcdStoreTest,
# ControlPlaneTest and ControlServerTest against a real etcd.
# It leaves out the DRA driver's cluster tests (KubeDraTest): their C++ is
# the offers' replay in `tessera serve` and the test's own bookkeeping, which
# DraOffers and ControlServerTest run sanitized; sanitized, the 700 claims'
# round trips through kube-scheduler would add minutes, measuring the
# sanitizer.
# The node agent's tests run here too (LeakSanitizer found NVML's unload
# leak in them), but AgentCrashTest kills the agent at 4 points instead of
# 20 (TESSERA_SANITIZED): its 20 took 253 s here against 65 s unsanitized,
# the same code paths again. The cluster tests run here too, on `make
# test`'s binaries (build/k8s/bin; k8s-bins.sh builds them when missing or
# stale). DeployValidators (Python) is `make test`'s only.
# Optimisation -O1 (what AddressSanitizer's documentation suggests) and line
# tables only (-g1): reports still name file and line. Compiling
# src/transition/transition.cc sanitized took 52 CPU-s at -O2 -g, 42 at
# -O2 -g1 and, measured side by side on a loaded machine, 74 s at -O1 -g1
# against 112 s at -O2 -g1: the sanitized build is most of CI's time.
# The tests' own sources at -O0, as in every build (TESSERA_TEST_OPTIMIZATION;
# CMakeLists.txt says what it saves), the code they test at -O1.
# ASAN_SKIP_SOURCES: the files that hold only excluded suites are not even
# compiled here (skipped only while ASAN_EXCLUDE is set).
ASAN_EXCLUDE ?= ^(PlannerProperty|MigServingGenetic|SloCompliance|ExactCrosscheck)\.|^CliTest\.CompareSaysTheTimeLimits|^PoolTest\.EveryPlannerKeepsWithinMaxCount|^RehearseCliTest\.(ServeReplans|ACompressedDay)|^ReplicaE2eTest\.|^KubeDraTest\.
ASAN_SKIP_SOURCES ?= /tests/((planner_property|exact_crosscheck|slo_compliance|k8s_dra)_test|agent_replicas_e2e)\.cc$$
build-asan: setup
	@cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_SANITIZE=ON \
	    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O1 -g1 -DNDEBUG' \
	    -DTESSERA_TEST_SOURCES_SKIPPED='$(if $(ASAN_EXCLUDE),$(ASAN_SKIP_SOURCES))' \
	    -DTESSERA_TESTS_EXCLUDED='$(ASAN_EXCLUDE)' \
	    -DTESSERA_BUILD_BENCH=OFF -DTESSERA_WERROR=$(WERROR) $(UNITY_FLAG) >/dev/null
	@cmake --build $(ASAN_DIR) -j $(JOBS) -- --no-print-directory

test-asan: build-asan
	@./scripts/k8s-bins.sh
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	    UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# Mutation testing of the DRA node plugin's gRPC handlers (dra/tools/mutate):
# every comparison flipped, condition negated and call removed in them, one
# at a time, must fail the plugin's tests (docs/dra.md). About 3 minutes on
# two cores; not part of `make test`.
mutation:
	cd dra && go run ./tools/mutate -file internal/plugin/plugin.go \
	    -funcs PrepareResourceClaims,prepare,checkOverlap,resultDevices,UnprepareResourceClaims,unprepare \
	    -pkg ./internal/plugin -jobs $(JOBS)

# Every libFuzzer harness of fuzz/ for FUZZ_SECONDS each, seeded with its
# corpus in fuzz/corpus/<harness>/ (new inputs go to $(FUZZ_DIR)/corpus/).
fuzz:
	@./scripts/setup.sh --fuzz
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DTESSERA_FUZZ=ON -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(FUZZ_DIR) -j $(JOBS) -- --no-print-directory
	./scripts/fuzz.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

# The Python package's figure (python/bench/bench_plan.py) runs in
# PYTHON_BENCH, a python with the package installed (`make test` installs it
# in $(BUILD_DIR)/pyenv); bench.sh prints why it skips it otherwise.
PYTHON_BENCH ?= $(BUILD_DIR)/pyenv/bin/python
bench: build
	PYTHON_BENCH=$(PYTHON_BENCH) ./scripts/bench.sh $(BUILD_DIR)

format:
	@find include src app tests bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(FUZZ_DIR)
