# The front door. `make demo` and `make test` each do all set-up on a fresh Debian 12 machine.
JOBS      ?= $(shell nproc)
RELEASE   := build/release
TSAN      := build/tsan
CONFIGURE := cmake --preset

.PHONY: all deps build tsan-build demo test bench install clean

all: build

deps:
	@./.ci/install-deps

$(RELEASE)/Makefile: | deps
	$(CONFIGURE) release >/dev/null

$(TSAN)/Makefile: | deps
	$(CONFIGURE) tsan >/dev/null

build: deps $(RELEASE)/Makefile
	cmake --build $(RELEASE) -j $(JOBS)

demo: build
	@./daemon/demo.sh $(RELEASE)

# Every test in the release build, then the concurrency tests again under ThreadSanitizer;
# the last line counts both suites.
test: build tsan-build
	@JOBS=$(JOBS) ./tests/run_suites.sh $(RELEASE) $(TSAN)

tsan-build: deps $(TSAN)/Makefile
	cmake --build $(TSAN) -j $(JOBS) --target sonoflow_concurrency_tests

bench: build
	@./bench/run.sh $(RELEASE)

install: build
	cmake --install $(RELEASE)

clean:
	rm -rf build
