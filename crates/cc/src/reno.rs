//! Reno / NewReno congestion avoidance (RFC 5681 §3.1, Linux `tcp_cong.c`: `tcp_reno_*`).
//!
//! Slow start adds one segment per segment acked until ssthresh; congestion avoidance adds one
//! segment per cwnd of segments acked (appropriate byte counting in segment units, as Linux's
//! `tcp_cong_avoid_ai`). On a congestion event ssthresh = max(cwnd/2, 2) (Linux
//! `tcp_reno_ssthresh` halves cwnd, RFC 5681 halves FlightSize; with SACK recovery they agree
//! closely). Loss recovery itself — SACK scoreboard (RFC 6675), NewReno partial ACKs (RFC 6582),
//! PRR (RFC 9937), RTO to one segment — is the transport's job, as in Linux.

use crate::{tcp_cong_avoid_ai, tcp_slow_start, CcStateSample, CongestionOps, TcpCc};

#[derive(Clone, Debug, Default)]
pub struct Reno {}

impl Reno {
    pub fn new() -> Self {
        Reno {}
    }
}

impl CongestionOps for Reno {
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        (tp.snd_cwnd >> 1).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if tp.in_slow_start() {
            acked = tcp_slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        let w = tp.snd_cwnd;
        tcp_cong_avoid_ai(tp, w, acked);
    }

    fn sample(&self, tp: &TcpCc) -> CcStateSample {
        let (phase, code) = phase_of(tp);
        CcStateSample { phase, phase_code: code, ..Default::default() }
    }
}

/// Phase of the loss-based algorithms ([`crate::phases::LOSS_BASED`]): Linux's recovery state
/// when it is not Open/Disorder, else slow start or congestion avoidance.
pub fn phase_of(tp: &TcpCc) -> (&'static str, u8) {
    use crate::phases::*;
    use crate::CaState::*;
    let code = match tp.ca_state {
        Recovery => LOSS_BASED_RECOVERY,
        Loss => LOSS_BASED_LOSS,
        Cwr => LOSS_BASED_CWR,
        _ if tp.in_slow_start() => LOSS_BASED_SS,
        _ => LOSS_BASED_CA,
    };
    phase(LOSS_BASED, code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_doubles_per_round_and_ca_adds_one_per_round() {
        let mut tp = TcpCc::new(1448, 10);
        let mut r = Reno::new();
        tp.is_cwnd_limited = true;
        // One round of ACKs for 10 segments, one per ACK: cwnd 10 -> 20.
        for _ in 0..10 {
            tp.packets_out = tp.snd_cwnd;
            r.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 20);
        // Congestion avoidance: ssthresh 20; a full window of ACKs adds exactly one segment.
        tp.snd_ssthresh = 20;
        for _ in 0..20 {
            r.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 21);
        assert_eq!(r.ssthresh(&tp), 10);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut tp = TcpCc::new(1448, 10);
        tp.snd_ssthresh = 5;
        tp.is_cwnd_limited = false;
        let mut r = Reno::new();
        for _ in 0..100 {
            r.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 10);
    }
}
