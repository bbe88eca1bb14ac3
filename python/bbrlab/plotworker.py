"""Draw a run's PNGs in a helper process, so that `bbrlab run` does not wait for matplotlib.

Importing matplotlib and drawing the four run plots took most of a short run's wall time, one
after the other with importing pydantic and pandas. The CLI starts a :class:`PlotWorker` before
it reads the scenario: a second Python, ``python -m bbrlab.plotworker``, imports matplotlib on
the other core while this one validates, simulates and builds the tables. Once this one has
printed the summary and written the tables, it hands over :func:`bbrlab.plots.plot_data` (numpy
arrays, no pandas), and the plot process draws the plots into the run directory, half of them in a
fork of itself (:func:`_draw`). ``Result.save(out, plots=worker)`` waits for it before the
directory is renamed complete, so a run directory is still whole, and atomic, when `bbrlab run`
returns.

The worker is only a way to go faster, never a way to fail: if it cannot start, dies, or raises
anything but an OSError (a full disk is the user's to fix and is reported as such), the plots are
drawn in this process as before, and a bug in them surfaces here with its own traceback. It never
outlives its call: ``close()`` (on any exit from the CLI command, Ctrl-C included) kills and reaps
it, and it exits by itself when its input pipe closes.

Like the link emulator (emu/launch.py) it runs in the directory holding this very ``bbrlab``
package, so ``-m`` imports the same package as its parent.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["PlotWorker"]

_PACKAGE_PARENT = Path(__file__).resolve().parents[1]

#: Past this much plotted data the run's plots are drawn in the calling process: the copy through
#: the pipe would cost memory (held twice, here and there) to save a second on a run that took far
#: longer than that. 64 MB is about a million time-series rows; a tiny run sends a few KB.
MAX_PAYLOAD_BYTES = 64_000_000


class PlotWorker:
    """``worker(result, out_dir)`` draws ``result``'s plots into ``out_dir`` like
    ``bbrlab.plots.plot_all`` (which it falls back to), in a process started at construction."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bbrlab.plotworker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # its failures come back through the pipe, or as a fallback
                cwd=str(_PACKAGE_PARENT),
            )
        except OSError:
            self.proc = None  # no worker: plot_all in this process

    def __call__(self, result: Any, out_dir: Path) -> list[Path]:
        from .plots import plot_all, plot_data

        data = plot_data(result)
        proc, self.proc = self.proc, None  # one call per worker
        if proc is not None and _payload_bytes(data) > MAX_PAYLOAD_BYTES:
            _stop(proc)
            proc = None
        if proc is None:
            return plot_all(data, out_dir)
        try:
            reply = _exchange(proc, pickle.dumps((data, str(Path(out_dir).resolve())), protocol=5))
        except BaseException:
            _stop(proc)  # before the caller removes the directory it may still be writing into
            raise
        _stop(proc)
        if reply is not None and reply[0] == "ok":
            return [Path(p) for p in reply[1]]
        if reply is not None and isinstance(reply[1], OSError):
            raise reply[1]
        return plot_all(data, out_dir)

    def close(self) -> None:
        if self.proc is not None:
            _stop(self.proc)
            self.proc = None

    def __enter__(self) -> PlotWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _payload_bytes(data: Any) -> int:
    return sum(int(a.nbytes) for table in (data.timeseries, data.queue) for a in table.values())


def _exchange(proc: subprocess.Popen[bytes], payload: bytes) -> tuple[str, Any] | None:
    """Send the job, read the reply; None when the worker died or answered nonsense."""
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(payload)
        proc.stdin.close()
        return pickle.loads(proc.stdout.read())
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, IndexError, TypeError, ValueError):
        return None


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for f in (proc.stdin, proc.stdout):
        if f is not None and not f.closed:
            try:
                f.close()
            except OSError:
                pass


def _skip_artist_docstrings() -> None:
    """While its modules load, matplotlib writes a property table into the docstring of every
    Artist class's ``set()`` (``matplotlib.artist.kwdoc``): a third of the time it takes to import
    (0.25 s of CPU here). This process draws PNGs and never shows a docstring, so it skips that;
    nothing is drawn differently (a test compares its PNGs with plot_all's, byte for byte)."""
    try:
        import matplotlib.artist
    except ImportError:
        return
    if callable(getattr(matplotlib.artist, "kwdoc", None)):
        matplotlib.artist.kwdoc = lambda artist: ""


#: Drawn by a fork of the plot process while it draws the others: about half the work each.
FORKED = ("rtt.png", "queue.png")


def _draw(data: Any, out_dir: Path) -> list[Path]:
    """Draw the plots into ``out_dir``, those in ``FORKED`` in a fork of this process: by now the
    CLI's process has only to wait, a core is free, and a fork starts with matplotlib loaded. The
    fork hands its PNGs back through a pipe, and only this process writes into the directory (the
    CLI stops and reaps it before removing an unfinished directory; a fork it never sees must not
    be writing there)."""
    from bbrlab.plots import PLOTS, plot_all

    try:
        r, w = os.pipe()
        pid = os.fork()
    except (AttributeError, OSError):  # no fork here: draw them all in turn
        return plot_all(data, out_dir)
    if pid == 0:
        _forked(r, w, data)
    os.close(w)
    written = plot_all(data, out_dir, [n for n in PLOTS if n not in FORKED])
    with os.fdopen(r, "rb") as f:
        reply = f.read()
    _, status = os.waitpid(pid, 0)
    try:
        images = pickle.loads(reply) if status == 0 else {}
    except Exception:  # noqa: BLE001 - a fork that died mid-reply
        images = {}
    if set(images) == set(FORKED):
        for name, png in images.items():
            (out_dir / name).write_bytes(png)
            written.append(out_dir / name)
    else:
        written += plot_all(data, out_dir, FORKED)  # again here, so that an error shows as itself
    return sorted(written, key=lambda p: PLOTS.index(p.name))


def _forked(r: int, w: int, data: Any) -> None:
    """The fork: draw FORKED as PNG bytes, send them, exit (never returns)."""
    status = 1
    try:
        os.close(r)
        _die_with_parent()
        # Off the CLI's reply pipe: it reads until every holder of that pipe has closed it.
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        from bbrlab.figures import png_bytes
        from bbrlab.plots import FIGURES

        images = {name: png_bytes(FIGURES[name](data), tight=False) for name in FORKED}
        with os.fdopen(w, "wb") as f:
            f.write(pickle.dumps(images))
        status = 0
    except BaseException:  # noqa: BLE001 - the parent sees the status and draws them itself
        pass
    finally:
        os._exit(status)


def _die_with_parent() -> None:
    """SIGKILL when the plot process dies (Linux PR_SET_PDEATHSIG), so that a fork never outlives
    it; elsewhere the fork ends on its own, at the latest when its reply finds the pipe closed."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _main() -> None:
    """The worker: load matplotlib now, then draw the one job that arrives on stdin."""
    # Ctrl-C in a terminal reaches the whole process group; the parent reports it, not us.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _skip_artist_docstrings()
    import bbrlab.figures
    import bbrlab.plots  # noqa: F401 - loaded now, while the CLI's process simulates

    job = sys.stdin.buffer.read()
    if not job:
        return  # the parent went away before it had anything to draw
    try:
        data, out_dir = pickle.loads(job)
        reply: tuple[str, Any] = ("ok", [str(p) for p in _draw(data, Path(out_dir))])
    except Exception as e:  # noqa: BLE001 - reported to the parent, which draws again itself
        try:
            pickle.dumps(e)
            reply = ("error", e)
        except Exception:  # noqa: BLE001 - an exception that cannot cross the pipe
            reply = ("error", repr(e))
    sys.stdout.buffer.write(pickle.dumps(reply))
    sys.stdout.flush()
    os._exit(0)  # nothing left to clean up; skip interpreter teardown (matplotlib's is slow)


if __name__ == "__main__":
    _main()
