# Thin wrapper: the two commands of the README. Everything real lives in CMake and scripts/.
BUILD ?= build
JOBS ?= $(shell nproc)
PYTHONPATH_LINE := PYTHONPATH=$(CURDIR)/$(BUILD)/bindings:$(CURDIR)/bindings/python

.PHONY: run test build deps configure python clean fuzz fuzz-build sanitize tsan check-all

# Checked builds, each in its own directory (docs/errors.md has what they found and how long they take):
#   make sanitize   everything built with AddressSanitizer + UndefinedBehaviorSanitizer (gcc), whole suite
#   make fuzz       libFuzzer harnesses of the loaders (clang-14), FUZZ_SECONDS each (default 60)
#   make tsan       ThreadSanitizer on what runs threads: the planner's tests and whole plans
#   make check-all  make test, then all three (too long for make test's 20 minutes on 2 cores)
SANITIZE_BUILD ?= build-sanitize
FUZZ_BUILD ?= build-fuzz
TSAN_BUILD ?= build-tsan
FUZZ_SECONDS ?= 60

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

python: build

run: build
	@bash scripts/headline.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900

sanitize:
	@bash scripts/install-deps.sh
	@cmake -S . -B $(SANITIZE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRACKSIM_SANITIZE=ON \
	  -DRACKSIM_BUILD_BENCH=OFF -DRACKSIM_BUILD_PROBES=OFF >/dev/null
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	@bash scripts/sanitize-tests.sh $(SANITIZE_BUILD) $(JOBS)

tsan:
	@bash scripts/install-deps.sh
	@cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRACKSIM_TSAN=ON \
	  -DRACKSIM_BUILD_BENCH=OFF -DRACKSIM_BUILD_PYTHON=OFF -DRACKSIM_BUILD_PROBES=OFF >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target racksim_unit_tests racksim racksim-engine
	@bash scripts/tsan-checks.sh $(TSAN_BUILD)

fuzz-build:
	@bash scripts/install-deps.sh fuzz
	@cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1" -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DRACKSIM_FUZZ=ON -DRACKSIM_BUILD_TESTS=OFF -DRACKSIM_BUILD_BENCH=OFF -DRACKSIM_BUILD_PYTHON=OFF \
	  -DRACKSIM_BUILD_PROBES=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers

fuzz: fuzz-build
	@bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

check-all: test sanitize fuzz tsan

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD) $(FUZZ_BUILD) $(TSAN_BUILD) out
