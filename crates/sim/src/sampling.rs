//! Periodic sampling of every flow and monitored queue into the result tables' buffers.

use crate::{metrics, Simulation};

impl Simulation {
    #[inline(never)]
    pub(crate) fn take_sample(&mut self) {
        let now = self.now;
        if !self.lazy_links.is_empty() {
            self.serve_all_departures_to(now); // (`speedup/lazy.rs`)
        }
        let interval = self.cfg.sample_interval_ns;
        for (fi, f) in self.flows.iter_mut().enumerate() {
            if !f.sampled {
                continue;
            }
            let delivered = f.receiver.delivered_bytes;
            let s = &mut f.sender;
            let st = s.cc.sample(&s.tp);
            let rtt_ms = if s.stats.interval_rtt_count > 0 {
                (s.stats.interval_rtt_sum_ns / s.stats.interval_rtt_count as u128) as f64 / 1e6
            } else {
                f64::NAN
            };
            s.stats.interval_rtt_sum_ns = 0;
            s.stats.interval_rtt_count = 0;
            let app_limited = if s.stats.interval_rate_samples > 0 {
                s.stats.interval_app_limited_samples as f64 / s.stats.interval_rate_samples as f64
            } else {
                f64::NAN
            };
            s.stats.interval_rate_samples = 0;
            s.stats.interval_app_limited_samples = 0;
            self.metrics.flow_row(metrics::FlowSample {
                t_ns: now,
                flow: fi as i32,
                delivered_bytes: delivered as i64,
                goodput_bps: (delivered - f.last_delivered_bytes) as f64 * 8e9 / interval as f64,
                cwnd_pkts: s.tp.snd_cwnd as i64,
                mss: s.tp.mss as i64,
                inflight_bytes: s.inflight_bytes() as i64,
                pacing_rate_bps: s.tp.pacing_rate_bytes_per_s.min(s.tp.max_pacing_rate_bytes_per_s)
                    as f64
                    * 8.0,
                delivery_rate_bps: s.stats.last_delivery_rate_bytes_per_s as f64 * 8.0,
                srtt_ms: s.tp.srtt_ns as f64 / 1e6,
                min_rtt_ms: if s.tp.min_rtt_ns == u64::MAX {
                    f64::NAN
                } else {
                    s.tp.min_rtt_ns as f64 / 1e6
                },
                rtt_ms,
                retransmits: s.stats.retransmits as i64,
                ssthresh_pkts: if s.tp.snd_ssthresh >= cc::TCP_INFINITE_SSTHRESH {
                    -1
                } else {
                    s.tp.snd_ssthresh as i64
                },
                state: &st,
                ca_state: s.tp.ca_state as u8,
                rwnd_limited: s.stats.rwnd_limited as u8,
                sndbuf_limited: s.stats.sndbuf_limited as u8,
                app_limited,
            });
            f.last_delivered_bytes = delivered;
        }
        for (index, &(lid, name)) in self.monitored.iter().enumerate() {
            let link = &mut self.links[lid as usize];
            if link.fast.timestamped {
                link.replay(now, self.metrics.last_sample_ns);
            }
            link.note_occupancy(now);
            self.sampled_queue_bytes[lid as usize] = link.q_bytes;
            let busy = link.stats.busy_ns_interval
                + link.serving_since().map_or(0, |t| now - t.max(self.metrics.last_sample_ns));
            let sojourn = crate::link::aqm::SojournColumns::of(link.aqm.as_deref());
            self.metrics.queue_row(metrics::QueueSample {
                index,
                name,
                row: metrics::QueueRow {
                    t_s: now as f64 / 1e9,
                    queue_code: 0,
                    occupancy_bytes: link.q_bytes as i64,
                    occupancy_pkts: link.waiting_pkts() as i64,
                    mean_occupancy_bytes: link.stats.occ_integral as f64 / interval as f64,
                    max_occupancy_bytes: link.stats.max_bytes_interval as i64,
                    drops: link.stats.drops as i64,
                    drops_overflow: (link.stats.drops - link.stats.drops_aqm) as i64,
                    drops_aqm: link.stats.drops_aqm as i64,
                    random_losses: link.stats.random_losses as i64,
                    ce_marks: link.stats.ce_marks as i64,
                    sojourn_mean_ms: sojourn.mean_ms,
                    sojourn_p50_ms: sojourn.p50_ms,
                    sojourn_p99_ms: sojourn.p99_ms,
                    l4s_sojourn_p99_ms: sojourn.l4s_p99_ms,
                    l4s_drops: sojourn.l4s_drops,
                    l4s_ce_marks: sojourn.l4s_ce_marks,
                    tx_bytes: link.stats.tx_bytes as i64,
                    utilization: (busy as f64 / interval as f64).min(1.0),
                    pause_frames: link.stats.pause_frames as i64,
                    policer_drops: link.stats.policer_drops as i64,
                    rate_bps: link.current_rate_bps(now) as i64,
                },
            });
            link.stats.occ_integral = 0;
            link.stats.max_bytes_interval = link.q_bytes;
            link.stats.busy_ns_interval = 0;
        }
        self.metrics.last_sample_ns = now;
    }
}
