# evalhost: the two commands README.md promises, and the pieces behind them.
GO ?= go
BIN := bin/evalhost

.PHONY: build example test test-deps test-pythons bench bench-start fmt vet

# Static (no cgo): no dynamic loader at every start, which is a measurable
# part of a one-shot `evalhost run` (docs/sessions.md).
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/evalhost

# The main job on the bundled example.
example: build
	./$(BIN) run examples/quickstart.py || test $$? -eq 1

# Everything the tests need, then the whole suite (race detector included),
# then the runner's tests again on IPython 9 (a venv test-deps makes).
# test-deps installed every Python module the tests use, so a test that
# would skip for want of one fails instead (internal/testkit's NeedModule).
test: test-deps
	EVALHOST_TEST_REQUIRE_MODULES=1 bash scripts/test.sh

test-deps:
	bash scripts/test-deps.sh

# The runner's and host's tests on every other Python 3.8+ found (pyenv's too).
test-pythons:
	bash scripts/test-pythons.sh

bench: test-deps
	bash bench/run.sh

# Whole-process start: evalhost run against python3 -c pass (docs/sessions.md).
bench-start: build
	$(GO) run ./bench/cmd/startbench -evalhost $(BIN)

fmt:
	gofmt -l -w .

# Here, then for each platform evalhost builds on but does not test here.
vet:
	$(GO) vet ./...
	bash scripts/platforms.sh
