//! Unit tests of the endpoint, one file per subject. (Tests that need only the public API live
//! in `crates/transport/tests/`.)

mod receiver;
mod scoreboard;
mod tso;
