"""User-facing errors.

Everything a user can get wrong (a scenario file, a ``--set``, a run directory) raises a subclass of
:class:`UserError`; the CLI prints it as one line ``error: …`` and exits with code 2, never with a
traceback. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

__all__ = ["UserError", "ScenarioError", "ScenarioWarning", "SimulationError", "closest", "did_you_mean"]


class UserError(Exception):
    """An error caused by the user's input; ``str()`` is a complete one-line message."""

    exit_code = 2


class ScenarioError(UserError):
    """A problem in a scenario: ``path`` names the field ("topology.bottleneck.rate", "flows.0.cc").

    ``more`` counts further problems found in the same pass, so the one-line message can say the
    user has more to fix without printing a wall of text.
    """

    def __init__(self, path: str, message: str, *, more: int = 0, source: str | None = None) -> None:
        self.path = path
        self.message = message
        self.more = more
        self.source = source
        super().__init__(self.format())

    def format(self) -> str:
        where = f"{self.source}: " if self.source else ""
        text = f"{where}{self.path}: {self.message}" if self.path else f"{where}{self.message}"
        if self.more:
            text += f" (and {self.more} more problem{'s' if self.more > 1 else ''})"
        # One line, always: a multi-line message would break `error: …` greps and CI logs.
        return " ".join(text.split("\n"))

    def __reduce__(self) -> tuple[Any, ...]:
        # Studies run scenarios in worker processes; the default Exception pickling would call
        # __init__ with the formatted message only and break the pool (BrokenProcessPool).
        return (_rebuild_scenario_error, (self.path, self.message, self.more, self.source))


def _rebuild_scenario_error(path: str, message: str, more: int, source: str | None) -> ScenarioError:
    return ScenarioError(path, message, more=more, source=source)


class ScenarioWarning(UserWarning):
    """A scenario that is valid but asks for something that has no effect (a setting ignored);
    the CLI prints it as one line ``warning: …`` on stderr, a notebook shows it as a warning."""


class SimulationError(UserError):
    """The core failed or is unavailable; not the user's typo, but still not a Python traceback."""

    exit_code = 1


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The closest valid spelling of ``word`` among ``choices``, if any is close enough."""
    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Suffix for a message: "; did you mean 'buffer'?" or the list of valid keys."""
    choices = sorted(choices)
    best = closest(word, choices)
    if best is not None:
        return f"; did you mean '{best}'?"
    return f"; valid keys: {', '.join(choices)}"
