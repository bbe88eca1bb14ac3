#!/usr/bin/env bash
# Runs every bbrlab test: builds and installs the package (Rust core included, via maturin),
# then the Rust tests of every crate, then the Python tests. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test,ray]'
cargo test --workspace --release
python3 -m pytest tests/python -q
