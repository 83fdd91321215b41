#!/bin/sh
# Builds and tests nfk-agent (nfkeeper-agent), for CI and the README's test
# command. The crate is a Cargo workspace of its own, built with an explicit
# --target (README.md here says why), into the main workspace's target
# directory ($CARGO_TARGET_DIR, else ../../target) so that its etcd tests
# find the nfkeeper binary the main workspace's tests built.
#
# Needs protoc (Debian protobuf-compiler) to build; the etcd tests skip,
# each saying why, without root, etcd (Debian etcd-server) or the nfkeeper
# binary.
set -eu
cd "$(dirname "$0")"
if ! command -v protoc >/dev/null 2>&1; then
	echo "crates/agent/test.sh: no protoc (Debian package protobuf-compiler): etcd-client's build needs it" >&2
	exit 1
fi
if ! command -v etcd >/dev/null 2>&1; then
	echo "crates/agent/test.sh: no etcd (Debian package etcd-server): the etcd tests will be skipped"
fi
: "${CARGO_TARGET_DIR:=$(cd ../.. && pwd)/target}"
export CARGO_TARGET_DIR
host=$(rustc -vV | sed -n 's/^host: //p')
# --tests: the library, binary and integration tests, not the examples
# (fleet_scale is a measurement; building it would cost CI a link).
exec cargo test --profile ci --target "$host" --tests "$@"
