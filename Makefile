# schedlab: the two commands from the README.
#   make demo   set up, build, run the demo
#   make test   set up, build, run the test suite (ctest)
#   make reproduce   run the published-results catalogue and regenerate docs/reproduction.md
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all setup build test demo bench reproduce clean

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	bash scripts/demo.sh $(BUILD)/schedlab

bench: build
	$(BUILD)/schedlab-bench

reproduce: build
	SCHEDLAB=$(BUILD)/schedlab bash scripts/reproduction.sh

clean:
	rm -rf $(BUILD)
