//! Checks of the queue model and of what the flows ask of it: a queue discipline is the whole
//! queue model of its link, and an L4S sender (ECT(1)) needs a scalable response to marks.

use super::check::{err, Check};
use super::{Bottleneck, EcnMode, Flow, QdiscSpec, Red};

/// The algorithm reduces in proportion to the CE marks it sees (DCTCP's rule, RFC 8257;
/// BBRv2/v3's `ecn_alpha`), the response an L4S (ECT(1)) queue's shallow, frequent marking
/// expects. The registry says so by `receiver_ce_ack`: the algorithms whose receiver echoes each
/// CE change at once (DCTCP's precise echo) are the ones that count marks. CUBIC and Reno also
/// react to CE, but classically (RFC 3168): one halving per window, as for a loss.
pub(crate) fn scalable_ecn(a: &cc::registry::Algorithm) -> bool {
    a.receiver_ce_ack
}

/// `ecn = "ect1"` only with a scalable ECN response (flow `f` at config path `p`).
pub(super) fn check_ecn(p: &str, f: &Flow) -> Check {
    if f.ecn != EcnMode::Ect1 || cc::registry::lookup(&f.cc).is_some_and(scalable_ecn) {
        return Ok(());
    }
    let scalable: Vec<&str> =
        cc::registry::ALGORITHMS.iter().filter(|a| scalable_ecn(a)).map(|a| a.name).collect();
    err(
        format!("{p}.ecn"),
        format!(
            "\"ect1\" (L4S) needs an algorithm with a scalable ECN response, one that reduces \
             per CE mark ({}); {} has none (at most one RFC 3168 reduction per window, as for \
             a loss), so an L4S queue's frequent shallow marks would starve it: use \"ect0\"",
            scalable.join(", "),
            f.cc
        ),
    )
}

/// The senders' egress qdisc is a host's: pfifo_fast or fq.
pub(super) fn check_sender_qdisc(q: Option<&QdiscSpec>) -> Check {
    match q {
        None | Some(QdiscSpec::PfifoFast {} | QdiscSpec::Fq { .. }) => Ok(()),
        Some(q) => {
            let kind = serde_json::to_value(q).ok();
            let kind = kind.as_ref().and_then(|v| v["kind"].as_str()).unwrap_or("?").to_owned();
            err(
                "topology.sender_qdisc.kind",
                format!(
                    "\"{kind}\" is not a sender's qdisc: use \"pfifo_fast\" (the default) or \
                     \"fq\" (a bottleneck's disciplines go in topology.bottleneck.qdisc)"
                ),
            )
        }
    }
}

/// A discipline other than the FIFO decides by its own rule: no RED, no step marking beside it
/// (RED in the qdisc form takes step marking, as the `red` table does).
pub(super) fn check_qdisc(b: &Bottleneck) -> Check {
    let Some(q) = b.qdisc.as_ref().filter(|q| !matches!(q, QdiscSpec::Droptail { .. })) else {
        return Ok(());
    };
    // RED in the qdisc form is the native RED: step marking may stand beside it, as beside the
    // `red` table; a second RED may not.
    let red = q.is_red();
    let set = [
        ("red", b.red.is_some()),
        ("ecn_threshold_bytes", b.ecn_threshold_bytes.is_some() && !red),
        ("ecn_threshold_packets", b.ecn_threshold_packets.is_some() && !red),
    ];
    let Some((field, _)) = set.iter().find(|(_, on)| *on) else {
        return Ok(());
    };
    let kind = serde_json::to_value(q).ok();
    let kind = kind.as_ref().and_then(|v| v["kind"].as_str()).unwrap_or("?");
    err(
        format!("topology.bottleneck.{field}"),
        format!(
            "conflicts with qdisc \"{kind}\": the discipline is the link's whole queue model (it \
             marks and drops by its own rule); remove {field} or the qdisc"
        ),
    )
}

/// A link's RED, as a `red` table or as `qdisc = { kind = "red", … }` (thresholds in bytes at
/// `frame_bytes` per packet): max_th above min_th. `p` is the link's path in the config.
pub(super) fn check_red(
    p: &str,
    red: Option<&Red>,
    qdisc: Option<&QdiscSpec>,
    frame_bytes: u32,
) -> Check {
    let (field, r) = match (red, qdisc.and_then(|q| Red::of_qdisc(q, frame_bytes))) {
        (Some(r), _) => ("red.max_th_bytes", r.clone()),
        (None, Some(r)) => ("qdisc.max_th", r),
        (None, None) => return Ok(()),
    };
    if r.max_th_bytes <= r.min_th_bytes {
        let (min, max) = (r.min_th_bytes, r.max_th_bytes);
        return err(
            format!("{p}.{field}"),
            format!("must be larger than min_th ({max} B <= {min} B at {frame_bytes} B a packet)"),
        );
    }
    Ok(())
}
