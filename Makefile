# The front door. `make demo` and `make test` each do all set-up on a fresh Debian 12 machine.
JOBS      ?= $(shell nproc)
RELEASE   := build/release
TSAN      := build/tsan
CONFIGURE := cmake --preset

.PHONY: all deps build demo test test-release test-tsan bench install clean

all: build

deps:
	@./.ci/install-deps

$(RELEASE)/CMakeCache.txt: | deps
	$(CONFIGURE) release >/dev/null

$(TSAN)/CMakeCache.txt: | deps
	$(CONFIGURE) tsan >/dev/null

build: deps $(RELEASE)/CMakeCache.txt
	cmake --build $(RELEASE) -j $(JOBS)

demo: build
	@./daemon/demo.sh $(RELEASE)

# Every test in the release build, then the concurrency tests again under ThreadSanitizer.
test: deps test-release test-tsan
	@echo "make test: all suites passed"

test-release: build
	cd $(RELEASE) && ctest --output-on-failure -j $(JOBS) --timeout 900

test-tsan: deps $(TSAN)/CMakeCache.txt
	cmake --build $(TSAN) -j $(JOBS) --target sonoflow_concurrency_tests
	cd $(TSAN) && ctest --output-on-failure -L concurrency --timeout 900

bench: build
	@./bench/run.sh $(RELEASE)

install: build
	cmake --install $(RELEASE)

clean:
	rm -rf build
