"""A flow's ECN codepoint and a bottleneck's queue discipline through the scenario front: both
forms of ``ecn`` in TOML, the resolved config the backends read, and the one-line refusals."""

from __future__ import annotations

import json
from pathlib import Path

from bbrlab import load_scenario
from bbrlab.cli import cli
from bbrlab.scenario.core import load_core
from click.testing import CliRunner
from test_cli_errors import assert_user_error

HEAD = """duration = "1s"
[topology]
kind = "dumbbell"
"""


def write(tmp: Path, bottleneck: str, flows: str) -> Path:
    p = tmp / "s.toml"
    p.write_text(f'{HEAD}bottleneck = {{ rate = "100Mbps", rtt = "20ms"{bottleneck} }}\n{flows}')
    return p


def test_ecn_true_and_a_codepoint_both_resolve_to_the_mode(tmp_path: Path) -> None:
    flows = "".join(
        f'[[flows]]\ncc = "{cc}"\necn = {ecn}\n'
        for cc, ecn in [("cubic", "true"), ("dctcp", '"ect1"'), ("bbr2", '"ect0"'), ("reno", "false")]
    )
    s = load_scenario(write(tmp_path, "", flows))
    assert [f.ecn for f in s.flows] == [True, "ect1", "ect0", False]
    c = s.resolve()
    assert [f["ecn"] for f in c["flows"]] == ["ect0", "ect1", "ect0", "off"]
    assert c["topology"]["bottleneck"]["qdisc"] == {"kind": "droptail"}


def test_a_named_droptail_keeps_red_and_step_marking(tmp_path: Path) -> None:
    red = ', red = { min_th = "30KB", max_th = "90KB" }'
    s = load_scenario(write(tmp_path, ', qdisc = { kind = "droptail" }' + red, '[[flows]]\ncc = "cubic"\n'))
    assert s.resolve()["topology"]["bottleneck"]["red"]["min_th_bytes"] == 30_000


def test_every_other_discipline_refuses_red_in_one_line(tmp_path: Path) -> None:
    """Through ``bbrlab validate``, exit 2, for every kind the core's registry has besides
    droptail (none until a discipline is added; droptail with RED is valid, above)."""
    schema = json.loads(load_core().config_schema())
    kinds = [a["properties"]["kind"]["const"] for a in schema["$defs"]["QdiscSpec"]["oneOf"]]
    assert "droptail" in kinds
    for kind in (k for k in kinds if k != "droptail"):
        own = ', min_th = "20pkts", max_th = "60pkts"' if kind == "red" else ""
        red = f', qdisc = {{ kind = "{kind}"{own} }}, red = {{ min_th = "30KB", max_th = "90KB" }}'
        result = CliRunner().invoke(cli, ["validate", str(write(tmp_path, red, '[[flows]]\ncc = "cubic"\n'))])
        assert_user_error(result, ["topology.bottleneck.red", f'conflicts with qdisc "{kind}"'])


def test_a_red_qdisc_in_packets_resolves_to_the_red_table_in_bytes(tmp_path: Path) -> None:
    """``qdisc = { kind = "red" }`` is the ``red`` table the backends read: packets at 1538 B (a
    1448-byte segment's frame), sizes as written, max_p and weight defaulting as the table's."""
    q = ', qdisc = { kind = "red", min_th = "20pkts", max_th = "90KB" }'
    c = load_scenario(write(tmp_path, q, '[[flows]]\ncc = "dctcp"\n')).resolve()
    b = c["topology"]["bottleneck"]
    assert b["qdisc"] == {"kind": "droptail"}
    assert b["red"] == {"min_th_bytes": 20 * 1538, "max_th_bytes": 90_000, "max_p": 0.1, "weight": 0.002}


def test_bad_red_qdiscs_are_refused_in_one_line(tmp_path: Path) -> None:
    """Through ``bbrlab validate``, exit 2: thresholds in the wrong order (after the packets
    conversion), a BDP threshold, a RED parameter under another discipline."""
    flows = '[[flows]]\ncc = "cubic"\n'
    for q, words in [
        (', qdisc = { kind = "red", min_th = "60pkts", max_th = "90KB" }', ["qdisc.max_th", "larger than min_th"]),
        (', qdisc = { kind = "red", min_th = "1bdp", max_th = "90KB" }', ["min_th", "a size or packets"]),
        (', qdisc = { kind = "codel", min_th = "20pkts" }', ["min_th"]),
    ]:
        result = CliRunner().invoke(cli, ["validate", str(write(tmp_path, q, flows))])
        assert_user_error(result, words)


def test_emu_refuses_a_red_qdisc_as_it_refuses_the_red_table(tmp_path: Path) -> None:
    """The emulator's link has no RED: either form is refused in one line, exit 2."""
    flows = '[[flows]]\ncc = "cubic"\n'
    for q in [
        ', qdisc = { kind = "red", min_th = "20pkts", max_th = "60pkts" }',
        ', red = { min_th = "30KB", max_th = "90KB" }',
    ]:
        f = write(tmp_path, q, flows)
        result = CliRunner().invoke(cli, ["run", "--backend", "emu", str(f), "--out", str(tmp_path / "r")])
        assert_user_error(result, ["topology.bottleneck.", "has no RED"])
