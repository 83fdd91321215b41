#!/bin/sh
# Checks of the Go client (clients/go), for CI: gofmt, go vet, go test.
#
# The integration tests (the client, the Fake's scenarios and the example
# controller against `nfkeeper serve` in fresh network namespaces) run
# when this is root and the nfkeeper binary is found: $NFKEEPER_BIN, else
# $CARGO_TARGET_DIR/release/nfkeeper, else target/release/nfkeeper of the
# workspace (build it first: cargo build --release -p nfkeeper). Otherwise
# they are skipped, and this script says why.
#
# Environment: RACE=1 adds the race detector; GO overrides the go command.
set -eu
cd "$(dirname "$0")"
GO=${GO:-go}
if ! command -v "$GO" >/dev/null 2>&1; then
	echo "clients/go/test.sh: no go toolchain ($GO)" >&2
	exit 1
fi
if [ -z "${NFKEEPER_BIN:-}" ]; then
	for b in "${CARGO_TARGET_DIR:-}/release/nfkeeper" ../../target/release/nfkeeper; do
		if [ -x "$b" ] && [ -f "$b" ]; then
			NFKEEPER_BIN=$(cd "$(dirname "$b")" && pwd)/nfkeeper
			export NFKEEPER_BIN
			break
		fi
	done
fi
if [ "$(id -u)" != 0 ]; then
	echo "clients/go/test.sh: not root: integration tests will be skipped"
elif [ -z "${NFKEEPER_BIN:-}" ]; then
	echo "clients/go/test.sh: no nfkeeper binary: integration tests will be skipped"
else
	echo "clients/go/test.sh: integration tests against $NFKEEPER_BIN"
fi
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "clients/go/test.sh: not gofmt-formatted:" >&2
	echo "$unformatted" >&2
	exit 1
fi
"$GO" vet ./...
race=
if [ "${RACE:-}" = 1 ]; then
	race=-race
fi
"$GO" test $race -count=1 ./...
