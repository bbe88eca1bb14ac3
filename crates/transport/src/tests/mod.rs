//! Unit tests of the endpoint, one file per subject. (Tests that need only the public API live
//! in `crates/transport/tests/`.)

mod receiver;
mod rtt;
mod scoreboard;
mod tso;
