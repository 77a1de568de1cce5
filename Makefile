# schedlab: the two commands from the README.
#   make demo   set up, build, run the demo
#   make test   set up, build, run the test suite (ctest)
#   make reproduce   run the published-results catalogue and regenerate docs/reproduction.md
# and the checks CI adds:
#   make test-sanitize   the test suite built with ASan + UBSan (build-sanitize/)
#   make fuzz            every libFuzzer target for FUZZ_SECONDS each (build-fuzz/, clang)
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
SAN_BUILD ?= build-sanitize
FUZZ_SECONDS ?= 60

.PHONY: all setup build test demo bench reproduce clean test-sanitize fuzz

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

# Any ASan/UBSan report aborts the process (-fno-sanitize-recover), so it fails its test.
test-sanitize: setup
	cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCHEDLAB_SANITIZE=ON
	cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

fuzz: setup
	FUZZ_JOBS=$(JOBS) bash scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(SAN_BUILD) build-fuzz
