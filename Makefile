# The two commands of the README:
#   make run    set up, build, and run the main job: the coupled heat-diffusion workflow
#   make test   set up, build, and run every test, then the unit tests under ASan+UBSan
# Also: make bench (the benchmark programs), make clean.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_GEN  := -G Ninja --log-level=WARNING

.PHONY: all setup build run bench test test-asan clean

all: build

setup:
	@bash scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@bash scripts/demo.sh --build $(BUILD)

bench: build
	$(BUILD)/bench/cove-core-bench --csv $(BUILD)/core_bench.csv
	bash bench/staging_bench.sh --build $(BUILD)

test: build
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure
	@$(MAKE) --no-print-directory test-asan

test-asan: setup
	@cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCOVE_SANITIZE=address,undefined -DCOVE_BUILD_BENCH=OFF -DCOVE_BUILD_EXAMPLES=ON
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp ctest -j $(JOBS) --output-on-failure -L 'unit|example'

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
