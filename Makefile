# The README's commands. Each target runs the set-up script first (a no-op when
# every package is present), then configures and builds out of tree in build/.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
WERROR ?= $(or $(TESSERA_WERROR),OFF)
SCENARIO ?= examples/scenarios/s3.yaml

.PHONY: setup configure build build-cli run test bench format clean

setup:
	@./scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DTESSERA_WERROR=$(WERROR) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) -- --no-print-directory

build-cli: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target tessera -- --no-print-directory

# Plans a bundled scenario on the embedded default profiles and draws every GPU.
run: build-cli
	./$(BUILD_DIR)/tessera plan --scenario $(SCENARIO) --svg $(BUILD_DIR)/plan.svg
	@echo "SVG of every GPU written to $(BUILD_DIR)/plan.svg"

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	./scripts/bench.sh $(BUILD_DIR)

format:
	@find include src app tests bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
