//! Print a run's per-flow time series: cargo run --release -p bbrlab-sim --example trace -- FILE.json [flow]
use sim::Simulation;
fn main() {
    let path = std::env::args().nth(1).expect("config json");
    let want: i32 = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(0);
    let json = std::fs::read_to_string(&path).unwrap();
    let mut sim = Simulation::from_json(&json).unwrap();
    sim.run_until(u64::MAX);
    let r = sim.results();
    let ts = &r.timeseries;
    let f64c = |n: &str| ts.get(n).unwrap().as_f64().unwrap().to_vec();
    let i64c = |n: &str| ts.get(n).unwrap().as_i64().unwrap().to_vec();
    let (t, gp, srtt, pr) =
        (f64c("t_s"), f64c("goodput_bps"), f64c("srtt_ms"), f64c("pacing_rate_bps"));
    let (cwnd, infl, rtx, ss) =
        (i64c("cwnd_pkts"), i64c("inflight_bytes"), i64c("retransmits"), i64c("ssthresh_pkts"));
    let flow = match ts.get("flow").unwrap() {
        sim::metrics::Column::I32(v) => v.clone(),
        _ => unreachable!(),
    };
    let phase = match ts.get("phase_code").unwrap() {
        sim::metrics::Column::U8(v) => v.clone(),
        _ => unreachable!(),
    };
    let ca = match ts.get("ca_state").unwrap() {
        sim::metrics::Column::U8(v) => v.clone(),
        _ => unreachable!(),
    };
    let bw = f64c("bw_bps");
    let q = &r.queue;
    let qocc = q.get("occupancy_bytes").unwrap().as_i64().unwrap();
    let qdrop = q.get("drops").unwrap().as_i64().unwrap();
    let mut qi = 0;
    for i in 0..t.len() {
        if flow[i] != want {
            continue;
        }
        while qi + 2 < qocc.len() && (qi / 2) < i / (flow.iter().max().unwrap() + 1) as usize {
            qi += 2;
        }
        println!("t={:7.2} gp={:8.2}M cwnd={:6} ssth={:6} infl={:6} srtt={:7.2} pace={:8.2}M rtx={:7} {}/{} bw={:.1}M q={} drops={}",
            t[i], gp[i]/1e6, cwnd[i], ss[i], infl[i]/1448, srtt[i], pr[i]/1e6, rtx[i], r.phase_labels[phase[i] as usize], ca[i], bw[i]/1e6,
            qocc.get(qi).copied().unwrap_or(0), qdrop.get(qi).copied().unwrap_or(0));
    }
}
