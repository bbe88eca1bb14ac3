#!/usr/bin/env bash
# Runs every bbrlab test: builds and installs the package (Rust core included, via maturin), checks
# the code's form (rustfmt, clippy with warnings denied, ruff, mypy), then runs the Rust tests of
# every crate, then the Python tests. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test,ray]'

# A toolchain installed with rustup's minimal profile lacks rustfmt and clippy.
for tool in rustfmt clippy; do
  if ! cargo "${tool/rustfmt/fmt}" --version >/dev/null 2>&1 && command -v rustup >/dev/null 2>&1; then
    rustup component add "$tool"
  fi
done
echo "== lint: rustfmt, clippy, ruff, mypy"
cargo fmt --all --check
cargo clippy --workspace --all-targets --release --quiet -- -D warnings
python3 -m ruff format --check --quiet python tests scripts
python3 -m ruff check --quiet python tests scripts
python3 -m mypy

cargo test --workspace --release
python3 -m pytest tests/python -q
