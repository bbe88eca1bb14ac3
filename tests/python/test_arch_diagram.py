"""The architecture picture in docs/architecture.md is the one the code gives
(scripts/arch_diagram.py).

The script is checked on the repository (the committed picture is current) and on a small
workspace built here, whose dependencies are known, so that each rule that makes an arrow — and
each that must not — is seen to work.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("arch_diagram", ROOT / "scripts" / "arch_diagram.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["arch_diagram"] = mod
    spec.loader.exec_module(mod)
    return mod


arch = _load()


def test_the_committed_picture_is_current() -> None:
    assert arch.main(["--check"]) == 0, "run `python scripts/arch_diagram.py`"


def _write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def _workspace(root: Path) -> None:
    for name, deps in (
        ("core", ""),
        ("engine", 'core = { package = "demo-core", path = "../core" }\n'),
        ("tool", ""),
    ):
        dev = '[dev-dependencies]\ntool = { package = "demo-tool", path = "../tool" }\n' if name == "core" else ""
        _write(
            root,
            f"crates/{name}/Cargo.toml",
            f'[package]\nname = "demo-{name}"\n\n[dependencies]\nserde = "1"\n{deps}\n{dev}',
        )
        _write(root, f"crates/{name}/src/lib.rs", "pub fn f() {}\n")
    _write(
        root,
        "pyproject.toml",
        '[tool.maturin]\nmanifest-path = "crates/engine/Cargo.toml"\npython-source = "python"\n',
    )
    src = "crates/sim/src/"
    _write(
        root,
        "crates/sim/Cargo.toml",
        '[package]\nname = "demo-sim"\n[dependencies]\nengine = { path = "../engine" }\n',
    )
    _write(
        root,
        src + "lib.rs",
        "mod queue;\nmod clock;\nmod net;\n#[cfg(test)]\nmod testkit;\nuse clock::Tick;\npub struct World;\n",
    )
    _write(
        root,
        src + "queue.rs",
        'use crate::*;\n// net::Link in a comment is no use\nfn g(_: Tick, _: World) { let _ = "net::Link"; }\n',
    )
    _write(
        root,
        src + "clock.rs",
        "pub struct Tick;\n#[cfg(test)]\nmod tests {\n    use crate::queue::q;\n}\n",
    )
    _write(root, src + "net/mod.rs", "mod link;\n")
    _write(root, src + "net/link.rs", "use crate::queue::Q;\n")
    _write(root, src + "testkit.rs", "use crate::net::x;\n")
    _write(
        root,
        "docs/architecture.md",
        "# A\n\n<!-- arch-diagram -->\nold\n<!-- /arch-diagram -->\n\nafter\n",
    )


def _edges(block: str, prefix: str) -> set[tuple[str, str]]:
    return {(a, b) for a, b in re.findall(rf"\b{prefix}(\w+) --> {prefix}(\w+)", block)}


def test_arrows_follow_dependencies_and_nothing_else(tmp_path: Path) -> None:
    _workspace(tmp_path)
    block = arch.render_block(tmp_path)
    # Crates: [dependencies] path dependencies only (not serde, not dev-dependencies), by
    # directory name; the Python package points at the crate maturin builds.
    assert _edges(block, "crate_") == {
        ("engine", "core"),
        ("sim", "engine"),
        ("python_bbrlab", "engine"),
    }
    # Components: a directory is one (net/), the glob importer's uses of root items count
    # (queue → clock through lib.rs's `use clock::Tick`, queue → lib through World), comments,
    # strings, #[cfg(test)] items and test-only modules do not.
    assert _edges(block, "sim_") == {
        ("lib", "clock"),
        ("queue", "clock"),
        ("queue", "lib"),
        ("net", "queue"),
    }
    assert 'sim_net["net/ (2 files)"]' in block
    assert "testkit" not in block


def test_new_modules_appear_and_check_fails_on_a_stale_picture(tmp_path: Path) -> None:
    _workspace(tmp_path)
    assert arch.main(["--check"], root=tmp_path) == 1  # "old" is not the picture
    assert arch.main([], root=tmp_path) == 0
    assert arch.main(["--check"], root=tmp_path) == 0
    text = (tmp_path / "docs/architecture.md").read_text()
    assert text.startswith("# A\n\n<!-- arch-diagram -->\n") and text.endswith("<!-- /arch-diagram -->\n\nafter\n")
    # A module added in a new subdirectory is walked into the picture, and --check notices.
    _write(tmp_path, "crates/sim/src/apps/query.rs", "fn h() { crate::net::send(); }\n")
    assert arch.main(["--check"], root=tmp_path) == 1
    assert ("apps", "net") in _edges(arch.render_block(tmp_path), "sim_")
