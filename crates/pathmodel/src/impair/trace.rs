//! A link whose capacity follows a recorded trace (`trace = "cell-down.mahimahi"`), in one of
//! two formats, both held by one [`Trace`] and served by one [`TraceService`]:
//!
//! - **Mahimahi** (Netravali et al., USENIX ATC 2015; the format of mahimahi's `traces/`): one
//!   integer per line, a time in ms from the start of the trace, each line one *delivery
//!   opportunity* for [`MAHIMAHI_OPPORTUNITY_BYTES`]; several opportunities in one ms repeat the
//!   line. Lines are nondecreasing, the last one is above 0, and the trace loops with period =
//!   the last timestamp (mm-link's default `repeat`; `LinkQueue::use_a_delivery_opportunity`
//!   adds `schedule_.back()` to its base at each wrap-around). Serving follows mahimahi's
//!   `src/frontend/link_queue.cc` (`LinkQueue::rationalize`): an opportunity that finds the
//!   queue empty is lost; one packet may use several opportunities, and the bytes an
//!   opportunity has left when a packet completes go to the packet behind it (the
//!   `packet_in_transit_bytes_left_` bookkeeping); a packet leaves at the time of the
//!   opportunity that carries its last byte. An opportunity at the very time a packet arrives
//!   to an idle link is not used by it (rationalize burns the opportunities due at `now`
//!   before the arriving packet is queued).
//! - **CSV** `t, rate` (seconds, bit/s; a header line is optional, `#` starts a comment): a
//!   piecewise-constant rate from each row's time to the next row's. The first row is at
//!   t = 0; the last row's rate holds for the rest of the run (a CSV trace does not loop: a
//!   rate row has no end time, so a period would be a guess). A rate of 0 is an outage: the
//!   packet on the wire waits for the next positive rate. Service is exact: a packet leaves
//!   when the integral of the rate from its start reaches its bits.
//!
//! The opportunity size: mahimahi's README calls each line "an opportunity for one 1500-byte
//! packet"; `link_queue.hh` sets `PACKET_SIZE = 1504`, because mm-link's TUN device is opened
//! without `IFF_NO_PI` (`src/util/netdevice.cc`), so each packet it reads carries the 4-byte TUN
//! packet-information header in front of a 1500-byte IP packet. bbrlab's `wire_bytes` has no
//! such header, so an opportunity here carries 1500 bytes of it: the same packets per
//! opportunity as mahimahi.
//!
//! Cost: [`TraceService::serve`] keeps a cursor (lap, index) and only moves forward: O(1) per
//! opportunity used, O(log n) to skip an idle gap (a binary search in one lap). Calls must
//! come in nondecreasing `start_ns` (a link's transmitter serves one packet after another).

use crate::{Nanos, MS};
use std::fmt;

/// Bytes of `wire_bytes` one Mahimahi delivery opportunity carries (see the header).
pub const MAHIMAHI_OPPORTUNITY_BYTES: u64 = 1500;

/// The window [`Trace::rate_at`] averages a Mahimahi trace over, centred on the time asked:
/// at 10 Mbit/s it holds ~83 opportunities (±1.2 % quantization), and it is shorter than the
/// seconds over which a cellular link's rate changes in mahimahi's recorded traces.
pub const RATE_WINDOW_NS: Nanos = 100 * MS;

const NS_PER_S: u128 = 1_000_000_000;

/// A trace that failed to parse: the line (from 1; 0 = the whole file), what it holds, why.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceError {
    pub line: usize,
    pub content: String,
    pub why: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.why)
        } else {
            write!(f, "line {}: {} ({:?})", self.line, self.why, self.content)
        }
    }
}

impl std::error::Error for TraceError {}

fn line_error(line: usize, content: &str, why: impl Into<String>) -> TraceError {
    TraceError { line, content: content.to_string(), why: why.into() }
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    /// Delivery opportunities: times within one lap, sorted, the last = `period_ns`.
    Opportunities { at_ns: Vec<Nanos>, period_ns: Nanos },
    /// Rate steps: `at_ns[0] = 0`, strictly increasing; `rate_bps[i]` holds from `at_ns[i]`.
    Rates { at_ns: Vec<Nanos>, rate_bps: Vec<u64> },
}

/// A parsed trace (either format).
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    kind: Kind,
}

impl Trace {
    /// Parse by file name: `.csv` is the `t, rate` CSV, anything else Mahimahi.
    pub fn parse(file_name: &str, text: &str) -> Result<Trace, TraceError> {
        if file_name.to_ascii_lowercase().ends_with(".csv") {
            Trace::parse_csv(text)
        } else {
            Trace::parse_mahimahi(text)
        }
    }

    /// A Mahimahi trace: one integer ms timestamp per line, nondecreasing, last above 0.
    pub fn parse_mahimahi(text: &str) -> Result<Trace, TraceError> {
        let mut at_ns: Vec<Nanos> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() {
                // As mm-link: "invalid empty line" (a final newline is not a line).
                return Err(line_error(i + 1, raw, "empty line"));
            }
            let ms: u64 = line
                .parse()
                .map_err(|_| line_error(i + 1, raw, "not a whole number of milliseconds"))?;
            let ns = ms.checked_mul(MS).ok_or_else(|| line_error(i + 1, raw, "too large"))?;
            if at_ns.last().is_some_and(|&prev| ns < prev) {
                return Err(line_error(i + 1, raw, "timestamps must be nondecreasing"));
            }
            at_ns.push(ns);
        }
        let period_ns = match at_ns.last() {
            None => return Err(line_error(0, "", "no timestamps in the trace")),
            Some(0) => {
                let why = "the trace must last a nonzero time (its last timestamp is its period)";
                return Err(line_error(at_ns.len(), "0", why));
            }
            Some(&last) => last,
        };
        Ok(Trace { kind: Kind::Opportunities { at_ns, period_ns } })
    }

    /// A `t, rate` CSV (seconds, bit/s), first row at t = 0, times strictly increasing.
    pub fn parse_csv(text: &str) -> Result<Trace, TraceError> {
        let (mut at_ns, mut rate_bps) = (Vec::<Nanos>::new(), Vec::<u64>::new());
        let mut last_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            if fields.len() != 2 {
                return Err(line_error(i + 1, raw, "expected two fields: t (s), rate (bit/s)"));
            }
            let (t, rate) = match (fields[0].parse::<f64>(), fields[1].parse::<f64>()) {
                (Ok(t), Ok(rate)) => (t, rate),
                // A header: only before the first row.
                (Err(_), Err(_)) if at_ns.is_empty() && last_line == 0 => {
                    last_line = i + 1;
                    continue;
                }
                _ => return Err(line_error(i + 1, raw, "not two numbers: t (s), rate (bit/s)")),
            };
            last_line = i + 1;
            if !t.is_finite() || t < 0.0 || !rate.is_finite() || rate < 0.0 {
                return Err(line_error(i + 1, raw, "t and rate must be finite and ≥ 0"));
            }
            let ns = (t * 1e9).round() as Nanos;
            if at_ns.is_empty() && ns != 0 {
                return Err(line_error(i + 1, raw, "the first row must be at t = 0"));
            }
            if at_ns.last().is_some_and(|&prev| ns <= prev) {
                return Err(line_error(i + 1, raw, "times must be strictly increasing"));
            }
            at_ns.push(ns);
            rate_bps.push(rate.round() as u64);
        }
        match rate_bps.last() {
            None => Err(line_error(0, "", "no rows in the trace")),
            Some(0) => Err(line_error(
                last_line,
                text.lines().nth(last_line - 1).unwrap_or(""),
                "the last rate holds for the rest of the run: it must be above 0",
            )),
            Some(_) => Ok(Trace { kind: Kind::Rates { at_ns, rate_bps } }),
        }
    }

    /// The mean rate over the trace (bit/s): a Mahimahi trace's over one period; a CSV trace's
    /// over [0, last row's time], or the one rate of a single-row trace.
    pub fn mean_rate_bps(&self) -> f64 {
        match &self.kind {
            Kind::Opportunities { at_ns, period_ns } => {
                (at_ns.len() as u64 * MAHIMAHI_OPPORTUNITY_BYTES * 8) as f64 * 1e9
                    / *period_ns as f64
            }
            Kind::Rates { at_ns, rate_bps } => {
                let end = *at_ns.last().unwrap();
                if end == 0 {
                    rate_bps[0] as f64
                } else {
                    self.mean_rate_between(0, end)
                }
            }
        }
    }

    /// The rate at `t` (bit/s), for tables: a CSV trace's rate in force; a Mahimahi trace's
    /// opportunities in the [`RATE_WINDOW_NS`] around `t` (cut at 0), times their bits.
    pub fn rate_at(&self, t_ns: Nanos) -> f64 {
        match &self.kind {
            Kind::Opportunities { .. } => {
                let from = t_ns.saturating_sub(RATE_WINDOW_NS / 2);
                self.mean_rate_between(from, from + RATE_WINDOW_NS)
            }
            Kind::Rates { at_ns, rate_bps } => {
                rate_bps[at_ns.partition_point(|&a| a <= t_ns) - 1] as f64
            }
        }
    }

    /// The mean rate over [from_ns, to_ns) (bit/s; 0 if the interval is empty).
    pub fn mean_rate_between(&self, from_ns: Nanos, to_ns: Nanos) -> f64 {
        if to_ns <= from_ns {
            return 0.0;
        }
        let nanobits = self.nanobits_before(to_ns) - self.nanobits_before(from_ns);
        nanobits as f64 / (to_ns - from_ns) as f64
    }

    /// Capacity from 0 to `x_ns` (exclusive), in bit × 1e9.
    fn nanobits_before(&self, x_ns: Nanos) -> u128 {
        match &self.kind {
            Kind::Opportunities { at_ns, period_ns } => {
                let per = MAHIMAHI_OPPORTUNITY_BYTES as u128 * 8 * NS_PER_S;
                per * opportunities_before(at_ns, *period_ns, x_ns) as u128
            }
            Kind::Rates { at_ns, rate_bps } => {
                let mut sum = 0u128;
                for (i, (&a, &r)) in at_ns.iter().zip(rate_bps).enumerate() {
                    if a >= x_ns {
                        break;
                    }
                    let end = at_ns.get(i + 1).map_or(x_ns, |&n| n.min(x_ns));
                    sum += r as u128 * (end - a) as u128;
                }
                sum
            }
        }
    }

    /// Mahimahi delivery opportunities in one period, or None for a CSV trace.
    pub fn opportunities_per_period(&self) -> Option<usize> {
        match &self.kind {
            Kind::Opportunities { at_ns, .. } => Some(at_ns.len()),
            Kind::Rates { .. } => None,
        }
    }

    /// The period of a Mahimahi trace (ns), or None for a CSV trace (which does not loop).
    pub fn period_ns(&self) -> Option<Nanos> {
        match &self.kind {
            Kind::Opportunities { period_ns, .. } => Some(*period_ns),
            Kind::Rates { .. } => None,
        }
    }
}

/// Opportunities at times < x: lap k holds `k × period + at` for each `at` in [0, period].
fn opportunities_before(at_ns: &[Nanos], period_ns: Nanos, x_ns: Nanos) -> u64 {
    let (laps, rem) = (x_ns / period_ns, x_ns % period_ns);
    let n = at_ns.len() as u64;
    // Laps 0..laps-1 end at or before laps × period; those at exactly laps × period (the
    // timestamps equal to the period) are not before x when rem = 0.
    let at_period = (at_ns.len() - at_ns.partition_point(|&a| a < period_ns)) as u64;
    let full = if laps == 0 { 0 } else { laps * n - if rem == 0 { at_period } else { 0 } };
    // Lap `laps` contributes its offsets < rem (none when rem = 0).
    full + at_ns.partition_point(|&a| a < rem) as u64
}

/// The transmitter of a link whose capacity follows a [`Trace`].
#[derive(Clone, Debug)]
pub struct TraceService {
    trace: Trace,
    cursor: Cursor,
}

/// Where a [`TraceService`] is in its trace.
#[derive(Clone, Debug, Default)]
struct Cursor {
    /// Opportunities: the next unused one, as (lap, index). Rates: index of the current step.
    lap: u64,
    index: usize,
    /// The opportunity that carried the last packet's last byte: its time and bytes left.
    partial: Option<(Nanos, u64)>,
    /// When the last packet left.
    last_done_ns: Option<Nanos>,
}

impl TraceService {
    pub fn new(trace: Trace) -> TraceService {
        TraceService { trace, cursor: Cursor::default() }
    }

    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// When the last bit of a packet of `wire_bytes` has left, if its transmission may start
    /// at `start_ns` (the later of its arrival at the head of the queue and the previous
    /// packet's departure). Calls come in nondecreasing `start_ns`.
    pub fn serve(&mut self, start_ns: Nanos, wire_bytes: u32) -> Nanos {
        let c = &mut self.cursor;
        let done = match &self.trace.kind {
            Kind::Opportunities { at_ns, period_ns } => {
                c.serve_opportunities(at_ns, *period_ns, start_ns, wire_bytes as u64)
            }
            Kind::Rates { at_ns, rate_bps } => {
                serve_rates(&mut c.index, at_ns, rate_bps, start_ns, wire_bytes as u64)
            }
        };
        c.last_done_ns = Some(done);
        done
    }
}

impl Cursor {
    fn serve_opportunities(
        &mut self,
        at_ns: &[Nanos],
        period_ns: Nanos,
        start_ns: Nanos,
        mut need: u64,
    ) -> Nanos {
        // Backlogged (it was waiting when the previous packet left): it takes what that
        // packet's last opportunity has left, then the next ones. Otherwise the link was idle
        // and every opportunity up to and including `start_ns` is gone.
        let backlogged = self.last_done_ns.is_some_and(|d| start_ns <= d);
        if backlogged {
            if let Some((t, left)) = self.partial {
                let used = need.min(left);
                need -= used;
                if need == 0 {
                    self.partial = Some((t, left - used));
                    return t;
                }
            }
        } else {
            self.skip_to_after(at_ns, period_ns, start_ns);
        }
        loop {
            let t = self.lap * period_ns + at_ns[self.index];
            self.index += 1;
            if self.index == at_ns.len() {
                self.index = 0;
                self.lap += 1;
            }
            let used = need.min(MAHIMAHI_OPPORTUNITY_BYTES);
            need -= used;
            if need == 0 {
                self.partial = Some((t, MAHIMAHI_OPPORTUNITY_BYTES - used));
                return t;
            }
        }
    }

    /// Move the cursor to the first opportunity after `t_ns` (never backwards).
    fn skip_to_after(&mut self, at_ns: &[Nanos], period_ns: Nanos, t_ns: Nanos) {
        if self.lap * period_ns + at_ns[self.index] > t_ns {
            return;
        }
        let lap = t_ns / period_ns;
        let index = at_ns.partition_point(|&a| lap * period_ns + a <= t_ns);
        (self.lap, self.index) = if index == at_ns.len() { (lap + 1, 0) } else { (lap, index) };
    }
}

/// Exact service on a piecewise-constant rate: the first time the rate's integral from
/// `start_ns` reaches the packet's bits. `index` is the cursor (the step in force).
fn serve_rates(
    index: &mut usize,
    at_ns: &[Nanos],
    rate_bps: &[u64],
    start_ns: Nanos,
    wire_bytes: u64,
) -> Nanos {
    while *index + 1 < at_ns.len() && at_ns[*index + 1] <= start_ns {
        *index += 1;
    }
    let mut need = wire_bytes as u128 * 8 * NS_PER_S;
    let mut t = start_ns;
    loop {
        let rate = rate_bps[*index] as u128;
        match at_ns.get(*index + 1) {
            // The last step: validated above 0.
            None => return t + need.div_ceil(rate) as Nanos,
            Some(&end) => {
                let room = rate * (end - t) as u128;
                if rate > 0 && room >= need {
                    return t + need.div_ceil(rate) as Nanos;
                }
                need -= room;
                t = end;
                *index += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mahimahi text with `per_ms` opportunities in each ms from 1 to `ms`.
    fn constant(per_ms: usize, ms: u64) -> String {
        let mut s = String::new();
        for t in 1..=ms {
            for _ in 0..per_ms {
                s += &format!("{t}\n");
            }
        }
        s
    }

    #[test]
    fn mahimahi_parse_errors_name_line_and_content() {
        let e = Trace::parse_mahimahi("1\n2\nx3\n").unwrap_err();
        assert_eq!((e.line, e.content.as_str()), (3, "x3"));
        let e = Trace::parse_mahimahi("5\n4\n").unwrap_err();
        assert_eq!((e.line, e.content.as_str()), (2, "4"));
        assert!(e.to_string().contains("nondecreasing"), "{e}");
        assert_eq!(Trace::parse_mahimahi("1\n\n2\n").unwrap_err().line, 2);
        assert_eq!(Trace::parse_mahimahi("").unwrap_err().line, 0);
        assert_eq!(Trace::parse_mahimahi("0\n0\n").unwrap_err().line, 2);
        assert!(Trace::parse_mahimahi("0\n3\n3\n").is_ok());
    }

    #[test]
    fn mahimahi_mean_rate_and_period() {
        // README: "1" alone is one 1500-byte packet per ms = 12 Mbit/s.
        let t = Trace::parse_mahimahi("1\n").unwrap();
        assert_eq!(t.mean_rate_bps(), 12e6);
        assert_eq!(t.period_ns(), Some(MS));
        let t = Trace::parse_mahimahi(&constant(2, 100)).unwrap();
        assert_eq!(t.mean_rate_bps(), 24e6);
        // The window around 55 ms, [5, 105) ms, holds 100 ms of timestamps: 96 of lap 0
        // (5..=100) and 4 of lap 1 (101..=104, the trace's 1..=4 again).
        assert_eq!(t.rate_at(55 * MS), 24e6);
        // [0, 100) ms holds only 99 (1..=99): the window is half-open.
        assert_eq!(t.rate_at(50 * MS), 24e6 * 0.99);
        assert_eq!(t.mean_rate_between(MS / 2, 1000 * MS + MS / 2), 24e6);
    }

    #[test]
    fn a_saturated_mahimahi_link_delivers_one_packet_per_opportunity_and_loops() {
        // Opportunities at 1, 1, 3 ms (period 3 ms); backlogged 1500-byte packets leave at
        // 1, 1, 3, then 4, 4, 6 (lap 1), 7, 7, 9…
        let mut s = TraceService::new(Trace::parse_mahimahi("1\n1\n3\n").unwrap());
        let mut done = 0;
        let mut out = vec![];
        for _ in 0..9 {
            done = s.serve(done, 1500);
            out.push(done / MS);
        }
        assert_eq!(out, [1, 1, 3, 4, 4, 6, 7, 7, 9]);
    }

    #[test]
    fn idle_opportunities_are_lost() {
        let mut s = TraceService::new(Trace::parse_mahimahi(&constant(1, 10)).unwrap());
        assert_eq!(s.serve(0, 1500), MS);
        // Idle from 1 to 5.5 ms: opportunities 2..5 are gone; the next is at 6 ms.
        assert_eq!(s.serve(5 * MS + MS / 2, 1500), 6 * MS);
        // Arriving exactly at an opportunity to an idle link: that one is gone too (as
        // mahimahi's rationalize burns it before the packet is queued).
        assert_eq!(s.serve(8 * MS, 1500), 9 * MS);
        // Idle across laps: 10 ms period; 37.2 ms → the opportunity at 38 ms.
        assert_eq!(s.serve(37 * MS + MS / 5, 1500), 38 * MS);
    }

    #[test]
    fn partial_opportunities_carry_over_as_in_link_queue() {
        let mut s = TraceService::new(Trace::parse_mahimahi(&constant(1, 10)).unwrap());
        // 500 + 500 + 500 bytes share the opportunity at 1 ms; the fourth takes the next.
        assert_eq!(s.serve(0, 500), MS);
        assert_eq!(s.serve(MS, 500), MS);
        assert_eq!(s.serve(MS, 500), MS);
        assert_eq!(s.serve(MS, 500), 2 * MS);
        // 1000 bytes left at 2 ms; a 4000-byte packet takes those and the opportunities at
        // 3 and 4 ms (1000 + 1500 + 1500 = 4000): it leaves at 4 ms.
        assert_eq!(s.serve(2 * MS, 4000), 4 * MS);
        // Nothing left at 4 ms: the next leaves at 5 ms.
        assert_eq!(s.serve(4 * MS, 100), 5 * MS);
        // An idle packet does not get the leftover of an earlier opportunity.
        assert_eq!(s.serve(5 * MS + 1, 100), 6 * MS);
    }

    #[test]
    fn csv_parse_header_comments_and_errors() {
        let t = Trace::parse_csv("t,rate\n0, 10e6 # start\n\n2.5,20000000\n").unwrap();
        assert_eq!(t.rate_at(2_499_999_999), 10e6);
        assert_eq!(t.rate_at(2_500_000_000), 20e6);
        assert_eq!(t.rate_at(u64::MAX / 2), 20e6, "the last rate holds");
        assert_eq!(t.mean_rate_bps(), 10e6);
        assert_eq!(t.period_ns(), None);
        let e = Trace::parse_csv("t,rate\n0,1\n1;2\n").unwrap_err();
        assert_eq!((e.line, e.content.as_str()), (3, "1;2"));
        assert_eq!(Trace::parse_csv("0,1\nt,rate\n").unwrap_err().line, 2);
        assert_eq!(Trace::parse_csv("1,5\n").unwrap_err().line, 1);
        assert_eq!(Trace::parse_csv("0,5\n2,1\n2,3\n").unwrap_err().line, 3);
        assert_eq!(Trace::parse_csv("0,5\n2,0\n").unwrap_err().line, 2);
        assert_eq!(Trace::parse_csv("0,-5\n").unwrap_err().line, 1);
        assert_eq!(Trace::parse_csv("t,rate\n").unwrap_err().line, 0);
    }

    #[test]
    fn csv_service_integrates_the_rate_across_steps_and_outages() {
        // 8 Mbit/s (1 byte/µs) for 1 ms, outage for 1 ms, then 16 Mbit/s.
        let mut s = TraceService::new(Trace::parse_csv("0,8e6\n0.001,0\n0.002,16e6\n").unwrap());
        assert_eq!(s.serve(0, 500), 500_000);
        // 1000 bytes from 0.5 ms: 500 by 1 ms, wait out the outage, 500 at 2 B/µs = 250 µs.
        assert_eq!(s.serve(500_000, 1000), 2_250_000);
        // Idle, then from 10 ms: 1500 bytes at 2 B/µs.
        assert_eq!(s.serve(10 * MS, 1500), 10 * MS + 750_000);
        // Rounding up: 1 byte at 3 bit/s takes ceil(8/3 s).
        let mut s = TraceService::new(Trace::parse_csv("0,3\n").unwrap());
        assert_eq!(s.serve(0, 1), 2_666_666_667);
    }

    #[test]
    fn parse_picks_the_format_by_file_name() {
        assert!(Trace::parse("up.CSV", "0,1\n").unwrap().period_ns().is_none());
        assert!(Trace::parse("up.mahimahi", "3\n").unwrap().period_ns().is_some());
    }

    #[test]
    fn ten_minutes_at_10_mbps_is_fast_and_delivers_the_trace_rate() {
        // ~10 Mbit/s: 5 opportunities every 6 ms, 600 s of trace (500 000 lines).
        let mut text = String::new();
        for t in 1..=600_000u64 {
            if t % 6 != 1 {
                text += &format!("{t}\n");
            }
        }
        let t0 = std::time::Instant::now();
        let trace = Trace::parse_mahimahi(&text).unwrap();
        assert_eq!(trace.mean_rate_bps(), 10e6);
        let mut s = TraceService::new(trace);
        // A saturated sender of 1448-byte packets for 600 s.
        let (mut done, mut bytes) = (0, 0u64);
        while done < 600_000 * MS {
            done = s.serve(done, 1448);
            bytes += 1448;
        }
        let elapsed = t0.elapsed();
        let rate = bytes as f64 * 8.0 / 600.0;
        assert!((rate - 10e6).abs() < 0.001 * 10e6, "rate {rate}");
        // The budget is for optimized builds (`cargo test --release`).
        if !cfg!(debug_assertions) {
            assert!(elapsed.as_secs_f64() < 2.0, "took {elapsed:?}");
        }
        eprintln!("10 min of a 10 Mbit/s trace: parse + {bytes} bytes served in {elapsed:?}");
    }
}
