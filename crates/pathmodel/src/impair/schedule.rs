//! A link's schedule: piecewise-constant changes of its rate, base RTT, random loss and buffer,
//! each at a given time since the start of the run (`[[topology.bottleneck.schedule]]`).
//!
//! A change sets only the parameters it names; the others keep their values. Changes are
//! validated once (times strictly increasing, at least one parameter, a loss in [0, 1), a
//! rate above zero): an error names the entry by its index in the list, as the user wrote it.
//!
//! The link holds a cursor: [`Schedule::next_change_at`] is the time it must wake up (the
//! simulator's next event for the link, the emulator's poll deadline), and
//! [`Schedule::take_due`] hands over each change whose time has come, in order, once. A rate
//! change applies to packets whose transmission starts at or after it (a packet already on
//! the wire keeps its rate, as a NIC's serializer would); a buffer change applies to
//! arrivals (packets already queued stay, [`crate::aqm::Aqm::set_limit`]).

use crate::aqm::Limit;
use crate::Nanos;
use std::fmt;

/// One change of the link's parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Change {
    /// When it applies (ns since the start of the run).
    pub at_ns: Nanos,
    /// The new link rate (bit/s).
    pub rate_bps: Option<u64>,
    /// The new two-way base propagation delay (the link's `rtt_ns`).
    pub rtt_ns: Option<Nanos>,
    /// The new one-way propagation delay (a link that has a `delay_ns`, not an `rtt_ns`).
    pub delay_ns: Option<Nanos>,
    /// The new Bernoulli loss probability.
    pub loss: Option<f64>,
    /// The new buffer limit.
    pub limit: Option<Limit>,
}

/// Why a schedule is invalid; `index` is the entry's position in the list (from 0).
#[derive(Clone, Debug, PartialEq)]
pub enum ScheduleError {
    /// `at_ns` is not after the previous entry's.
    NotIncreasing { index: usize, at_ns: Nanos, previous_ns: Nanos },
    /// The entry changes nothing.
    Empty { index: usize },
    /// A loss outside [0, 1).
    Loss { index: usize, loss: f64 },
    /// A rate of zero (a link that never sends; use a trace for outages).
    ZeroRate { index: usize },
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleError::NotIncreasing { index, at_ns, previous_ns } => write!(
                f,
                "schedule entry {index}: at = {at_ns} ns is not after the previous entry's \
                 {previous_ns} ns (entries must be in strictly increasing time)"
            ),
            ScheduleError::Empty { index } => {
                write!(f, "schedule entry {index}: sets none of rate, rtt or delay, loss, buffer")
            }
            ScheduleError::Loss { index, loss } => {
                write!(f, "schedule entry {index}: loss = {loss} is not in [0, 1)")
            }
            ScheduleError::ZeroRate { index } => write!(f, "schedule entry {index}: rate = 0"),
        }
    }
}

impl std::error::Error for ScheduleError {}

/// Validated changes and the cursor of the next one to apply.
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    changes: Vec<Change>,
    next: usize,
}

impl Schedule {
    /// Validate `changes` (in the order written).
    pub fn new(changes: Vec<Change>) -> Result<Schedule, ScheduleError> {
        for (index, c) in changes.iter().enumerate() {
            if index > 0 && c.at_ns <= changes[index - 1].at_ns {
                let previous_ns = changes[index - 1].at_ns;
                return Err(ScheduleError::NotIncreasing { index, at_ns: c.at_ns, previous_ns });
            }
            let delay = c.rtt_ns.is_some() || c.delay_ns.is_some();
            if c.rate_bps.is_none() && !delay && c.loss.is_none() && c.limit.is_none() {
                return Err(ScheduleError::Empty { index });
            }
            if let Some(loss) = c.loss {
                if !(0.0..1.0).contains(&loss) {
                    return Err(ScheduleError::Loss { index, loss });
                }
            }
            if c.rate_bps == Some(0) {
                return Err(ScheduleError::ZeroRate { index });
            }
        }
        Ok(Schedule { changes, next: 0 })
    }

    /// When the next change applies (None: no more).
    #[inline]
    pub fn next_change_at(&self) -> Option<Nanos> {
        self.changes.get(self.next).map(|c| c.at_ns)
    }

    /// The next change if its time has come by `now` (call until None: several may be due).
    #[inline]
    pub fn take_due(&mut self, now: Nanos) -> Option<Change> {
        let c = *self.changes.get(self.next)?;
        if c.at_ns > now {
            return None;
        }
        self.next += 1;
        Some(c)
    }

    /// All the changes, in order.
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// The link's parameters in force at `t`: the latest change of each at or before `t`
    /// (for tables and for a link built mid-run; does not move the cursor).
    pub fn in_force_at(&self, t: Nanos) -> Change {
        let mut now = Change { at_ns: t, ..Change::default() };
        for c in self.changes.iter().take_while(|c| c.at_ns <= t) {
            now.rate_bps = c.rate_bps.or(now.rate_bps);
            now.rtt_ns = c.rtt_ns.or(now.rtt_ns);
            now.delay_ns = c.delay_ns.or(now.delay_ns);
            now.loss = c.loss.or(now.loss);
            now.limit = c.limit.or(now.limit);
        }
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MS;

    fn rate(at_ns: Nanos, rate_bps: u64) -> Change {
        Change { at_ns, rate_bps: Some(rate_bps), ..Change::default() }
    }

    #[test]
    fn changes_come_out_once_in_order_at_their_times() {
        let mut s = Schedule::new(vec![
            rate(5 * MS, 10_000_000),
            Change { at_ns: 7 * MS, loss: Some(0.01), ..Change::default() },
            rate(9 * MS, 20_000_000),
        ])
        .unwrap();
        assert_eq!(s.next_change_at(), Some(5 * MS));
        assert_eq!(s.take_due(5 * MS - 1), None);
        assert_eq!(s.take_due(5 * MS).unwrap().rate_bps, Some(10_000_000));
        assert_eq!(s.take_due(5 * MS), None);
        assert_eq!(s.next_change_at(), Some(7 * MS));
        // Late wake-up: both due changes come out, in order.
        assert_eq!(s.take_due(10 * MS).unwrap().at_ns, 7 * MS);
        assert_eq!(s.take_due(10 * MS).unwrap().at_ns, 9 * MS);
        assert_eq!(s.take_due(u64::MAX), None);
        assert_eq!(s.next_change_at(), None);
    }

    #[test]
    fn errors_name_the_entry() {
        let e = Schedule::new(vec![rate(5 * MS, 1), rate(5 * MS, 2)]).unwrap_err();
        assert_eq!(
            e,
            ScheduleError::NotIncreasing { index: 1, at_ns: 5 * MS, previous_ns: 5 * MS }
        );
        assert!(e.to_string().starts_with("schedule entry 1:"), "{e}");
        let e = Schedule::new(vec![rate(1, 1), Change { at_ns: 2, ..Change::default() }]);
        assert_eq!(e.unwrap_err(), ScheduleError::Empty { index: 1 });
        let e = Schedule::new(vec![Change { at_ns: 0, loss: Some(1.0), ..Change::default() }]);
        assert_eq!(e.unwrap_err(), ScheduleError::Loss { index: 0, loss: 1.0 });
        assert_eq!(
            Schedule::new(vec![rate(3, 0)]).unwrap_err(),
            ScheduleError::ZeroRate { index: 0 }
        );
    }

    #[test]
    fn in_force_keeps_each_parameter_from_its_latest_change() {
        let lim = Limit { bytes: Some(64_000), packets: None };
        let s = Schedule::new(vec![
            rate(MS, 10),
            Change { at_ns: 2 * MS, limit: Some(lim), ..Change::default() },
            rate(3 * MS, 30),
        ])
        .unwrap();
        let c = s.in_force_at(2 * MS);
        assert_eq!((c.rate_bps, c.limit, c.loss), (Some(10), Some(lim), None));
        assert_eq!(s.in_force_at(3 * MS).rate_bps, Some(30));
        assert_eq!(s.in_force_at(0).rate_bps, None);
    }
}
