"""Trace files a scenario names (``trace`` and ``trace_reverse`` of ``[topology.bottleneck]`` and
of each ``[[topology.links]]`` of a graph).

The scenario gives a path, relative to the scenario file; the core takes the file's name and
contents (``{file, text}``), parses it and names the file and line of any error. Passing the
contents, not the path, makes them part of the core config, and so of the run's cache key
(``sweep/cache.py`` hashes the core config): editing a trace re-runs what used it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ScenarioError

#: A link's keys that name a trace file.
TRACE_KEYS = ("trace", "trace_reverse")


def read_traces(raw: dict[str, Any], base_dir: Path | None) -> dict[str, Any]:
    """``raw`` with each trace path of a link (the bottleneck, a graph's links) replaced by
    ``{file, text}`` (the file read relative to ``base_dir``, the scenario's folder; None: the
    working folder). A value that is already a table is left to the model's checks. One
    ScenarioError if a file cannot be read."""
    topo = raw.get("topology")
    if not isinstance(topo, dict):
        return raw
    topo = dict(topo)
    b = topo.get("bottleneck")
    if isinstance(b, dict):
        topo["bottleneck"] = _read_link_traces(b, "topology.bottleneck", base_dir)
    links = topo.get("links")
    if isinstance(links, list):
        topo["links"] = [
            _read_link_traces(x, f"topology.links.{i}", base_dir) if isinstance(x, dict) else x
            for i, x in enumerate(links)
        ]
    return {**raw, "topology": topo}


def _read_link_traces(link: dict[str, Any], where: str, base_dir: Path | None) -> dict[str, Any]:
    """One link's table with its trace paths read (``where``: its path in the scenario)."""
    if not any(isinstance(link.get(k), str) for k in TRACE_KEYS):
        return link
    link = dict(link)
    for key in TRACE_KEYS:
        name = link.get(key)
        if not isinstance(name, str):
            continue
        p = Path(name) if base_dir is None or Path(name).is_absolute() else base_dir / name
        at = f"{where}.{key}"
        try:
            text = p.read_bytes().decode("utf-8")
        except FileNotFoundError:
            raise ScenarioError(at, f"{name}: no such trace file (paths are relative to the scenario file)") from None
        except IsADirectoryError:
            raise ScenarioError(at, f"{name}: is a directory, not a trace file") from None
        except OSError as e:
            raise ScenarioError(at, f"{name}: cannot read: {e.strerror}") from None
        except UnicodeDecodeError:
            raise ScenarioError(at, f"{name}: not a trace (not UTF-8 text)") from None
        link[key] = {"file": name, "text": text}
    return link


#: Flow-size distributions shipped with bbrlab (``[[apps]] kind = "workload"``'s ``cdf``).
SHIPPED_CDFS = ("websearch", "datamining")


def read_cdfs(raw: dict[str, Any], base_dir: Path | None) -> dict[str, Any]:
    """``raw`` with each workload app's ``cdf`` (a shipped name or a path relative to the
    scenario's folder) replaced by ``{file, text}``, as traces are, so a CDF's contents enter the
    core config and the run's cache key. The core checks the contents (monotone, reaching 1)."""
    apps = raw.get("apps")
    if not isinstance(apps, list) or not any(isinstance(a, dict) and isinstance(a.get("cdf"), str) for a in apps):
        return raw
    out = []
    for i, a in enumerate(apps):
        name = a.get("cdf") if isinstance(a, dict) else None
        if not isinstance(name, str):
            out.append(a)
            continue
        if name in SHIPPED_CDFS:
            p = Path(__file__).with_name("cdf") / f"{name}.txt"
        else:
            p = Path(name) if base_dir is None or Path(name).is_absolute() else base_dir / name
        where = f"apps.{i}.cdf"
        try:
            text = p.read_bytes().decode("utf-8")
        except FileNotFoundError:
            shipped = ", ".join(f'"{s}"' for s in SHIPPED_CDFS)
            raise ScenarioError(
                where, f"{name}: no such CDF file (paths are relative to the scenario file; shipped: {shipped})"
            ) from None
        except OSError as e:
            raise ScenarioError(where, f"{name}: cannot read: {e.strerror}") from None
        except UnicodeDecodeError:
            raise ScenarioError(where, f"{name}: not a CDF file (not UTF-8 text)") from None
        out.append({**a, "cdf": {"file": name, "text": text}})
    return {**raw, "apps": out}
