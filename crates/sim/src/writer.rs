//! Applications that write a flow's data (`app` on a flow): a writer limited to a rate and an
//! on/off writer, driving the sender through the transport's application interface
//! (`Sender::write`), as the RPC application (`rpc.rs`) does.
//!
//! Model:
//! - `rate`: by time t the application has offered `rate · (t − start) / 8` bytes; it writes
//!   them in whole segments as each segment's worth falls due (one write per segment, at the
//!   exact time its last byte is due), so the sender never holds more than what the rate
//!   allows. Below the path's capacity the sender runs dry between writes, and the transport
//!   marks those periods app-limited (Linux `tcp_rate_check_app_limited`): BBR's delivery-rate
//!   samples then carry the mark and do not lower its bandwidth estimate. With `bulk_until`
//!   the writer is a bulk sender (an endless write) until that time; then what is written and
//!   unsent is withdrawn (as at `stop`) and the rate's clock starts there.
//! - `onoff`: `bytes` (rounded up to whole segments) written at once at the start and every
//!   `period` after, whether or not the previous burst has gone (a writer on a clock, like a
//!   video segment every period).
//!
//! The simulator calls in at flow start (`start`, after `Sender::start`) and on the flow's
//! sender timer (`on_timer`, before the sender's own work); `next_deadline` is folded into that
//! timer. A write after the flow's `stop` is refused by the sender.

use crate::config::FlowApp;
use cc::Nanos;
use transport::Sender;

pub(crate) struct Writer {
    app: FlowApp,
    mss: u64,
    start_ns: Nanos,
    /// Bytes written so far (whole segments).
    written_bytes: u64,
    /// When the next write is due.
    next_write_ns: Nanos,
    /// A rate writer with `bulk_until` is still writing as a bulk sender.
    bulk: bool,
}

impl Writer {
    pub(crate) fn new(app: FlowApp, mss: u32) -> Writer {
        Writer {
            app,
            mss: mss as u64,
            start_ns: 0,
            written_bytes: 0,
            next_write_ns: 0,
            bulk: false,
        }
    }

    /// The flow has started: the first write (a rate writer with `bulk_until` later than now:
    /// an endless one, until then).
    pub(crate) fn start(&mut self, now: Nanos, sender: &mut Sender) {
        self.start_ns = now;
        self.next_write_ns = now;
        if let FlowApp::Rate(r) = &self.app {
            if let Some(until) = r.bulk_until_ns.filter(|&t| t > now) {
                // ceil(u64::MAX / mss) segments: more than any run sends.
                self.bulk = sender.write(now, u64::MAX);
                self.start_ns = until;
                self.next_write_ns = until;
                return;
            }
        }
        self.on_timer(now, sender);
    }

    /// When the application next writes.
    #[inline]
    pub(crate) fn next_deadline(&self) -> Option<Nanos> {
        (self.next_write_ns != Nanos::MAX).then_some(self.next_write_ns)
    }

    /// Write what is due at `now`, and find when the next write is.
    pub(crate) fn on_timer(&mut self, now: Nanos, sender: &mut Sender) {
        if now < self.next_write_ns {
            return;
        }
        match &self.app {
            FlowApp::Rate(r) => {
                if self.bulk {
                    self.bulk = false;
                    sender.stop_writing(); // the bulk writes end; the rate's clock starts
                }
                let rate = r.rate_bps as u128;
                let due = (rate * (now - self.start_ns) as u128 / 8_000_000_000) as u64;
                let segs = due.saturating_sub(self.written_bytes) / self.mss;
                if segs > 0 && !sender.write(now, segs * self.mss) {
                    self.next_write_ns = Nanos::MAX; // stopped
                    return;
                }
                self.written_bytes += segs * self.mss;
                // The next segment's last byte is due at start + (written + mss) · 8 / rate.
                let bits = (self.written_bytes + self.mss) as u128 * 8_000_000_000;
                self.next_write_ns = self.start_ns + bits.div_ceil(rate) as Nanos;
            }
            FlowApp::Onoff(o) => {
                if !sender.write(now, o.bytes) {
                    self.next_write_ns = Nanos::MAX;
                    return;
                }
                self.written_bytes += o.bytes.div_ceil(self.mss) * self.mss;
                self.next_write_ns = now + o.period_ns;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{f64s, run_to_end};

    /// A 50 Mbit/s, 20 ms dumbbell (1 BDP) for 10 s with `flows`.
    fn run(flows: &str) -> crate::Results {
        run_to_end(&format!(
            r#"{{"seed":3,"duration_ns":10000000000,"sample_interval_ns":100000000,
                "topology":{{"kind":"dumbbell","bottleneck":{{"rate_bps":50000000,"rtt_ns":20000000}}}},
                "flows":[{flows}]}}"#
        ))
    }

    /// BBR behind a 20 Mbit/s writer on a 50 Mbit/s link delivers the writer's rate (the link
    /// has room for it); its rate samples are app-limited (the sender runs dry between
    /// writes), a bulk BBR's are not.
    #[test]
    fn a_rate_limited_bbr_flow_delivers_the_app_rate_and_is_app_limited() {
        let r = run(r#"{"cc":"bbr","app":{"kind":"rate","rate_bps":20000000}}"#);
        let ts = &r.timeseries;
        let (t, del) = (f64s(ts, "t_s"), ts.get("delivered_bytes").unwrap().as_i64().unwrap());
        let at = |s: f64| del[t.iter().position(|&x| (x - s).abs() < 1e-9).unwrap()] as f64;
        let goodput = (at(10.0) - at(1.0)) * 8.0 / 9.0;
        let err = goodput / 20e6 - 1.0;
        let al = f64s(ts, "app_limited");
        let mean_al = al[10..].iter().sum::<f64>() / (al.len() - 10) as f64;
        println!(
            "rate-limited BBR: {:.4} Mbit/s ({:+.3} %), app-limited samples {:.3}",
            goodput / 1e6,
            err * 100.0,
            mean_al
        );
        assert!(err.abs() < 0.02, "goodput {goodput}");
        assert!(mean_al > 0.5, "app-limited fraction {mean_al}");
        let bulk = run(r#"{"cc":"bbr"}"#);
        let al = f64s(&bulk.timeseries, "app_limited");
        let bulk_al = al[10..].iter().sum::<f64>() / (al.len() - 10) as f64;
        println!("bulk BBR: app-limited samples {bulk_al:.3}");
        assert!(bulk_al < 0.01, "bulk app-limited fraction {bulk_al}");
    }

    /// A rate writer with `bulk_until` 5 s is a bulk sender until then (the link's 50 Mbit/s,
    /// samples not app-limited) and a 10 Mbit/s writer after it (app-limited samples).
    #[test]
    fn a_rate_writer_with_bulk_until_is_bulk_before_and_rate_limited_after() {
        let r = run(
            r#"{"cc":"bbr","app":{"kind":"rate","rate_bps":10000000,"bulk_until_ns":5000000000}}"#,
        );
        let ts = &r.timeseries;
        let (t, del) = (f64s(ts, "t_s"), ts.get("delivered_bytes").unwrap().as_i64().unwrap());
        let at = |s: f64| del[t.iter().position(|&x| (x - s).abs() < 1e-9).unwrap()] as f64;
        let before = (at(5.0) - at(1.0)) * 8.0 / 4.0;
        let after = (at(10.0) - at(6.0)) * 8.0 / 4.0;
        let al = f64s(ts, "app_limited");
        let al_mean = |a: usize, b: usize| al[a..b].iter().sum::<f64>() / (b - a) as f64;
        let (al_before, al_after) = (al_mean(10, 50), al_mean(60, al.len()));
        println!(
            "bulk until 5 s: {:.2} then {:.2} Mbit/s; app-limited {al_before:.3} then {al_after:.3}",
            before / 1e6,
            after / 1e6
        );
        assert!(before > 40e6, "bulk part {before}");
        assert!((after / 10e6 - 1.0).abs() < 0.02, "rate part {after}");
        assert!(al_before < 0.01 && al_after > 0.5, "{al_before} {al_after}");
    }

    /// An on/off writer of 250 kB every 100 ms delivers 20 Mbit/s (2.5 MB/s) in bursts: the
    /// link (50 Mbit/s) drains each burst in about 40 % of the period, so the flow is app-limited
    /// for part of every interval.
    #[test]
    fn an_onoff_writer_delivers_its_bursts() {
        let r =
            run(r#"{"cc":"cubic","app":{"kind":"onoff","bytes":250000,"period_ns":100000000}}"#);
        let ts = &r.timeseries;
        let del = ts.get("delivered_bytes").unwrap().as_i64().unwrap();
        // 173 segments of 1448 B per burst (250 000 B rounded up), 100 bursts by 10 s; the last
        // burst (written at 9.9 s) may still be on its way.
        let burst = 173 * 1448;
        let last = *del.last().unwrap();
        println!("on/off CUBIC: {last} B delivered, {} bursts", last as f64 / burst as f64);
        assert!(last <= 100 * burst && last >= 99 * burst, "{last}");
        let al = f64s(ts, "app_limited");
        assert!(al[5..].iter().all(|&a| a > 0.0), "{al:?}");
    }
}
