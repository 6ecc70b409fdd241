# seislive — the one build.
#
#   make                 release build (CUDA when nvcc is found) into build/release
#   make BUILD=debug     -O0 -g build into build/debug
#   make SAN=1           AddressSanitizer + UBSan (CPU only) into build/san
#   make CUDA=0          CPU-only build into build/cpu (also what you get without nvcc)
#   make MPI=0           without MPI even where Open MPI is installed (one rank; docs/mpi.md)
#   make test            the layering check (tests/layers.sh), then every test that needs
#                        no GPU (Criterion)
#   make layers          the layering check alone
#   make test-gpu        the GPU tests (on a machine with a CUDA device)
#   make demo            the built-in demo (see README)
#   make demo-tti        an isotropic and a TTI migration of the same TTI data, side by side
#   make bench           seislive-bench, all benchmarks
#   make fuzz            libFuzzer + ASan + UBSan (clang) on every parser, FUZZ_TIME s each
#                        (FUZZ_TARGETS="wire state" FUZZ_TIME=600; docs/RELIABILITY.md)
#
# Sources are found by folder, so a new capability only adds files:
#   conf/ io/ kernels/ stream/ tools/  *.c *.cpp (*.cu with CUDA) -> libseislive.a
#   */*_main.c                                              -> programs
#   tests/*.c -> build/*/unit-tests    tests/gpu/*.c -> build/*/gpu-tests
#   (tests/*_main.c are the tests' own programs: seislive-mpi_prop runs under mpirun)
#   tests/fuzz/fuzz_*.c -> unit-tests (corpus replay) and build/fuzz/fuzz-NAME

NVCC      ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
BUILD     ?= release
SAN       ?= 0

ifeq ($(SAN),1)
  CUDA ?= 0
endif
ifeq ($(NVCC),)
  CUDA := 0
endif
CUDA ?= 1

ifeq ($(SAN),1)
  O ?= build/san
else ifeq ($(CUDA),0)
  O ?= build/cpu$(if $(filter debug,$(BUILD)),-debug)
else
  O ?= build/$(BUILD)
endif

CC  ?= gcc
CXX ?= g++
ifeq ($(CC),cc)
  CC := gcc
endif

WARN     := -Wall -Wextra -Werror
ifeq ($(BUILD),debug)
  OPT := -O0 -g3
else
  OPT := -O3 -g -march=x86-64-v2
endif
comma := ,
SANFLAGS := $(if $(filter 1,$(SAN)),-fsanitize=address$(comma)undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
INCS     := -I. -I$(O)/gen
DEFS     := -D_GNU_SOURCE $(if $(filter 1,$(CUDA)),-DSEISLIVE_CUDA=1)

# Libraries found through pkg-config (Debian's -dev packages; tools/install-deps.sh):
# cairo draws the PNG pictures (io/picture*.c); libmicrohttpd serves the status page
# (stream/http_status.h says why that library); libxml2 writes QuakeML (io/quakeml.c).
PKGS     := cairo libmicrohttpd libxml-2.0
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   := $(shell pkg-config --libs $(PKGS))

# MPI (Open MPI from Debian: openmpi-bin libopenmpi-dev, tools/install-deps.sh; docs/mpi.md).
# Found through pkg-config's ompi-c; MPI=0 builds without it (one rank, as where it is
# missing).  Only stream/mpi*.c see the MPI headers and -DSEISLIVE_MPI, and only the
# programs that run jobs link it: the rest of the build is the same with or without.
ifeq ($(SAN),1)
  MPI ?= 0
endif
MPI      ?= $(if $(shell pkg-config --exists ompi-c 2>/dev/null && echo y),1,0)
ifeq ($(MPI),1)
  MPI_CFLAGS := -DSEISLIVE_MPI=1 $(shell pkg-config --cflags ompi-c)
  MPI_LIBS   := $(shell pkg-config --libs ompi-c)
endif

CFLAGS   += -std=c11 $(WARN) $(OPT) $(SANFLAGS) $(INCS) $(DEFS) $(PKG_CFLAGS) -fopenmp -MMD -MP
CXXFLAGS += -std=c++17 -DTOML_HEADER_ONLY=0 -DTOML_SHARED_LIB=1 $(WARN) $(OPT) $(SANFLAGS) $(INCS) $(DEFS) -MMD -MP
# libfftw3 (double): the time-dispersion transforms (kernels/time_dispersion.h) and the
# wavelet's top frequency (kernels/wavelet.c wavelet_fmax).
LDLIBS   := -ltomlplusplus -lzmq -luring -lsegyio -lmseed -ljansson -lpng -lfftw3 $(PKG_LIBS) -lm -lpthread
LDFLAGS  += -fopenmp $(SANFLAGS)

# sm_90 machine code for the H100, sm_80 for A100-class cards, PTX for anything newer.
CUDA_ARCH := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_90,code=compute_90
NVCCFLAGS := -std=c++17 $(CUDA_ARCH) -O3 -lineinfo -Werror all-warnings \
             -Xcompiler -Wall,-Wextra,-fopenmp $(INCS) $(DEFS)
ifeq ($(CUDA),1)
  LDLIBS  += -L$(CUDA_HOME)/lib64 -lcudart_static -lcufft -ldl -lrt -Wl,-rpath,$(CUDA_HOME)/lib64
endif

MAINS    := $(wildcard */*_main.c)
LIB_C    := $(filter-out $(MAINS),$(wildcard conf/*.c io/*.c kernels/*.c stream/*.c tools/*.c))
LIB_CXX  := $(wildcard conf/*.cpp io/*.cpp)
LIB_CU   := $(if $(filter 1,$(CUDA)),$(wildcard kernels/*.cu stream/*.cu))
LIB_OBJ  := $(LIB_C:%.c=$(O)/%.o) $(LIB_CXX:%.cpp=$(O)/%.o) $(LIB_CU:%.cu=$(O)/%.cu.o)

# stream/seislive_main.c -> seislive, tools/gen_main.c -> seislive-gen, ...
prog_name = $(if $(filter seislive_main.c,$(notdir $(1))),seislive,seislive-$(patsubst %_main.c,%,$(notdir $(1))))
PROGS    := $(foreach m,$(MAINS),$(O)/$(call prog_name,$(m)))

# The fuzz targets are plain functions: unit-tests replays their corpora (gcc, no clang).
TEST_SRC := $(filter-out $(MAINS),$(wildcard tests/*.c)) $(wildcard tests/fuzz/fuzz_*.c)
GPU_SRC  := $(wildcard tests/gpu/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(O)/%.o)
GPU_OBJ  := $(GPU_SRC:%.c=$(O)/%.o) $(filter $(O)/tests/support%.o $(O)/tests/test_locate_synth%.o,$(TEST_OBJ))

.PHONY: all deps test layers test-gpu demo demo-locate demo-tti bench example clean FORCE fuzz fuzz-bins fuzz-seeds
all: $(PROGS)

deps:
	@bash tools/install-deps.sh

# The version header is rewritten only when the git revision or the CUDA choice changes,
# so `seislive --version` is exact without rebuilding everything on every make.
$(O)/gen/version.h: FORCE
	@mkdir -p $(@D)
	@rev=$$(git describe --always --dirty --tags 2>/dev/null || echo unknown); \
	 printf '#define SEISLIVE_VERSION "0.1.0"\n#define SEISLIVE_GIT_REV "%s"\n#define SEISLIVE_BUILD_KIND "%s"\n' "$$rev" "$(BUILD)$(if $(filter 1,$(SAN)),+san)" > $@.tmp; \
	 cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

# The status page (web/status.html) is compiled into the binary as a C array, so the
# page needs no files and no network at run time.
$(O)/gen/status_html.h: web/status.html
	@mkdir -p $(@D)
	cd web && xxd -i status.html > $(CURDIR)/$@.tmp && mv $(CURDIR)/$@.tmp $(CURDIR)/$@
$(O)/stream/http_status.o: $(O)/gen/status_html.h

# Several builds may share a build folder (parallel sessions, editors): every recipe
# holds a lock on its own target so two of them never write the same file at once.
LOCK = flock $@.lock

$(O)/libseislive.a: $(LIB_OBJ)
	$(LOCK) sh -c 'rm -f $@.tmp && ar rcs $@.tmp $^ && mv $@.tmp $@'

$(O)/%.o: %.c | $(O)/gen/version.h
	@mkdir -p $(@D)
	$(LOCK) $(CC) $(CFLAGS) -c $< -o $@

$(O)/%.o: %.cpp
	@mkdir -p $(@D)
	$(LOCK) $(CXX) $(CXXFLAGS) -c $< -o $@

$(O)/%.cu.o: %.cu
	@mkdir -p $(@D)
	$(LOCK) $(NVCC) $(NVCCFLAGS) -MMD -MP -MF $(@:.o=.d) -c $< -o $@

define prog_rule
$(O)/$(call prog_name,$(1)): $(O)/$(1:.c=.o) $(O)/libseislive.a
	flock $$@.lock $$(CXX) $$(LDFLAGS) $$^ $$(LDLIBS) $$(PROG_LIBS) -o $$@
endef
$(foreach m,$(MAINS),$(eval $(call prog_rule,$(m))))

# The MPI objects: compiled with MPI's headers and -DSEISLIVE_MPI when MPI=1 (rebuilt when
# that choice changes: $(O)/gen/mpi.flags); linked into the programs that run jobs.
MPI_OBJ := $(patsubst %.c,$(O)/%.o,$(wildcard stream/mpi*.c))
$(MPI_OBJ): CFLAGS += $(MPI_CFLAGS)
$(MPI_OBJ): $(O)/gen/mpi.flags
$(O)/gen/mpi.flags: FORCE
	@mkdir -p $(@D)
	@echo '$(MPI_CFLAGS) $(MPI_LIBS)' > $@.tmp; cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(O)/seislive $(O)/seislive-mpi_prop $(O)/unit-tests $(O)/gpu-tests $(O)/seislive-bench: PROG_LIBS += $(MPI_LIBS)
# NCCL's types for stream/halo_nccl.c (the library itself is dlopen'ed at run time).
$(O)/stream/halo_nccl.o: CFLAGS += $(if $(filter 1,$(CUDA)),-I$(CUDA_HOME)/include)

# CUDA code that only the benchmark (tools/*.cu: research kernel variants, the pipeline
# benchmark's burn kernel) or only the GPU tests (tests/gpu/*.cu) use stays out of the
# library and the production path.
BENCH_CU := $(if $(filter 1,$(CUDA)),$(wildcard tools/*.cu))
GPU_CU   := $(if $(filter 1,$(CUDA)),$(wildcard tests/gpu/*.cu))
$(O)/seislive-bench: $(BENCH_CU:%.cu=$(O)/%.cu.o)
$(O)/gpu-tests: $(GPU_CU:%.cu=$(O)/%.cu.o)
# The propagator's research kernel variants are checked against the CPU by gpu-tests too.
$(O)/gpu-tests: $(if $(filter 1,$(CUDA)),$(O)/tools/wave_research.cu.o)

$(O)/unit-tests: $(TEST_OBJ) $(O)/libseislive.a
	$(LOCK) $(CXX) $(LDFLAGS) $^ $(LDLIBS) $(PROG_LIBS) -lcriterion -o $@

$(O)/gpu-tests: $(GPU_OBJ) $(O)/libseislive.a
	$(LOCK) $(CXX) $(LDFLAGS) $^ $(LDLIBS) $(PROG_LIBS) -lcriterion -o $@

# Tests run the programs of the same build; SEISLIVE_BUILD tells them where.  One test
# per core, each (and the programs it starts) on one OpenMP thread: NPROC tests of NPROC
# threads each oversubscribe a large machine so badly that physics tests time out.
# deps first (it may install the compilers' libraries), then a parallel build.
NPROC := $(shell nproc 2>/dev/null || echo 2)
test: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(PROGS) $(O)/unit-tests
	bash tests/layers.sh
	OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive SEISLIVE_BUILD=$(CURDIR)/$(O) \
	    $(O)/unit-tests --jobs=$(NPROC) $(TEST_ARGS)

# The layers, on the #include lines: kernels/ includes nothing from conf/, io/ or stream/
# but stream/error.h and stream/log.h; conf/ nothing from kernels/; io/ nothing from
# stream/ but those two.  Fails naming FILE:LINE of each include that breaks them.
layers:
	bash tests/layers.sh

test-gpu: $(PROGS) $(O)/gpu-tests
	SEISLIVE_REQUIRE_GPU=1 SEISLIVE_BUILD=$(CURDIR)/$(O) $(O)/gpu-tests --jobs=1 $(TEST_ARGS)

demo: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(PROGS)
	@bash tools/demo.sh $(O)

demo-locate: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(PROGS)
	@bash tools/demo-locate.sh $(O)

demo-tti: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(PROGS)
	@bash tools/demo-tti.sh $(O)

bench: $(PROGS)
	$(O)/seislive-bench all

# conf/seislive.example.toml is generated from the schema (conf/schema.c), with an input
# set so that it validates as it stands; tests/test_config.c checks that it is current.
example: $(O)/seislive
	$(O)/seislive example | sed 's/^kind = "none"$$/kind = "zmq"/' > conf/seislive.example.toml
	$(O)/seislive reference > docs/CONFIG.md
	$(O)/seislive reference | bash tools/man-toml.sh > docs/seislive.toml.5

# ---- fuzzing (issue 12; docs/RELIABILITY.md) --------------------------------------
# clang builds the library and the targets into build/fuzz with ASan + UBSan and
# libFuzzer's coverage (-fsanitize=fuzzer-no-link), CPU only; tools/fuzz.sh runs each
# target for FUZZ_TIME seconds, one after the other (one core), over a scratch copy of
# its corpus, saves new crashes into tests/fuzz/crashes/NAME and prints one line per
# target (executions, exec/s, crashes, hangs) and the RELIABILITY.md table rows.
FUZZ_ALL     := wire segy su mseed config state nonlinloc stations sac
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_TIME    ?= 60
FUZZ_CC      ?= clang
FUZZ_CXX     ?= clang++
# -Wno-pass-failed: clang reports an "omp simd" loop it could not vectorise (kernels/tti.c's
# reductions) as a warning; an optimisation note, not a defect, and gcc builds keep -Werror on it.
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -Wno-pass-failed
FUZZ_OBJ      = $(patsubst %.c,$(O)/%.o,$(wildcard tests/fuzz/fuzz_*.c))

fuzz:
	@command -v $(FUZZ_CC) >/dev/null && command -v $(FUZZ_CXX) >/dev/null || { \
	  echo "make fuzz: $(FUZZ_CC)/$(FUZZ_CXX) not found; install them with:" >&2; \
	  echo "  sudo apt-get install clang libclang-rt-14-dev" >&2; exit 1; }
	@printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}\n' \
	  | $(FUZZ_CC) -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null || { \
	  echo "make fuzz: $(FUZZ_CC) cannot link libFuzzer (-fsanitize=fuzzer); install it with:" >&2; \
	  echo "  sudo apt-get install libclang-rt-14-dev" >&2; exit 1; }
	@$(MAKE) --no-print-directory -j$(NPROC) O=build/fuzz CUDA=0 SAN=0 CC=$(FUZZ_CC) CXX=$(FUZZ_CXX) \
	  SANFLAGS='$(FUZZ_SAN) -fsanitize=fuzzer-no-link' FUZZ_TARGETS='$(FUZZ_TARGETS)' fuzz-bins
	FUZZ_TIME=$(FUZZ_TIME) bash tools/fuzz.sh build/fuzz $(FUZZ_TARGETS)

fuzz-bins: $(foreach t,$(FUZZ_TARGETS),$(O)/fuzz-$(t))

# Static patterns (not $(O)/fuzz-%: that would also match the .d files make includes).
$(FUZZ_ALL:%=$(O)/fuzz-%): $(O)/fuzz-%: $(O)/tests/fuzz/main-%.o $(FUZZ_OBJ) $(O)/libseislive.a
	$(LOCK) $(CXX) $(LDFLAGS) -fsanitize=fuzzer $^ $(LDLIBS) -o $@

$(FUZZ_ALL:%=$(O)/tests/fuzz/main-%.o): $(O)/tests/fuzz/main-%.o: tests/fuzz/libfuzzer_main.c | $(O)/gen/version.h
	@mkdir -p $(@D)
	$(LOCK) $(CC) $(CFLAGS) -DFUZZ_FN=fuzz_$* -c $< -o $@

# The seed corpora (committed): written by tests/fuzz/make_seeds.c with the project's
# own writers.  Run after a format changes, then review and commit tests/fuzz/corpus.
fuzz-seeds: $(O)/fuzz-make-seeds
	$(O)/fuzz-make-seeds tests/fuzz .

$(O)/fuzz-make-seeds: $(O)/tests/fuzz/make_seeds.o $(FUZZ_OBJ) $(O)/libseislive.a
	$(LOCK) $(CXX) $(LDFLAGS) $^ $(LDLIBS) -o $@

clean:
	rm -rf build

-include $(shell find $(O) -name '*.d' 2>/dev/null)
