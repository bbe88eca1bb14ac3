//! The wire format: what the transport's [`Packet`] needs, in a small little-endian header at
//! the start of each UDP datagram. A data datagram is the header followed by `payload_bytes` of
//! padding, so with the default MSS (1448) it is 1472 bytes, the largest UDP payload of a
//! 1500-byte MTU: the IP packet is as long as a TCP segment with timestamps, and the emulator
//! charges both the same wire time.
//!
//! ```text
//!   data  (24 B): kind=1 | flags (bit 0 retransmission) | u16 0 | u32 payload_bytes
//!                 | u64 seq (segments) | u64 ts_ns (sender's clock, TSval)
//!   ack (40+8n B): kind=2 | flags (bit 0 delayed) | u8 n_sack | u8 0 | u32 0
//!                 | u64 ack (segments) | u64 ts_ecr | u64 rwnd_end | u64 ce_count
//!                 | n × (i32 start, i32 end) SACK blocks relative to ack (D-SACK first)
//!   hello (16 B): kind=3 | 7 × 0 | u64 ts_ns        the sender's handshake (RTT seed)
//!   hello-ack:    kind=4, as hello, echoing ts_ns
//!   fin   (8 B):  kind=5                            a sized transfer is complete
//! ```
//!
//! ECN is not carried (the sockets set no ECT codepoint and read no CE): algorithms that need
//! it are refused before a run.

use transport::{Packet, MAX_SACK_BLOCKS};

pub const KIND_DATA: u8 = 1;
pub const KIND_ACK: u8 = 2;
pub const KIND_HELLO: u8 = 3;
pub const KIND_HELLO_ACK: u8 = 4;
pub const KIND_FIN: u8 = 5;

/// Bytes of the data header: with a 1448-byte MSS the datagram is 1472 bytes, 1500 with
/// UDP and IPv4 headers.
pub const DATA_HEADER_BYTES: usize = 24;
/// Bytes of an ACK without SACK blocks.
pub const ACK_HEADER_BYTES: usize = 40;
/// Bytes of a hello or hello-ack.
pub const HELLO_BYTES: usize = 16;
/// Bytes of a fin.
pub const FIN_BYTES: usize = 8;
/// Largest datagram any kind needs besides data.
pub const MAX_CONTROL_BYTES: usize = ACK_HEADER_BYTES + 8 * MAX_SACK_BLOCKS;
/// IPv4 + UDP headers, for the wire size the transport counts.
pub const IP_UDP_HEADER_BYTES: u32 = 28;

/// A decoded datagram.
#[derive(Debug, PartialEq)]
pub enum Msg {
    Data(Packet),
    Ack(Packet),
    Hello(u64),
    HelloAck(u64),
    Fin,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Write data segment `p` into `out` (header + zero padding); returns the datagram's length.
pub fn encode_data(p: &Packet, out: &mut [u8]) -> usize {
    let len = DATA_HEADER_BYTES + p.payload_bytes as usize;
    out[0] = KIND_DATA;
    out[1] = p.is_retrans as u8;
    out[2..4].fill(0);
    out[4..8].copy_from_slice(&p.payload_bytes.to_le_bytes());
    out[8..16].copy_from_slice(&p.seq.to_le_bytes());
    out[16..24].copy_from_slice(&p.ts_ns.to_le_bytes());
    // The padding is never read; it is zeroed once, when the buffer is made.
    len
}

/// Write ACK `p` into `out`; returns the datagram's length.
pub fn encode_ack(p: &Packet, out: &mut [u8]) -> usize {
    let n = p.n_sack as usize;
    out[0] = KIND_ACK;
    out[1] = p.delayed as u8;
    out[2] = p.n_sack;
    out[3..8].fill(0);
    out[8..16].copy_from_slice(&p.ack.to_le_bytes());
    out[16..24].copy_from_slice(&p.ts_ns.to_le_bytes());
    out[24..32].copy_from_slice(&p.rwnd_end.to_le_bytes());
    out[32..40].copy_from_slice(&p.ce_count.to_le_bytes());
    for (i, &(s, e)) in p.sack_rel[..n].iter().enumerate() {
        let at = ACK_HEADER_BYTES + 8 * i;
        out[at..at + 4].copy_from_slice(&s.to_le_bytes());
        out[at + 4..at + 8].copy_from_slice(&e.to_le_bytes());
    }
    ACK_HEADER_BYTES + 8 * n
}

/// Write a hello (`ack` false) or hello-ack carrying `ts_ns`; returns its length.
pub fn encode_hello(ack: bool, ts_ns: u64, out: &mut [u8]) -> usize {
    out[..HELLO_BYTES].fill(0);
    out[0] = if ack { KIND_HELLO_ACK } else { KIND_HELLO };
    out[8..16].copy_from_slice(&ts_ns.to_le_bytes());
    HELLO_BYTES
}

/// Write a fin; returns its length.
pub fn encode_fin(out: &mut [u8]) -> usize {
    out[..FIN_BYTES].fill(0);
    out[0] = KIND_FIN;
    FIN_BYTES
}

/// Decode one datagram; None for anything malformed (it is ignored, as a stray packet).
pub fn decode(b: &[u8]) -> Option<Msg> {
    match *b.first()? {
        KIND_DATA if b.len() >= DATA_HEADER_BYTES => {
            let payload = u32_at(b, 4);
            if b.len() != DATA_HEADER_BYTES + payload as usize {
                return None;
            }
            let mut p = Packet::empty(0);
            p.is_data = true;
            p.is_retrans = b[1] & 1 != 0;
            p.payload_bytes = payload;
            p.seq = u64_at(b, 8);
            p.ts_ns = u64_at(b, 16);
            p.wire_bytes =
                b.len() as u32 + IP_UDP_HEADER_BYTES + transport::ETHERNET_OVERHEAD_BYTES;
            Some(Msg::Data(p))
        }
        KIND_ACK if b.len() >= ACK_HEADER_BYTES => {
            let n = b[2] as usize;
            if n > MAX_SACK_BLOCKS || b.len() != ACK_HEADER_BYTES + 8 * n {
                return None;
            }
            let mut p = Packet::empty(0);
            p.delayed = b[1] & 1 != 0;
            p.ack = u64_at(b, 8);
            p.ts_ns = u64_at(b, 16);
            p.rwnd_end = u64_at(b, 24);
            p.ce_count = u64_at(b, 32);
            for i in 0..n {
                let at = ACK_HEADER_BYTES + 8 * i;
                p.sack_rel[i] = (u32_at(b, at) as i32, u32_at(b, at + 4) as i32);
            }
            p.n_sack = n as u8;
            p.wire_bytes =
                b.len() as u32 + IP_UDP_HEADER_BYTES + transport::ETHERNET_OVERHEAD_BYTES;
            Some(Msg::Ack(p))
        }
        KIND_HELLO if b.len() == HELLO_BYTES => Some(Msg::Hello(u64_at(b, 8))),
        KIND_HELLO_ACK if b.len() == HELLO_BYTES => Some(Msg::HelloAck(u64_at(b, 8))),
        KIND_FIN if b.len() == FIN_BYTES => Some(Msg::Fin),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_round_trips_and_fills_a_1500_byte_packet() {
        let mut p = Packet::empty(0);
        p.is_data = true;
        p.seq = 1 << 40;
        p.payload_bytes = 1448;
        p.ts_ns = 123_456_789_012;
        p.is_retrans = true;
        let mut buf = vec![0u8; 2048];
        let n = encode_data(&p, &mut buf);
        assert_eq!(n as u32 + IP_UDP_HEADER_BYTES, 1500);
        let Some(Msg::Data(q)) = decode(&buf[..n]) else { panic!("not data") };
        assert_eq!((q.seq, q.payload_bytes, q.ts_ns, q.is_retrans), (1 << 40, 1448, p.ts_ns, true));
        // A truncated datagram is refused, not misread.
        assert_eq!(decode(&buf[..n - 1]), None);
    }

    #[test]
    fn ack_round_trips_with_a_dsack_block_below_ack() {
        let mut a =
            Packet { ack: 1000, ts_ns: 77, rwnd_end: 5000, ce_count: 3, ..Packet::empty(0) };
        a.delayed = true;
        a.push_sack_block((990, 991)); // D-SACK, below ack
        a.push_sack_block((1010, 1020));
        let mut buf = vec![0u8; 128];
        let n = encode_ack(&a, &mut buf);
        assert_eq!(n, ACK_HEADER_BYTES + 16);
        let Some(Msg::Ack(b)) = decode(&buf[..n]) else { panic!("not an ack") };
        assert_eq!((b.ack, b.ts_ns, b.rwnd_end, b.ce_count, b.delayed), (1000, 77, 5000, 3, true));
        assert_eq!(b.n_sack, 2);
        assert_eq!(b.sack_block(0), (990, 991));
        assert_eq!(b.sack_block(1), (1010, 1020));
    }

    #[test]
    fn control_messages_round_trip() {
        let mut buf = [0u8; 64];
        let n = encode_hello(false, 42, &mut buf);
        assert_eq!(decode(&buf[..n]), Some(Msg::Hello(42)));
        let n = encode_hello(true, 43, &mut buf);
        assert_eq!(decode(&buf[..n]), Some(Msg::HelloAck(43)));
        let n = encode_fin(&mut buf);
        assert_eq!(decode(&buf[..n]), Some(Msg::Fin));
        assert_eq!(decode(&[9, 0, 0]), None);
    }
}
