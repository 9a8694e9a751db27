# Thin front end over CMake (CONTRIBUTING.md#style). `make run` and `make test`
# do all set-up on a fresh Debian 12 machine: both start with `make deps`.

BUILD       ?= build
COV_BUILD   ?= build-coverage
JOBS        ?= $(shell nproc)
# CI (CI=true) builds with warnings as errors.
WERROR      ?= $(if $(CI),ON,OFF)
CMAKE_FLAGS ?=
OUT         ?= out

# docs/design.md#dependencies, plus the tools the build and benchmarks call.
DEB_PACKAGES := cmake ninja-build g++ pkg-config python3 python3-jsonschema python3-pandas \
  libsimgrid-dev libboost-graph-dev libhwloc-dev libeigen3-dev liblua5.4-dev libyaml-cpp-dev \
  libucx-dev ucx-utils liburing-dev librocksdb-dev libisal-dev libssl-dev \
  libopenmpi-dev openmpi-bin nlohmann-json3-dev libcli11-dev libfmt-dev \
  googletest libgtest-dev libgmock-dev gcovr libbenchmark-dev gnuplot-nox \
  iperf3 fio sockperf iproute2 nftables clang-format \
  libfuse3-dev fuse3 stress-ng autoconf automake perl git rsync python3-venv make

.PHONY: all deps configure build test run coverage fuzz sanitize tsan clean format

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

# The default study (issue 7, study 2): the BeeOND elbencho sweep on 4 Azure
# ND40rs_v2 nodes in simulation; prints its table and headlines and writes
# $(OUT)/results.json and $(OUT)/results.csv.
# The default study at a size a 2-core machine simulates in minutes (the
# script's own defaults are the seed's full scale: RUN_SET= runs those).
RUN_SET ?= --set files=1280 --set sizes=256KiB,1MiB,16MiB --set threads=1,8,32
# Applies .clang-format (clang-format 14) to every C++ source; the ctest
# structure.format checks it.
format:
	find core base det sim hw hw_backends transports scenarios analysis tests \
	  \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' \) -print0 | xargs -0 clang-format -i

# Builds only the sluice binary and what it links (not the tests): the first
# result of a fresh clone comes sooner; `make test` builds the rest.
run: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target sluice -j $(JOBS)
	./$(BUILD)/sluice run lua_scripts/beeond_azure_sweep.lua --out $(OUT) $(RUN_SET)

coverage: deps
	cmake -S . -B $(COV_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSLUICE_COVERAGE=ON $(CMAKE_FLAGS)
	cmake --build $(COV_BUILD) -j $(JOBS)
	find $(COV_BUILD) -name '*.gcda' -delete
	ctest --test-dir $(COV_BUILD) -j $(JOBS) --timeout 900 > $(COV_BUILD)/ctest.log || (tail -50 $(COV_BUILD)/ctest.log; exit 1)
	python3 tests/coverage_by_folder.py $(COV_BUILD)

# make bench-NAME builds and runs the benchmark target bench_NAME.
# BENCH_SMOKE=1: any bench-* target in its smoke form (CONTRIBUTING.md#benchmarks): one point, one
# repeat, the smallest size, in seconds; it prints its RESULT line, which says nothing against the goal.
# The benchmarks and their scripts read SLUICE_BENCH_SMOKE (tests/bench/smoke.hpp); ctest
# bench.smoke.<name> runs every target so (tests/bench/smoke.sh).
BENCH_SMOKE ?= 0
export SLUICE_BENCH_SMOKE := $(BENCH_SMOKE)
bench_smoke := $(filter-out 0,$(BENCH_SMOKE))
# Every real run lands in the record of results (issue 49 item 6): a benchmark command's output
# goes to the terminal and through tee to $(BENCH_LOG_DIR)/TARGET[-PART].log, whose RESULT lines
# scripts/bench_record.py then appends to docs/bench_results.jsonl with the machine, the UTC date,
# the target and the commit (and the exit status where the benchmark failed: the target still fails),
# and docs/benchmarks.md and the README's table are rendered again (make bench-report).
# BENCH_SMOKE=1 records nothing (CI's smoke runs write nothing to docs/). The bench-* recipes run
# in bash with pipefail. $(call bench_logged,COMMAND[,PART]) runs COMMAND so.
BENCH_LOG_DIR ?= $(OUT)/bench-logs
bench-%: private SHELL := /bin/bash
bench-%: private .SHELLFLAGS := -o pipefail -c
bench_log = $(BENCH_LOG_DIR)/$@$(if $(2),-$(2)).log
bench_logged = $(if $(bench_smoke),$(1),mkdir -p $(BENCH_LOG_DIR) || exit; { $(1) ; } 2>&1 | tee $(bench_log); \
  rc=$$?; python3 scripts/bench_record.py --command 'make $@' --exit-status $$rc $(bench_log) || exit; \
  python3 scripts/bench_report.py || exit; exit $$rc)
bench-%: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target bench_$* -j $(JOBS)
	$(call bench_logged,$(BUILD)/tests/bench_$*)

# make bench-report (issue 49 item 6): docs/benchmarks.md and the README's headline table, rendered
# from docs/bench_results.jsonl (scripts/bench_report.py: the latest run of each figure with its
# machine and date, then the older runs); `python3 scripts/bench_report.py --check` (ctest
# bench.report) fails when either is not what the record renders.
.PHONY: bench-report
bench-report:
	python3 scripts/bench_report.py

# The whole test suite under ASan+UBSan, and the threaded parts (HwEnv,
# transports, emulation, hw backends, the HwEnv soak) under TSan. Too slow for every CI run on
# 2 cores; run before a release and after changing threaded code. The F1
# fidelity test is left out of the TSan run: it measures throughput, which
# TSan's slowdown changes (it is not a race check). tests/tsan.supp says why
# each suppression is there.
SAN_BUILD  ?= build-asan
TSAN_BUILD ?= build-tsan
sanitize: deps
	cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_SANITIZE=ON -DSLUICE_WITH_CUDA=OFF $(CMAKE_FLAGS)
	cmake --build $(SAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(SAN_BUILD) --output-on-failure -j $(JOBS) --timeout 1200 -E 'EmulateMpi'
	# Under mpirun, Open MPI's components (dlopen'ed, closed at MPI_Finalize)
	# leave allocations whose stacks point into unloaded code, so no
	# suppression can name them: that test runs without leak detection.
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(SAN_BUILD) --output-on-failure --timeout 1200 -R 'EmulateMpi'
tsan: deps
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_TSAN=ON -DSLUICE_WITH_CUDA=OFF $(CMAKE_FLAGS)
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target test_base test_transports test_hw_backends test_hw_env test_emulate test_soak
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp" ctest --test-dir $(TSAN_BUILD) \
	  --output-on-failure -j $(JOBS) --timeout 1200 -L 'base|transports|hw_backends|hw_env|emulate' \
	  -E 'ScriptCalibrationNetns'
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp" ctest --test-dir $(TSAN_BUILD) \
	  --output-on-failure -j $(JOBS) --timeout 1200 -R 'SoakHwEnv|FaultyBackend'

# libFuzzer runs of every harness in tests/fuzz (clang, ASan+UBSan), FUZZ_RUNS
# executions each, starting from the built-in seeds and the committed corpus.
# A crash leaves crash-* in $(FUZZ_BUILD)/work/<name>/: copy it to
# tests/fuzz/regressions/<name>/ so every build replays it (ctest fuzz.<name>).
FUZZ_BUILD   ?= build-fuzz
FUZZ_RUNS    ?= 1000000
FUZZ_TARGETS := wire_decode nvidia_smi hwloc_xml cluster_json results_json dlio_yaml
fuzz: deps
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_FUZZ=ON \
	  -DSLUICE_WITH_CUDA=OFF -DSLUICE_WITH_CUFILE=OFF \
	  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS)) $(addprefix fuzz_replay_,$(FUZZ_TARGETS))
	@set -e; for h in $(FUZZ_TARGETS); do \
	  w=$(FUZZ_BUILD)/work/$$h; rm -rf $$w; mkdir -p $$w/corpus; \
	  ./$(FUZZ_BUILD)/tests/fuzz_replay_$$h --write-seeds $$w/corpus >/dev/null; \
	  [ -d tests/fuzz/corpus/$$h ] && cp tests/fuzz/corpus/$$h/* $$w/corpus/ || true; \
	  echo "make fuzz: $$h: $(FUZZ_RUNS) runs"; \
	  if (cd $$w && ASAN_OPTIONS=detect_leaks=1 ../../tests/fuzz_$$h -runs=$(FUZZ_RUNS) -max_len=65536 -timeout=30 \
	        -print_final_stats=1 corpus > fuzz.log 2>&1); then tail -6 $$w/fuzz.log; \
	  else tail -40 $$w/fuzz.log; echo "make fuzz: $$h failed: see $$w/fuzz.log and $$w/crash-* / timeout-*"; exit 1; fi; \
	done

clean:
	rm -rf $(BUILD) $(COV_BUILD) $(OUT)

# make bench-gpu (issues 6 and 20, P6; a GPU machine): bench_gpu with KvikIO as
# its peer, from the libkvikio-cu13 wheel (scripts/gpu_machine/kvikio_wheel.sh: pip
# download into .whl/, nothing installed). KVIKIO=0 builds it without the peer.
.PHONY: bench-gpu
bench-gpu: deps
	$(MAKE) configure
	$(if $(filter 0,$(KVIKIO)),,cmake -S . -B $(BUILD) -DSLUICE_KVIKIO_ROOT=$$(bash scripts/gpu_machine/kvikio_wheel.sh $(CURDIR)/.whl))
	cmake --build $(BUILD) --target bench_gpu -j $(JOBS)
	$(call bench_logged,$(BUILD)/tests/bench_gpu)

# make bench-sim (issues 4 and 20): bench_sim (P1, P2 and the scale studies),
# then P8, metadata sharding scale-out at 1, 4, 16, 64 shards in simulation
# (scripts/bench_sharding.sh: marginal rates between two sizes, so start and
# drain cancel); prints RESULT P8 efficiency_64=<create/stat, the smaller>.
# Then P11: the study library at its seeds' sizes, one study after the other
# with --jobs = cores (scripts/bench_fidelity.sh, into out/bench_sim_p11):
# RESULT P11 library_wall_s=<s> cores=<n> (goal: under 900 s on 16 cores).
# Then P12 and P12b (issue 50, scripts/bench_fluid.sh): issue 48's 18 + 50
# read per chunk and in fluid mode, RESULT P12 fluid_wall_s=.. chunk_wall_s=..
# speedup=.. max_err=..; and 200 + 600 nodes in fluid mode,
# RESULT P12b big_wall_s=.. max_rss_gib=.. (one core each).
.PHONY: bench-sim
bench-sim: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target bench_sim sluice -j $(JOBS)
	$(call bench_logged,$(BUILD)/tests/bench_sim)
	$(call bench_logged,SLUICE=$(BUILD)/sluice JOBS=$(JOBS) P8_OUT=$(OUT)/p8 timeout 3600 bash scripts/bench_sharding.sh,p8)
	$(call bench_logged,SLUICE=$(BUILD)/sluice JOBS=$(JOBS) FIDELITY_OUT=$(OUT)/bench_sim_p11 \
	  bash scripts/bench_fidelity.sh,p11)
	$(call bench_logged,SLUICE=$(BUILD)/sluice P12_OUT=$(OUT)/bench_sim_p12 bash scripts/bench_fluid.sh,p12)

# make bench-fidelity (issue 19, F3): the seed studies in simulation at their
# seeds' sizes, then `sluice fidelity`: the table of published vs simulated
# figures and RESULT F3 median_err=<pct> within_tolerance=<n>/<m>; the
# Markdown report with plots in out/fidelity/fidelity.md
# (scripts/bench_fidelity.sh: the sizes, and FIDELITY_PUBLISH=docs/fidelity).
.PHONY: bench-fidelity
bench-fidelity: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target sluice -j $(JOBS)
	$(call bench_logged,SLUICE=$(BUILD)/sluice JOBS=$(JOBS) FIDELITY_OUT=$(OUT)/fidelity bash scripts/bench_fidelity.sh)

# make bench-roofline (issue 48 item 2, P13): ROOFLINE_COUNT seeded configurations
# (tests/physics/roofline.lua at full scale, seed ROOFLINE_SEED) simulated at saturation, each
# phase against its analytic bound: RESULT P13 roofline_min=.. roofline_p10=.. roofline_median=..
# unexplained=N configs=M, exit 1 when a ratio is above its bound or below 0.9 unexplained
# (tests/physics/roofline_expected.json). BENCH_SMOKE=1: 4 small configurations.
ROOFLINE_COUNT ?= $(if $(bench_smoke),4,300)
ROOFLINE_SCALE ?= $(if $(bench_smoke),ci,full)
# Full scale in fluid mode: the roofline checks each phase's aggregate rate, which fluid
# gives within 2% of per chunk (docs/sim.md, "Fluid mode"), and auto would run the
# saturated one-client points per chunk for their per-flow distortion (minutes each).
ROOFLINE_SIM_MODE ?= $(if $(bench_smoke),,fluid)
ROOFLINE_SEED ?= 1
.PHONY: bench-roofline
bench-roofline: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target sluice -j $(JOBS)
	$(call bench_logged,JOBS=$(JOBS) SIM_MODE=$(ROOFLINE_SIM_MODE) bash tests/physics/roofline.sh $(BUILD)/sluice \
	  $(OUT)/roofline $(ROOFLINE_SCALE) \
	  $(ROOFLINE_COUNT) $(ROOFLINE_SEED))

# make bench-f1 (issue 8, F1; needs root): calibrate_links.lua on the netns-emulated
# cluster at a larger size than the CI test (tests/scenarios/calibrate/script_calibration_test.cpp):
# fit on links of 200 and 500 Mb/s, predict 300 Mb/s with stripe count 3 and other file
# sizes; prints RESULT F1 median_err=<pct> p90_err=<pct>.
F1_SETS := --set files=6 --set holdout_sizes=8MiB,24MiB
F1_SMOKE_SETS := --set files=1 --set fit_stripes=1 --set fit_sizes=1MiB,4MiB --set holdout_stripes=2 \
  --set holdout_sizes=2MiB
bench-f1: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target sluice sluice-node -j $(JOBS)
	$(call bench_logged,timeout 1800 $(BUILD)/sluice calibrate lua_scripts/calibrate_links.lua --backend emulate \
	  --out $(OUT)/f1 $(if $(bench_smoke),$(F1_SMOKE_SETS),$(F1_SETS)))

# make bench-f4 (issue 22, F4): the simulator's drive model fitted to fio on this machine's drive
# (lua_scripts/calibrate_disk.lua; fio with O_DIRECT in F4_DIR, which must be on the drive to
# model): fit on 4 KiB .. 16 MiB blocks at queue depths 1, 8, 64, sequential and random, read
# and write; the drive's channel count from the 4 KiB fit points (--estimate-channels), then the fit;
# predict 16 KiB, 256 KiB and 4 MiB blocks at depths 4 and 32; prints
# RESULT F4 median_err=<pct> p90_err=<pct>. The fitted profile: $(OUT)/f4/profiles/calibrated.json.
F4_DIR ?= /var/tmp/sluice-f4
F4_REPEATS ?= $(if $(bench_smoke),1,3)
# BENCH_SMOKE=1: 4 KiB at 3 depths (what --estimate-channels needs) and 1 MiB, sequential, few bytes.
F4_SMOKE_SETS := --set fit_bs=4KiB,1MiB --set fit_qd=1,4,16 --set access=sequential --set holdout_bs=256KiB \
  --set holdout_qd=4 --set phase_bytes=16MiB --set max_requests=512
.PHONY: bench-f4
bench-f4: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target sluice -j $(JOBS)
	$(call bench_logged,SLUICE=$(BUILD)/sluice F4_DIR=$(F4_DIR) F4_REPEATS=$(F4_REPEATS) bash scripts/f4_calibrate.sh \
	  --out $(OUT)/f4 $(if $(bench_smoke),$(F4_SMOKE_SETS)))

# make bench-hw (issue 20, P10): a file sweep through the whole hardware stack (`sluice run
# --backend hw --storage-backend uring`, tests/bench/hw_stack.lua) against fio with the same
# pattern in the same directory (BENCH_HW_DIR, default /var/tmp/sluice-bench-hw: a disk),
# 1 MiB and 16 MiB blocks, write and read; prints RESULT P10 read_vs_fio=.. write_vs_fio=..
.PHONY: bench-hw
bench-hw: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target sluice -j $(JOBS)
	$(call bench_logged,SLUICE=$(BUILD)/sluice timeout 3600 bash scripts/bench_hw.sh)

# make bench-mount (issue 23, P9): fio through `sluice mount` against sluice's own file_sweep of the
# same pattern on the same deployment shape, and against fio on the local disk; 1 MiB sequential
# reads; prints RESULT P9 fio_vs_sweep=.. fio_vs_local=..; then (issue 54, P16) 4 KiB random
# reads through the mount against fio on the local disk: RESULT P16 rand4k_iops_vs_local=..
# seq_vs_local=.. (needs root).
.PHONY: bench-mount pjdfstest
bench-mount: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target sluice -j $(JOBS)
	$(call bench_logged,SLUICE=$(BUILD)/sluice timeout 3600 bash scripts/bench_mount.sh)

# make bench-mlperf (issue 52 item 4, P15; needs root): DLIO itself (dlio-benchmark in DLIO_VENV, default
# /var/cache/sluice/dlio-venv: scripts/dlio_install.sh, optional) through `sluice mount` of a netns
# deployment, beside sluice's own train_epoch on a deployment of the same shape and the simulation of
# it, all on MLPerf Storage's unet3d config with the same overrides (scripts/bench_mlperf.sh); prints
# RESULT P15 train_epoch_vs_dlio=.. sim_vs_dlio=.. au_dlio=.. au_train_epoch=.. au_sim=.. (without
# DLIO it says so and prints the train_epoch and sim figures only).
.PHONY: bench-mlperf
bench-mlperf: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target sluice -j $(JOBS)
	$(call bench_logged,SLUICE=$(BUILD)/sluice timeout 3600 bash scripts/bench_mlperf.sh)

# pjdfstest (POSIX conformance suite; sources in the shared folder beside the repository, or
# PJDFSTEST_SRC) built under $(BUILD).
pjdfstest: deps
	bash scripts/build_pjdfstest.sh $(BUILD)

# The R2 soak (issue 18): SOAK_CLUSTER_RUNS (default 50) seeded runs of a buddy-mirrored study
# under mpirun with --backend cluster, each killing storage server processes with SIGKILL and
# starting them again (scripts/soak_cluster.sh says how runs are counted); prints
# RESULT R2 runs=N lost=L corrupt=C hung=H failed_to_start=F (a run refused before it
# started is F, not L; the target fails on either). About 10 s a run on the 2-core VM.
# SOAK_DIR ($(BUILD)/soak-cluster, relative when BUILD is) is made absolute by the script.
# ctest soak.smoke.* runs every soak target with 3 runs (tests/bench/smoke.sh).
# SOAK_NETNS=1 (root): the ranks as network-namespace hosts.
SOAK_CLUSTER_RUNS ?= 50
.PHONY: soak-cluster
soak-cluster: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target sluice sluice-node -j $(JOBS)
	SOAK_RUNS=$(SOAK_CLUSTER_RUNS) SOAK_SEED=$(SOAK_SEED) SLUICE=$(BUILD)/sluice SOAK_DIR=$(BUILD)/soak-cluster \
	  bash scripts/soak_cluster.sh

# The R2 soak on netns hosts (root): `--backend emulate`, storage process
# kills plus seeded partitions and packet loss as nftables drops on the links.
.PHONY: soak-cluster-netns
soak-cluster-netns: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target sluice sluice-node -j $(JOBS)
	SOAK_LAUNCHER=emulate SOAK_RUNS=$(SOAK_CLUSTER_RUNS) SOAK_SEED=$(SOAK_SEED) SLUICE=$(BUILD)/sluice \
	  SOAK_DIR=$(BUILD)/soak-cluster-netns bash scripts/soak_cluster.sh

# The R1 soak (issue 9): 100 seeded random fault runs per world (TestEnv,
# SimEnv, HwEnv in one process over loopback TCP, and HwEnv over netns: each
# node in its own network namespace, partitions and loss as packet drops;
# needs root), mirroring off and on; prints one RESULT R1 line per world and
# mode. The HwEnv runs are real time: about half an hour per world and mode.
# SOAK_RUNS sets the runs per world; SOAK_SEED the first seed (to replay one);
# SOAK_HW_RUNS the runs of each HwEnv world and mode (default SOAK_RUNS; about 7 s
# each: ctest soak.smoke.soak runs SOAK_RUNS=3 SOAK_HW_RUNS=1).
SOAK_RUNS ?= 100
SOAK_HW_RUNS ?= $(SOAK_RUNS)
SOAK_SEED ?= 1
.PHONY: soak
soak: deps
	$(MAKE) configure
	cmake --build $(BUILD) --target test_soak -j $(JOBS)
	@SLUICE_SOAK_RUNS=$(SOAK_RUNS) SLUICE_SOAK_SIM_RUNS=$(SOAK_RUNS) SLUICE_SOAK_HW_RUNS=$(SOAK_HW_RUNS) \
	  SLUICE_SOAK_SEED=$(SOAK_SEED) timeout 14400 $(BUILD)/tests/test_soak --gtest_filter='Soak*.R1*' \
	  > $(BUILD)/soak.log 2>&1; rc=$$?; grep -E '^RESULT R1' $(BUILD)/soak.log; \
	if [ $$rc -ne 0 ]; then grep -E -A8 '^seed [0-9]+:' $(BUILD)/soak.log | head -80; \
	  echo "make soak: failed (exit $$rc); see $(BUILD)/soak.log"; exit $$rc; fi
