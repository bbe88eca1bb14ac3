//! The UDP transport end to end on 127.0.0.1: a sender and a receiver (threads here, processes
//! in the emu backend) move a sized transfer through real sockets, with datagrams lost on the
//! way, and every byte arrives once.

use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use udpflow::{run_receiver, run_sender, Config, Role};

/// Lines a half writes, readable from the test thread while it runs.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl Write for Lines {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Lines {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

fn config(role: Role, json: &str) -> Config {
    let mut c: Config = serde_json::from_str(json).unwrap();
    c.role = role;
    c
}

/// Runs a `bytes` transfer with `cc`, the receiver discarding every `drop_every`-th data
/// datagram; returns (sender report, receiver report, sender's lines).
fn transfer(
    cc: &str,
    bytes: u64,
    drop_every: u64,
    gso: bool,
) -> (udpflow::SenderReport, udpflow::ReceiverReport, String) {
    let t0 = udpflow::mono_ns();
    let end_ns: u64 = 20_000_000_000;
    let rcfg = config(
        Role::Recv,
        &format!(
            r#"{{"role":"recv","local":"127.0.0.1:0","t0_ns":{t0},"end_ns":{end_ns},
                "drop_every":{drop_every}}}"#
        ),
    );
    let rlines = Lines::default();
    let stop = Arc::new(AtomicBool::new(false));
    let (mut rl, rstop) = (rlines.clone(), stop.clone());
    let receiver = std::thread::spawn(move || run_receiver(&rcfg, &rstop, &mut rl).unwrap());
    let ready = Instant::now();
    let port: u16 = loop {
        let t = rlines.text();
        if let Some(line) = t.lines().find(|l| l.contains("ready")) {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            break v["ready"].as_u64().unwrap() as u16;
        }
        assert!(ready.elapsed() < Duration::from_secs(5), "receiver did not bind");
        std::thread::sleep(Duration::from_millis(5));
    };
    let scfg = config(
        Role::Send,
        &format!(
            r#"{{"role":"send","local":"127.0.0.1:0","peer":"127.0.0.1:{port}","cc":"{cc}",
                "bytes":{bytes},"t0_ns":{t0},"end_ns":{end_ns},"gso":{gso}}}"#
        ),
    );
    let mut slines = Lines::default();
    let sent = run_sender(&scfg, &stop, &mut slines).unwrap();
    let got = receiver.join().unwrap();
    (sent, got, slines.text())
}

#[test]
fn bql_transfer_with_loss_delivers_every_byte_once() {
    let bytes = 40_000_000 + 123; // a short last segment too
    let (s, r, lines) = transfer("bql", bytes, 50, true);
    assert_eq!(r.delivered_bytes, bytes, "receiver: {r:?}; sender: {s:?}");
    assert!(r.got_fin, "the sender's fin did not arrive: {r:?}");
    assert_eq!(s.acked_bytes, bytes);
    assert!(s.completed_ns.is_some());
    // Every 50th datagram was discarded, so the sender must have resent at least as many.
    assert!(
        r.dropped > 0 && s.retransmits >= r.dropped,
        "dropped {} resent {}",
        r.dropped,
        s.retransmits
    );
    // Status lines carry the algorithm's own phase names.
    assert!(lines.contains("\"phase\":"), "{lines}");
    let last: serde_json::Value = serde_json::from_str(lines.lines().last().unwrap()).unwrap();
    assert_eq!(last["final"]["cc"], "bql");
    assert!(
        last["final"]["cpu_user_ns"].as_u64().unwrap()
            + last["final"]["cpu_sys_ns"].as_u64().unwrap()
            > 0
    );
}

#[test]
fn cubic_transfer_without_gso_delivers_every_byte_once() {
    let bytes = 10_000_000;
    let (s, r, _) = transfer("cubic", bytes, 50, false);
    assert!(!s.gso);
    assert_eq!(r.delivered_bytes, bytes, "receiver: {r:?}; sender: {s:?}");
    assert!(s.retransmits >= r.dropped && r.dropped > 0);
}

#[test]
fn an_ecn_only_algorithm_is_refused() {
    let c = config(
        Role::Send,
        r#"{"role":"send","local":"127.0.0.1:0","peer":"127.0.0.1:9","cc":"dctcp","end_ns":1}"#,
    );
    let mut out = Lines::default();
    let e = run_sender(&c, &AtomicBool::new(false), &mut out).unwrap_err();
    assert!(e.contains("needs ECN"), "{e}");
}
