//! The receive window a Linux receiver offers when the application sets no `SO_RCVBUF`: receive
//! buffer autotuning (Dynamic Right-Sizing) and the window's growth toward it, as Linux 6.18
//! `tcp_input.c` has them.
//!
//! Why it is modelled: the window's growth decides when the receiver ACKs. While the window
//! grows, every in-order segment that grows it is ACKed at once (`tcp_grow_window` sets
//! `icsk_ack.quick |= 1`), so a receiver ACKs every segment, not every second one, for much of
//! a connection's slow start. A CUBIC sender's HyStart counts ACKs less than 2 ms apart as an
//! ACK train (`hystart_ack_delta_us`): at 10 Mbit/s a 1538-byte packet takes 1.23 ms, so
//! per-segment ACKs form a train and every-second-segment ACKs (2.46 ms apart) never do. The
//! kernel's CUBIC therefore leaves slow start by the ACK train about one round earlier than a
//! receiver that never ACKs faster would let it (docs/queues.md: cwnd 59 against 96 at
//! 10 Mbit/s × 40 ms, and a CoDel p99 sojourn of 14 ms against 40 ms).
//!
//! The model, in bytes, with Linux's names:
//! - `rcvbuf` (`sk_rcvbuf`) starts at `tcp_rmem[1]` = 128 KiB. Memory and window convert by the
//!   scaling ratio (`tcp_win_from_space`): payload per byte of skb memory, which Linux measures
//!   from each skb's `len`/`truesize` ([`SCALING_RATIO_256`]).
//! - The handshake: the SYN-ACK offers `rcvbuf` at the default ratio of 1/2
//!   (`TCP_DEFAULT_SCALING_RATIO`), rounded down to whole segments (`tcp_select_initial_window`):
//!   65 160 bytes, 45 segments, at a 1448-byte MSS. That is also `rcv_ssthresh`.
//! - The first data segment sets the measured ratio, and `window_clamp` becomes
//!   `win_from_space(rcvbuf)` (`tcp_measure_rcv_mss` → `tcp_set_window_clamp`).
//! - Each in-order segment (`tcp_grow_window`): if `rcv_ssthresh` is below what the buffer can
//!   hold (`min(window_clamp, tcp_space)`), it grows by max(2·MSS, 2·len), up to that, and the
//!   segment is ACKed at once.
//! - Each read by the application (`tcp_rcv_space_adjust`), at most once per receiver RTT: the
//!   bytes read in the last RTT (`copied`) against those of the RTT before (`space`); if more,
//!   `tcp_rcvbuf_grow`: `rcvwin = 2·copied` ("DRS is always one RTT late"), plus
//!   `2·rcvwin·(copied − space)/space` ("slow start: allow the sender to double its rate"), plus
//!   the out-of-order span; `rcvbuf = space_from_win(rcvwin)`, never shrinking, up to
//!   `tcp_rmem[2]`; `window_clamp` follows. (Linux 6.18: "tcp: fix too slow tcp_rcvbuf_grow()
//!   action".) `space` starts at 10 segments (`tcp_init_buffer_space`).
//! - The receiver's RTT (`rcv_rtt_est`, `tcp_rcv_rtt_measure_ts`): from the timestamp each
//!   segment echoes, at the 1-ms TS clock; a lower sample replaces the estimate, a higher one
//!   moves it by 1/8 (only with nothing unread). The handshake gives the first.
//! - The window offered is `min(rcv_ssthresh, tcp_space)` (`__tcp_select_window`), where
//!   `tcp_space` is the clamp less what the buffer holds (unread and out-of-order data), and
//!   its right edge never moves back (`tcp_select_window`).
//!
//! `tcp_rmem[2]`: Linux 6.18's default is 32 MiB, which limits a 100 ms path to 2.7 Gbit/s
//! (window_clamp 20 MB); hosts that run such paths raise it, and bbrlab's emulator sets it to
//! 4×(BDP + buffer) so that the window never limits a bulk flow. The simulator does the same by
//! leaving it unlimited ([`RMEM_MAX_BYTES`]); a flow that sets `rcvbuf` gets a fixed window
//! instead (as `SO_RCVBUF` locks the buffer). Memory pressure, `tcp_adv_win_scale`, window
//! scaling's 128-byte granularity and the `truesize` of coalesced skbs are not modelled.

use cc::Nanos;

/// Linux `tcp_rmem[1]`: the receive buffer a connection starts with, bytes of skb memory.
pub const RMEM_DEFAULT_BYTES: u64 = 131_072;
/// The ceiling of `rcvbuf` (Linux `tcp_rmem[2]`): none, as bbrlab's emulator sizes `tcp_rmem[2]`
/// so that the window never limits a bulk flow (module doc). 2^40 bytes keeps the arithmetic
/// in range.
pub const RMEM_MAX_BYTES: u64 = 1 << 40;
/// Linux `TCP_DEFAULT_SCALING_RATIO` (out of 256): window per byte of buffer before any data
/// has arrived, when the SYN-ACK's window is chosen.
pub const DEFAULT_SCALING_RATIO_256: u64 = 128;
/// The scaling ratio (out of 256) once data arrives: Linux sets it to `len · 256 / truesize` of
/// the segments received. 157 is what this project's emulator's kernel shows (veth, 1500-byte
/// MTU, Linux 6.18): its first window after data is 629 × 128 = 80 512 bytes of a 131 072-byte
/// buffer (0.614). A NIC whose driver allocates other buffer sizes gives another ratio.
pub const SCALING_RATIO_256: u64 = 157;
/// Linux `TCP_INIT_CWND`: `rcvq_space.space` starts at this many segments.
const INIT_SPACE_SEGS: u64 = 10;
/// Linux `tcp_event_data_recv`: only a segment of at least 128 bytes grows the window.
const GROW_MIN_LEN_BYTES: u32 = 128;
/// Linux's TCP timestamp clock (`TCP_TS_HZ` = 1000): the receiver's RTT samples are whole ms.
const TS_TICK_NS: Nanos = 1_000_000;

#[inline]
fn win_from_space(space: u64, ratio_256: u64) -> u64 {
    (space * ratio_256) >> 8
}

#[inline]
fn space_from_win(win: u64, ratio_256: u64) -> u64 {
    (win << 8) / ratio_256
}

/// One receiver's autotuning state (all bytes unless named otherwise). Eight words, one cache
/// line: an in-order segment reads `rcv_ssthresh` and `window_clamp`, and a read the RTT fields.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct RcvSpace {
    /// Linux `rcv_ssthresh`: the window the receiver is willing to offer now.
    pub rcv_ssthresh_bytes: u64,
    /// Linux `window_clamp`: `win_from_space(rcvbuf)`, the largest window the buffer allows.
    pub window_clamp_bytes: u64,
    /// Linux `sk_rcvbuf`.
    pub rcvbuf_bytes: u64,
    /// Linux `rcvq_space.space`: bytes read in the last measured RTT.
    space_bytes: u64,
    /// Linux `rcvq_space.seq`: bytes read when the measure began.
    space_seq_bytes: u64,
    /// Linux `rcvq_space.time`.
    space_time_ns: Nanos,
    /// Linux `rcv_rtt_est.rtt_us` (unscaled); 0 before the first sample.
    pub rcv_rtt_ns: Nanos,
    /// The last timestamp echo sampled (Linux `rcv_rtt_last_tsecr`).
    last_tsecr_ns: Nanos,
}

impl RcvSpace {
    /// The connection is established at `now` (Linux `tcp_init_buffer_space`), after a
    /// handshake that measured `handshake_rtt_ns`. Returns it and the SYN-ACK's window in
    /// segments.
    pub fn new(now: Nanos, mss: u32, handshake_rtt_ns: Nanos) -> (RcvSpace, u64) {
        let mss = u64::from(mss);
        let syn_window_segs = win_from_space(RMEM_DEFAULT_BYTES, DEFAULT_SCALING_RATIO_256) / mss;
        // The buffer's full window at the measured ratio, applied at the first segment; the
        // SYN-ACK's window is where rcv_ssthresh starts (tcp_set_window_clamp raises
        // rcv_ssthresh to min(rcv_wnd, clamp) when the clamp grows).
        let clamp = win_from_space(RMEM_DEFAULT_BYTES, SCALING_RATIO_256);
        let space = RcvSpace {
            rcv_ssthresh_bytes: (syn_window_segs * mss).min(clamp),
            window_clamp_bytes: clamp,
            rcvbuf_bytes: RMEM_DEFAULT_BYTES,
            space_bytes: INIT_SPACE_SEGS * mss,
            space_seq_bytes: 0,
            space_time_ns: now,
            rcv_rtt_ns: handshake_rtt_ns,
            last_tsecr_ns: 0,
        };
        (space, syn_window_segs)
    }

    /// What the buffer can still take, as window (`tcp_space`): the clamp less `held_bytes`
    /// (unread and out-of-order data; their memory converts back at the same ratio).
    #[inline]
    fn space_left(&self, held_bytes: u64) -> u64 {
        self.window_clamp_bytes.saturating_sub(held_bytes)
    }

    /// The window to offer now (`__tcp_select_window`, before the never-shrink rule).
    #[inline]
    pub fn window_bytes(&self, held_bytes: u64) -> u64 {
        self.rcv_ssthresh_bytes.min(self.space_left(held_bytes))
    }

    /// An in-order segment of `len` bytes arrived (`tcp_grow_window`); true when it grew the
    /// window, which asks for an immediate ACK (`icsk_ack.quick |= 1`).
    #[inline]
    pub fn grow_window(&mut self, len: u32, mss: u32, held_bytes: u64) -> bool {
        let room = self.space_left(held_bytes).saturating_sub(self.rcv_ssthresh_bytes);
        if room == 0 || len < GROW_MIN_LEN_BYTES {
            return false;
        }
        let incr = 2 * u64::from(mss.max(len));
        self.rcv_ssthresh_bytes += room.min(incr);
        true
    }

    /// A data segment echoing timestamp `tsecr_ns` (0: none yet) arrived at `now`
    /// (`tcp_rcv_rtt_measure_ts`); `full` = it is a full-sized segment, `drained` = nothing
    /// is left unread.
    #[inline]
    pub fn rtt_sample(&mut self, now: Nanos, tsecr_ns: Nanos, full: bool, drained: bool) {
        if tsecr_ns == 0 || tsecr_ns == self.last_tsecr_ns {
            return;
        }
        self.last_tsecr_ns = tsecr_ns;
        if !full {
            return;
        }
        let sample = (now / TS_TICK_NS).saturating_sub(tsecr_ns / TS_TICK_NS) * TS_TICK_NS;
        if sample == 0 {
            return;
        }
        if self.rcv_rtt_ns == 0 || sample < self.rcv_rtt_ns {
            self.rcv_rtt_ns = sample;
        } else if drained {
            self.rcv_rtt_ns = self.rcv_rtt_ns - self.rcv_rtt_ns / 8 + sample / 8;
        }
    }

    /// The application has read everything in order, `copied_bytes` in all, at `now`
    /// (`tcp_rcv_space_adjust`; the application reads all there is, so Linux's `inq` is 0);
    /// `ooo_span_bytes` is how far out-of-order data reaches past the next expected byte.
    #[inline]
    pub fn on_read(&mut self, now: Nanos, copied_bytes: u64, ooo_span_bytes: u64) {
        if self.rcv_rtt_ns == 0 || now.saturating_sub(self.space_time_ns) < self.rcv_rtt_ns {
            return;
        }
        let copied = copied_bytes.saturating_sub(self.space_seq_bytes);
        if copied > self.space_bytes {
            self.rcvbuf_grow(copied, ooo_span_bytes);
        }
        self.space_seq_bytes = copied_bytes;
        self.space_time_ns = now;
    }

    /// Out-of-order data arrived (`tcp_data_queue_ofo` → `tcp_rcvbuf_grow(sk, space)`): room
    /// for what it spans, at the current rate.
    #[inline]
    pub fn on_ooo(&mut self, ooo_span_bytes: u64) {
        self.rcvbuf_grow(self.space_bytes, ooo_span_bytes);
    }

    /// Linux 6.18 `tcp_rcvbuf_grow(sk, newval)`. The slow-start term is a product of two byte
    /// counts (rcvwin · growth): in 128 bits, as a gigabyte per RTT squared passes 2^64.
    fn rcvbuf_grow(&mut self, new_space: u64, ooo_span_bytes: u64) {
        let old = self.space_bytes.max(1);
        self.space_bytes = new_space;
        let rcvwin = u128::from(new_space) << 1;
        let grow = rcvwin * u128::from(new_space.saturating_sub(old)) / u128::from(old);
        let rcvwin = (rcvwin + (grow << 1) + u128::from(ooo_span_bytes))
            .min(u128::from(RMEM_MAX_BYTES)) as u64;
        let rcvbuf = space_from_win(rcvwin, SCALING_RATIO_256).min(RMEM_MAX_BYTES);
        if rcvbuf > self.rcvbuf_bytes {
            self.rcvbuf_bytes = rcvbuf;
            self.window_clamp_bytes = win_from_space(rcvbuf, SCALING_RATIO_256);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;
    const MS: Nanos = 1_000_000;

    #[test]
    fn handshake_and_first_window_match_the_kernel() {
        let (s, syn_segs) = RcvSpace::new(0, MSS, 40 * MS);
        // The emulator's kernel: SYN-ACK window 65 160 = 45 × 1448; the first window after
        // data 80 512 (629 units of 128), 55 whole segments.
        assert_eq!(syn_segs, 45);
        assert_eq!(s.rcv_ssthresh_bytes, 65_160);
        assert_eq!(s.window_clamp_bytes / u64::from(MSS), 55);
        assert!((s.window_clamp_bytes as i64 - 80_512).abs() < 256);
    }

    #[test]
    fn window_grows_two_segments_per_segment_up_to_the_clamp_then_stops_asking_for_acks() {
        let (mut s, _) = RcvSpace::new(0, MSS, 40 * MS);
        let mut grew = 0;
        while s.grow_window(MSS, MSS, 0) {
            grew += 1;
        }
        // 65 160 → 80 384 in steps of 2896: six steps, the last partial.
        assert_eq!(grew, 6);
        assert_eq!(s.rcv_ssthresh_bytes, s.window_clamp_bytes);
        assert!(!s.grow_window(MSS, MSS, 0));
        // Small segments never grow it; held data leaves no room.
        let (mut t, _) = RcvSpace::new(0, MSS, 40 * MS);
        assert!(!t.grow_window(100, MSS, 0));
        assert!(!t.grow_window(MSS, MSS, 20_000));
    }

    #[test]
    fn drs_waits_an_rtt_and_lets_a_slow_start_double() {
        let (mut s, _) = RcvSpace::new(0, MSS, 40 * MS);
        let seg = u64::from(MSS);
        // Before an RTT has passed nothing changes, however much was read.
        s.on_read(39 * MS, 100 * seg, 0);
        assert_eq!(s.rcvbuf_bytes, RMEM_DEFAULT_BYTES);
        // First RTT: 10 segments, no more than the initial space: no growth.
        s.on_read(40 * MS, 10 * seg, 0);
        assert_eq!(s.rcvbuf_bytes, RMEM_DEFAULT_BYTES);
        // Second RTT: 20 segments read. rcvwin = 2·20 + 2·(2·20)·(20 − 10)/10 = 120 segments.
        s.on_read(80 * MS, 30 * seg, 0);
        let want_win = 120 * seg;
        assert_eq!(s.rcvbuf_bytes, (want_win << 8) / SCALING_RATIO_256);
        assert!(s.window_clamp_bytes.abs_diff(want_win) < 256);
        // A steady rate (copied = space) never grows it again.
        let before = s.rcvbuf_bytes;
        s.on_read(120 * MS, 50 * seg, 0);
        assert_eq!(s.rcvbuf_bytes, before);
    }

    #[test]
    fn slow_start_term_does_not_overflow_at_gigabytes_per_rtt() {
        // 2 GiB read in an RTT after 4 GiB: rcvwin = 2·4 GiB + 2·(2·4 GiB)·(4 − 2)/2 = 24 GiB
        // (the product 8 GiB · 2 GiB is 2^64: in 64 bits it wrapped to 0, giving 8 GiB).
        let (mut s, _) = RcvSpace::new(0, MSS, 40 * MS);
        s.space_bytes = 1 << 31;
        s.rcvbuf_grow(1 << 32, 0);
        assert!(s.window_clamp_bytes.abs_diff(3 << 33) < 256, "{}", s.window_clamp_bytes);
    }

    #[test]
    fn rcv_rtt_takes_lower_samples_at_once_and_higher_ones_by_an_eighth() {
        let (mut s, _) = RcvSpace::new(0, MSS, 40 * MS);
        s.rtt_sample(1000 * MS, 1000 * MS - 32 * MS, true, true);
        assert_eq!(s.rcv_rtt_ns, 32 * MS);
        s.rtt_sample(2000 * MS, 2000 * MS - 96 * MS, true, true);
        assert_eq!(s.rcv_rtt_ns, 32 * MS - 4 * MS + 12 * MS);
        // The same echo twice, a short segment, or unread data: no sample.
        let r = s.rcv_rtt_ns;
        s.rtt_sample(3000 * MS, 2000 * MS - 96 * MS, true, true);
        s.rtt_sample(3000 * MS, 2500 * MS, false, true);
        s.rtt_sample(3000 * MS, 2600 * MS, true, false);
        assert_eq!(s.rcv_rtt_ns, r);
    }
}
