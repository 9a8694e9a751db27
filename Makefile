# Thin front end over CMake (STYLE.md practice 10). `make run` and `make test`
# do all set-up on a fresh Debian 12 machine: both start with `make deps`.

BUILD       ?= build
COV_BUILD   ?= build-coverage
JOBS        ?= $(shell nproc)
# CI (CI=true) builds with warnings as errors.
WERROR      ?= $(if $(CI),ON,OFF)
CMAKE_FLAGS ?=
OUT         ?= out

# DESIGN.md section 8, plus the tools the build and benchmarks call.
DEB_PACKAGES := cmake ninja-build g++ pkg-config python3 \
  libsimgrid-dev libboost-graph-dev libhwloc-dev libeigen3-dev liblua5.4-dev \
  libibverbs-dev librdmacm-dev liburing-dev librocksdb-dev libisal-dev libssl-dev \
  libopenmpi-dev openmpi-bin nlohmann-json3-dev libcli11-dev libfmt-dev \
  googletest libgtest-dev libgmock-dev gcovr libbenchmark-dev gnuplot-nox \
  iperf3 fio iproute2

.PHONY: all deps configure build test run coverage clean

all: build

# Install the Debian packages that are missing; nothing when all are present.
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	  done); \
	if [ -z "$$missing" ]; then echo "make deps: all Debian packages present"; exit 0; fi; \
	echo "make deps: installing:" $$missing; \
	if [ "$$(id -u)" != 0 ]; then echo "make deps: root is needed to install:" $$missing >&2; exit 1; fi; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DSLUICE_WERROR=$(WERROR) $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: deps
	$(MAKE) build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --timeout 600

# The default study. Until SimEnv and the Lua layer land, it shows what the
# core computes today: the DGX A100 model, its path classes, the nvidia-fs-style
# peer ranks and the scheduler's choices, written to $(OUT)/.
run: deps
	$(MAKE) build
	mkdir -p $(OUT)
	./$(BUILD)/sluice topo show dgx_a100 --out $(OUT)

coverage: deps
	cmake -S . -B $(COV_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSLUICE_COVERAGE=ON $(CMAKE_FLAGS)
	cmake --build $(COV_BUILD) -j $(JOBS)
	find $(COV_BUILD) -name '*.gcda' -delete
	ctest --test-dir $(COV_BUILD) -j $(JOBS) --timeout 900 > $(COV_BUILD)/ctest.log || (tail -50 $(COV_BUILD)/ctest.log; exit 1)
	python3 tests/coverage_by_folder.py $(COV_BUILD)

# make bench-NAME builds and runs the benchmark target bench_NAME.
bench-%: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target bench_$* -j $(JOBS)
	./$(BUILD)/tests/bench_$*

clean:
	rm -rf $(BUILD) $(COV_BUILD) $(OUT)
