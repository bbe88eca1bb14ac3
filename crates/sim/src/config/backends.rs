//! Which backend honours which field: every field of the config carries its mark beside its
//! definition, as the schema extension `x-backends`
//! (`#[schemars(extend("x-backends" = BOTH))]`), so a new field cannot be silently ignored by a
//! backend that has no use for it: a test walks the schema and fails on a field without a mark.
//!
//! bbrlab runs a scenario on two backends: `sim`, this simulator, and `emu`, real Linux TCP in
//! network namespaces through bbrlab's link emulator (`python/bbrlab/emu`), which can do only
//! what the kernel and its emulated bottleneck expose (one drop-tail link each way with loss and
//! ECN step marking, one namespace per flow, the per-socket settings). Per backend, a field is
//!
//! - honoured: the run does what it says;
//! - refused: set to anything but its default, it makes the scenario a different experiment
//!   there, so the backend refuses to run it (one line: the field, why, what to do instead);
//! - ignored, with a warning: it switches a part of the simulator's model that the backend does
//!   not need (the kernel runs its own TSO, its own end hosts), and the run goes on without it;
//! - within: it belongs to a table or variant that this backend refuses or ignores as a whole
//!   (RED's thresholds, the star's switches), so the backend never reads it on its own.
//!
//! A field meant for one backend only is honoured there and refused or ignored on the other.
//! The Python front derives from these marks what `--backend emu` refuses and warns about
//! (`python/bbrlab/emu/support.py`); the refusal and warning texts are written here, once.

use serde::Serialize;

/// How one backend treats a field. Serialized as `"honoured"`, `"model-switch"`, `"within"`,
/// `{"refused": why}` or `{"ignored": why}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mark {
    /// The run does what the field says.
    Honoured,
    /// Set (not its default), the backend refuses to run: the message says why and what to do.
    Refused(&'static str),
    /// Set, the backend warns with this message and runs without it.
    Ignored(&'static str),
    /// Set, the backend warns that this switch of the simulator's transport model has no effect
    /// there (the kernel runs its own) and runs without it.
    ModelSwitch,
    /// Decided by the table or variant that holds the field (refused or ignored as a whole).
    Within,
}

/// A field's marks, one per backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Backends {
    pub sim: Mark,
    pub emu: Mark,
}

/// Honoured by both backends.
pub const BOTH: Backends = Backends { sim: Mark::Honoured, emu: Mark::Honoured };

/// A switch of the simulator's transport model; the kernel runs its own.
pub const EMU_MODEL_SWITCH: Backends = Backends { sim: Mark::Honoured, emu: Mark::ModelSwitch };

/// Inside a table or variant that the emu backend refuses or ignores as a whole.
pub const EMU_WITHIN: Backends = Backends { sim: Mark::Honoured, emu: Mark::Within };

/// Refused by the emu backend, for the reason given (ending in what to do instead).
pub const fn emu_refuses(why: &'static str) -> Backends {
    Backends { sim: Mark::Honoured, emu: Mark::Refused(why) }
}

/// Ignored by the emu backend with this warning.
pub const fn emu_ignores(why: &'static str) -> Backends {
    Backends { sim: Mark::Honoured, emu: Mark::Ignored(why) }
}
