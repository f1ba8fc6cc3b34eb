# The two commands of the README:
#   make run    set up, build, and run the main job: the coupled heat-diffusion workflow
#   make test   set up, build, and run every test, then the unit tests under ASan+UBSan,
#               then every fuzz target over its corpus plus 10^4 new inputs
# Also: make run-python (the main job with its analysis in Python), make fuzz (every libFuzzer target for FUZZ_SECONDS each, default
# 60, then garbage on a real server's listeners for FUZZ_SECONDS), make soak (8 clients against 2 servers for SOAK_SECONDS, default
# 600, with the servers' memory and descriptors), make bench (the benchmark programs, then bench-workflow and
# bench-compare), make bench-workflow (the layout reorganization
# experiments), make bench-compare (Cove side by side with files, HDF5, MPI
# and ADIOS2 SST; BENCH_ARGS=--quick for a run under two minutes), make
# test-tsan (the concurrent parts under ThreadSanitizer, in-process and over
# UCX), make mutate (each one-line mutation of tests/mutations.ini applied in
# turn, its targets rebuilt and its tests run: a table of caught / not
# caught; not part of make test; MUTATE_ARGS="--only NAME" for one), make
# conformance (the HDF5 and PnetCDF front ends against their native
# libraries' own test suites, one table; CONFORMANCE_SUITES="hdf5" for one,
# "hdf5_api" for HDF5's API tests;
# minutes, not part of make test), make pip-check (a fresh venv, `pip install .`, its cove and cove-server scripts
# and two-process runs with the reader first; minutes, not part of make
# test), make clean.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_GEN  := -G Ninja --log-level=WARNING

TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
SOAK_SECONDS ?= 600
BENCH_ARGS ?=
WORKFLOW_ARGS ?=

.PHONY: conformance pip-check run-python soak mutate all setup build run bench bench-workflow bench-compare bench-placement bench-network bench-quick test test-asan test-tsan test-fuzz fuzz fuzz-build fuzz-garbage clean

all: build

setup:
	@bash scripts/setup.sh

# The Python package builds against $(BUILD)/venv (scripts/setup-python.sh);
# the HDF5 VOL connector against parallel HDF5 1.14 in $(BUILD)/hdf5
# (scripts/setup-hdf5.sh, built once from Debian's source package), and
# h5py from source against it in $(BUILD)/venv (scripts/setup-h5py.sh).
build: setup
	@bash scripts/setup-hdf5.sh $(BUILD)
	@bash scripts/build-hdf5-api-tests.sh $(BUILD)
	@bash scripts/setup-python.sh $(BUILD)
	@bash scripts/setup-h5py.sh $(BUILD)
	@cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(CURDIR)/$(BUILD)/venv/bin/python
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@bash scripts/demo.sh --build $(BUILD)

# The main job with the analysis in Python (3 mpi4py ranks, numpy, a
# matplotlib PNG every 5 steps in $(BUILD)/heat-plots), the package
# installed into $(BUILD)/venv by `pip install .` (docs/python.md).
run-python: build
	@$(BUILD)/venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation .
	@bash scripts/demo.sh --build $(BUILD) --python $(CURDIR)/$(BUILD)/venv/bin/python --plots $(BUILD)/heat-plots

# What a pip-only user gets (scripts/pip-check.sh, docs/python.md): needs
# scripts/setup.sh's compilers and PyPI; works in $(BUILD)/pip-check.
pip-check: setup
	@bash scripts/pip-check.sh $(BUILD)

CONFORMANCE_SUITES ?=
conformance: build
	@bash scripts/conformance.sh $(BUILD) $(CONFORMANCE_SUITES)

bench: build
	$(BUILD)/bench/cove-core-bench --csv $(BUILD)/core_bench.csv
	bash bench/staging_bench.sh --build $(BUILD)
	@$(MAKE) --no-print-directory bench-network
	PYTHONPATH=$(BUILD)/python $(BUILD)/venv/bin/python bench/python_bench.py --build $(BUILD) --csv $(BUILD)/python_bench.csv
	@$(MAKE) --no-print-directory bench-workflow
	@$(MAKE) --no-print-directory bench-compare
	@$(MAKE) --no-print-directory bench-placement

# The in-staging placement paper's Figures 8-11 by simulation with the
# servers' placement code (docs/placement.md): CSV and PNG files in
# $(BUILD)/placement-sim, the issue's targets as same-run ratios.
PLACEMENT_ARGS ?=
bench-placement: build
	$(BUILD)/bench/cove-placement-sim --out $(BUILD)/placement-sim $(PLACEMENT_ARGS)
	@py=$(BUILD)/bench-venv/bin/python; [ -x $$py ] || py=/usr/bin/python3; \
	  $$py bench/placement_plots.py $(BUILD)/placement-sim

# The optional baselines (parallel HDF5, ADIOS2 and matplotlib in
# $(BUILD)/bench-venv) are installed first; a method that still cannot run
# is reported as skipped, with the reason.
bench-compare: setup
	@bash scripts/setup-bench.sh $(BUILD)
	@$(MAKE) --no-print-directory build
	@py=$(BUILD)/bench-venv/bin/python; [ -x $$py ] || py=python3; \
	  $$py bench/compare.py --build $(BUILD) $(BENCH_ARGS)
	@if [ -x $(BUILD)/bench/cove-pnetcdf-s3d ]; then \
	  python3 bench/pnetcdf_compare.py --build $(BUILD) $(if $(findstring --quick,$(BENCH_ARGS)),--quick); \
	else echo "PnetCDF exchange skipped: $(BUILD)/bench/cove-pnetcdf-s3d not built (COVE_ENABLE_PNETCDF)"; fi

# Between hosts, on one: MPI, ucx_perftest and Cove over TCP on loopback and
# between two network namespaces (veth), same run (bench/network.py; ucx_perftest comes with scripts/setup-bench.sh).
bench-network: build
	@bash scripts/setup-bench.sh $(BUILD)
	python3 bench/network.py --build $(BUILD) $(if $(findstring --quick,$(BENCH_ARGS)),--quick)

bench-quick:
	@$(MAKE) --no-print-directory bench-compare BENCH_ARGS="--quick $(BENCH_ARGS)"

# Plots need matplotlib, from the same bench-venv.
bench-workflow: setup
	@bash scripts/setup-bench.sh $(BUILD)
	@$(MAKE) --no-print-directory build
	@py=$(BUILD)/bench-venv/bin/python; [ -x $$py ] || py=python3; \
	  $$py bench/workflow.py experiments --build $(BUILD) $(WORKFLOW_ARGS)

test: build
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure
	@$(MAKE) --no-print-directory test-asan
	@$(MAKE) --no-print-directory test-fuzz

# libFuzzer targets (fuzz/), built with clang, ASan and UBSan.
fuzz-build: setup
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCOVE_SANITIZE=address,undefined -DCOVE_BUILD_FUZZ=ON -DCOVE_BUILD_TESTS=OFF -DCOVE_BUILD_BENCH=OFF -DCOVE_ENABLE_PYTHON=OFF \
	  -DCOVE_BUILD_EXAMPLES=OFF -DCOVE_ENABLE_UCX=OFF -DCOVE_ENABLE_CUDA=OFF
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target cove-fuzz-wire cove-fuzz-messages cove-fuzz-dispatch

# Each target over its corpus plus 10^4 new inputs.
test-fuzz: fuzz-build
	bash fuzz/run.sh $(FUZZ_BUILD) --runs 10000

fuzz: fuzz-build
	bash fuzz/run.sh $(FUZZ_BUILD) --seconds $(FUZZ_SECONDS)
	@$(MAKE) --no-print-directory fuzz-garbage

# Garbage of new random shapes on a real server's own listeners for
# FUZZ_SECONDS, each round followed by a put and a get with every value
# checked (tests/integration/garbage.sh; garbage.cove in make test runs one round).
fuzz-garbage: build
	@COVE_BIN=$(CURDIR)/$(BUILD)/tools COVE_TEST_BIN=$(CURDIR)/$(BUILD)/tests UCX_TLS=tcp UCX_WARN_UNUSED_ENV_VARS=n \
	  bash tests/integration/garbage.sh $(CURDIR)/$(BUILD)/fuzz-garbage cove $(FUZZ_SECONDS)

# 8 clients of mixed operations against a group of 2 servers for
# SOAK_SECONDS; the servers' RSS and descriptors every 10 s, as a table and
# $(BUILD)/soak/soak.png (matplotlib from bench-venv, when it is there).
soak: build
	@COVE_BIN=$(CURDIR)/$(BUILD)/tools COVE_TEST_BIN=$(CURDIR)/$(BUILD)/tests \
	  COVE_BENCH_PYTHON=$(CURDIR)/$(BUILD)/bench-venv/bin/python UCX_TLS=tcp UCX_WARN_UNUSED_ENV_VARS=n \
	  bash tests/soak/soak.sh $(CURDIR)/$(BUILD)/soak $(SOAK_SECONDS) 10 8

# Tests that pass when what they name is broken: each mutation of
# tests/mutations.ini must make one of its tests fail (scripts/mutate.py;
# the tree is put back after each, even on Ctrl-C). Mutations whose targets
# this build lacks (the VOL's without HDF5) are skipped, saying so.
MUTATE_ARGS ?=
mutate: build
	python3 scripts/mutate.py --build $(BUILD) $(MUTATE_ARGS)

# The unit tests and examples under ASan and UBSan. Two transport variants
# of the staging suite run in the plain ctest run only, to keep make test
# under 30 minutes on 2 cores: staging.tcp (under ASan its code is
# staging.local_socket's: the same frames, every byte through the socket)
# and staging.ucx_tcp (UCX, no longer the default transport). For the same
# reason only what those tests run is built: the unit tests, the C API
# test, the cove program (placement.cove_graph) and the first example.
ASAN_TARGETS := cove-unit-tests cove-capi-test cove_tool example_01_region_copy
test-asan: setup
	@cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCOVE_SANITIZE=address,undefined -DCOVE_BUILD_BENCH=OFF -DCOVE_BUILD_EXAMPLES=ON -DCOVE_ENABLE_CUDA=OFF -DCOVE_ENABLE_PYTHON=OFF
	@cmake --build $(ASAN_BUILD) -j $(JOBS) --target $(ASAN_TARGETS)
	cd $(ASAN_BUILD) && LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp ctest -j $(JOBS) --output-on-failure -L 'unit|example' -E '^staging\.(tcp|ucx_tcp)$$'

# UCX's memory hooks and ThreadSanitizer's interceptors cannot both patch
# malloc/madvise (a crash at thread start): the hooks are off here.
TSAN_ENV := UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_EVENTS=no UCX_WARN_UNUSED_ENV_VARS=n
TSAN_CHURN_SECONDS ?= 60
TSAN_FILTER := --gtest_filter='*Staging*:*NToM*:Group*:ThreadPool*:RegionCopy.Random*:Replicas*:*EveryLayoutPair*'

test-tsan: setup
	@cmake -S . -B $(TSAN_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCOVE_SANITIZE=thread -DCOVE_BUILD_BENCH=OFF -DCOVE_BUILD_EXAMPLES=OFF -DCOVE_ENABLE_CUDA=OFF -DCOVE_ENABLE_PYTHON=OFF
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target cove-unit-tests cove_tool cove-test-churn
	$(TSAN_ENV) $(TSAN_BUILD)/tests/cove-unit-tests $(TSAN_FILTER)
	$(TSAN_ENV) COVE_TEST_TRANSPORT=ucx UCX_TLS=tcp $(TSAN_BUILD)/tests/cove-unit-tests --gtest_filter='*Staging*:*NToM*:Group*'
	@# The churn test at length, server and clients under TSan: any report,
	@# the server's included, lands in the reports folder and fails the run.
	@for mode in staged local; do \
	  reports=$(CURDIR)/$(TSAN_BUILD)/churn-reports.$$mode; rm -rf $$reports; mkdir -p $$reports; \
	  echo "churn $$mode, $(TSAN_CHURN_SECONDS) s, under ThreadSanitizer"; \
	  $(TSAN_ENV) TSAN_OPTIONS=log_path=$$reports/report COVE_BIN=$(CURDIR)/$(TSAN_BUILD)/tools \
	    COVE_TEST_BIN=$(CURDIR)/$(TSAN_BUILD)/tests \
	    bash tests/integration/churn.sh $(CURDIR)/$(TSAN_BUILD)/churn.$$mode $$mode $(TSAN_CHURN_SECONDS) || exit 1; \
	  if ls $$reports/report.* > /dev/null 2>&1; then cat $$reports/report.*; exit 1; fi; \
	done

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
