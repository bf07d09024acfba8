# Thin wrapper: the two commands of the README. Everything real lives in CMake and scripts/.
BUILD ?= build
JOBS ?= $(shell nproc)
PYTHONPATH_LINE := PYTHONPATH=$(CURDIR)/$(BUILD)/bindings:$(CURDIR)/bindings/python

.PHONY: run test build deps configure python clean

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

clean:
	rm -rf $(BUILD) out
