# schedlab: the two commands from the README.
#   make demo   set up, build, run the demo
#   make test   set up, build, run the test suite (ctest)
#   make reproduce   run the published-results catalogue and regenerate docs/reproduction.md
# and the checks CI adds:
#   make test-sanitize   the test suite built with clang, ASan + UBSan (build-sanitize/)
#   make fuzz            every libFuzzer target for FUZZ_SECONDS each (the same build-sanitize/)
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
SAN_BUILD ?= build-sanitize
FUZZ_SECONDS ?= 60

.PHONY: all setup setup-demo setup-test configure build test demo bench reproduce clean test-sanitize fuzz

all: build

# scripts/setup.sh --demo: what building schedlab needs; --test: also what the test suite needs
# (python3, Chromium, Slurm, the real benchmarks); no option: also clang for the fuzz targets.
setup:
	@bash scripts/setup.sh
setup-demo:
	@bash scripts/setup.sh --demo
setup-test:
	@bash scripts/setup.sh --test

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: setup-test configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The demo builds only what it runs: the schedlab binary (not the tests, benchmarks, fuzz replays).
demo: setup-demo configure
	cmake --build $(BUILD) -j $(JOBS) --target schedlab
	bash scripts/demo.sh $(BUILD)/schedlab

bench: setup-test configure
	cmake --build $(BUILD) -j $(JOBS) --target schedlab-bench
	$(BUILD)/schedlab-bench

reproduce: setup-demo configure
	cmake --build $(BUILD) -j $(JOBS) --target schedlab
	SCHEDLAB=$(BUILD)/schedlab bash scripts/reproduction.sh --convergence

# Any ASan/UBSan report aborts the process (-fno-sanitize-recover), so it fails its test.
# One clang build serves both the sanitized test suite and the libFuzzer targets (scripts/fuzz.sh
# configures it the same way): clang compiles sanitized code in about 40 % of GCC's time.
# The sanitizer run leaves out workload.TbenchLong.* (tbench -t 600: ~220 s in Release, an hour
# under ASan); its code paths run there in workload.Tbench.TinyFourFiftySecondsSteadyPerInterval.
test-sanitize: setup
	FUZZ_BUILD=$(SAN_BUILD) bash scripts/fuzz.sh --configure
	cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -E '^workload\.TbenchLong\.'

fuzz: setup
	FUZZ_BUILD=$(SAN_BUILD) FUZZ_JOBS=$(JOBS) bash scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(SAN_BUILD)
