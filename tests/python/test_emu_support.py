"""What --backend emu refuses or warns about before it touches the machine (no root needed)."""

from __future__ import annotations

import copy
import warnings

import pytest
from bbrlab.emu.support import check_supported
from bbrlab.errors import ScenarioError, ScenarioWarning
from bbrlab.scenario import parse_scenario

BASE = {
    "duration": "2s",
    "topology": {"kind": "dumbbell", "bottleneck": {"rate": "100Mbps", "rtt": "20ms", "buffer": "1bdp"}},
    "flows": [{"cc": "cubic"}, {"cc": "bbr"}],
}


def _scenario(mutate=None):
    raw = copy.deepcopy(BASE)
    if mutate:
        mutate(raw)
    return parse_scenario(raw)


def _notes(mutate=None) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        notes = check_supported(_scenario(mutate))
    assert [str(w.message) for w in caught if issubclass(w.category, ScenarioWarning)] == notes
    return notes


def test_a_plain_dumbbell_runs_without_a_word():
    assert _notes() == []


@pytest.mark.parametrize(
    "mutate, field, words",
    [
        (
            lambda r: r["topology"]["bottleneck"].update(red={"min_th": "20KB", "max_th": "60KB"}),
            "topology.bottleneck.red",
            "no RED",
        ),
        (lambda r: r["flows"][0].update(rpc={"size": "10KB", "gap": "1ms"}), "flows.0.rpc", "bulk writers"),
        (lambda r: r["flows"][1].update(pacing="off"), "flows.1.pacing", 'leave it "auto"'),
        (lambda r: r["flows"][0].update(receiver_window="ictcp"), "flows.0.receiver_window", "ICTCP"),
        (lambda r: r["flows"][0].update(app_read_delay="5ms"), "flows.0.app_read_delay", "read at once"),
    ],
)
def test_fields_that_would_change_the_experiment_are_refused(mutate, field, words):
    with pytest.raises(ScenarioError) as e:
        check_supported(_scenario(mutate))
    msg = str(e.value)
    assert msg.startswith(field) and words in msg and "--backend sim" in msg, msg


def test_the_kernels_own_receiver_window_is_accepted():
    """`receiver_window` is marked per value: the kernel autotunes its window (`autotune` runs as
    is), it has no ICTCP receiver (`ictcp` is refused, above)."""
    assert _notes(lambda r: r["flows"][0].update(receiver_window="autotune")) == []
    assert _notes(lambda r: r["flows"][0].update(receiver_window="static")) == []


def test_model_switches_warn_and_name_the_field():
    notes = _notes(lambda r: r["flows"][1].update(tso_defer=False, fast_path=False))
    assert [n.split(" ")[0] for n in notes] == ["flows.1.tso_defer", "flows.1.fast_path"]
    assert "no effect there" in notes[0]
    # The access rate is resolved on load: only one that differs from the default is the user's.
    assert _notes(lambda r: r["topology"].update(access_rate="1Gbps")) == []  # 10 × 100 Mbit/s, the default
    assert _notes(lambda r: r["topology"].update(access_rate="200Mbps"))[0].startswith("topology.access_rate")
    assert _notes(lambda r: r.update(hosts={}))[0].startswith("hosts:")


def test_what_emu_refuses_and_warns_about_is_read_from_the_schema(monkeypatch):
    """No list of fields here or in support.py: a mark changed in the core's schema changes what
    --backend emu does (marked refused, a field it honours today is refused, with its message)."""
    from bbrlab.scenario import core

    schema = copy.deepcopy(core.schema())
    flow = schema["$defs"]["Flow"]["properties"]
    flow["mss_bytes"]["x-backends"] = {"sim": "honoured", "emu": {"refused": "a test's reason"}}
    flow["tso"]["x-backends"] = {"sim": "honoured", "emu": "honoured"}
    monkeypatch.setattr(core, "schema", lambda: schema)
    assert _notes(lambda r: r["flows"][1].update(tso=False)) == []
    with pytest.raises(ScenarioError) as e:
        check_supported(_scenario(lambda r: r["flows"][1].update(mss="9000B")))
    assert str(e.value).startswith("flows.1.mss") and "9000 is not available on --backend emu: a test's reason" in str(
        e.value
    )


def test_a_star_is_refused_by_its_variant_mark():
    star = {"kind": "star", "workers": 4, "rate": "1Gbps"}
    with pytest.raises(ScenarioError) as e:
        check_supported(_scenario(lambda r: r.update(topology=star)))
    assert str(e.value) == 'topology.kind: "star" is not supported by --backend emu (dumbbell only)'


def test_a_kernel_algorithm_does_not_upset_the_check():
    # The core checks a kernel:NAME flow as another algorithm, also where support.py asks it
    # for the default of a field the user set (the access rate's).
    def kernel(r, **more):
        r["flows"][0]["cc"] = "kernel:cubic"
        r["topology"].update(more)

    assert _notes(lambda r: kernel(r, access_rate="1Gbps")) == []
    assert _notes(lambda r: kernel(r, access_rate="200Mbps"))[0].startswith("topology.access_rate")
    with pytest.raises(ScenarioError) as e:
        check_supported(
            _scenario(
                lambda r: kernel(r) or r["topology"]["bottleneck"].update(red={"min_th": "20KB", "max_th": "60KB"})
            )
        )
    assert str(e.value).startswith("topology.bottleneck.red")
