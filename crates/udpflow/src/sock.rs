//! The UDP socket and the system calls the loops batch through: `sendmmsg` (with UDP GSO,
//! `UDP_SEGMENT`, when the kernel has it: one message carries a burst of equal-sized datagrams
//! that the stack cuts up below the socket), `recvmmsg`, and `ppoll` for the wait.

use std::io;
use std::net::{SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;

/// Datagrams one `recvmmsg` takes at most.
pub const RECV_BATCH: usize = 64;
/// Room for one received datagram (the largest is 1472 bytes at a 1500-byte MTU; 64 KiB MTUs
/// of loopback are not used: the sender never writes more than header + MSS per datagram).
pub const RECV_BUF_BYTES: usize = 9216;
/// Socket buffers asked for (SO_SNDBUFFORCE/SO_RCVBUFFORCE as root, else capped by the
/// sysctls): a burst of 64 KB offload messages and a window's ACKs must not overflow them.
pub const SOCKET_BUFFER_BYTES: i32 = 8 << 20;
/// `UDP_SEGMENT` (include/uapi/linux/udp.h; Linux >= 4.18).
const UDP_SEGMENT: libc::c_int = 103;
/// Linux `UDP_MAX_SEGMENTS` in its oldest form (64; 128 since 6.9): segments per GSO send.
pub const GSO_MAX_SEGMENTS: usize = 64;
/// Largest UDP payload of one send (65535 less IPv4 and UDP headers).
pub const GSO_MAX_BYTES: usize = 65_507;

pub struct Sock {
    pub udp: UdpSocket,
    /// Send errors other than a full buffer (ECONNREFUSED before the receiver is up, ENOBUFS).
    pub send_errors: u64,
    /// sendmmsg calls made.
    pub send_calls: u64,
}

fn setsockopt_int(fd: i32, level: i32, name: i32, v: i32) -> io::Result<()> {
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &v as *const i32 as *const libc::c_void,
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl Sock {
    /// A non-blocking socket bound to `addr`, with large buffers.
    pub fn bind(addr: SocketAddrV4) -> io::Result<Sock> {
        let udp = UdpSocket::bind(addr)?;
        udp.set_nonblocking(true)?;
        let fd = udp.as_raw_fd();
        for (force, plain) in
            [(libc::SO_SNDBUFFORCE, libc::SO_SNDBUF), (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF)]
        {
            if setsockopt_int(fd, libc::SOL_SOCKET, force, SOCKET_BUFFER_BYTES).is_err() {
                let _ = setsockopt_int(fd, libc::SOL_SOCKET, plain, SOCKET_BUFFER_BYTES);
            }
        }
        Ok(Sock { udp, send_errors: 0, send_calls: 0 })
    }

    /// Turn on UDP GSO with `segment_bytes` per datagram; false when the kernel refuses it.
    pub fn enable_gso(&self, segment_bytes: usize) -> bool {
        setsockopt_int(self.udp.as_raw_fd(), libc::SOL_UDP, UDP_SEGMENT, segment_bytes as i32)
            .is_ok()
    }

    /// Send every message (each one datagram, or a GSO burst) to `to` (None: the connected
    /// peer), in as few `sendmmsg` calls as the socket buffer allows; waits for room when it is
    /// full (the stack below frees it as packets leave). A message the stack refuses is counted
    /// in `send_errors` and dropped, as a lost packet.
    pub fn send_all(&mut self, msgs: &[&[u8]], to: Option<SocketAddrV4>) {
        let fd = self.udp.as_raw_fd();
        let addr = to.map(sockaddr);
        let mut iov: Vec<libc::iovec> = msgs
            .iter()
            .map(|m| libc::iovec { iov_base: m.as_ptr() as *mut libc::c_void, iov_len: m.len() })
            .collect();
        let mut hdrs: Vec<libc::mmsghdr> = iov
            .iter_mut()
            .map(|v| {
                let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
                if let Some(a) = &addr {
                    h.msg_hdr.msg_name = a as *const libc::sockaddr_in as *mut libc::c_void;
                    h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as u32;
                }
                h.msg_hdr.msg_iov = v as *mut libc::iovec;
                h.msg_hdr.msg_iovlen = 1;
                h
            })
            .collect();
        let mut at = 0;
        let mut waits = 0;
        while at < hdrs.len() {
            let left = &mut hdrs[at..];
            let r = unsafe { libc::sendmmsg(fd, left.as_mut_ptr(), left.len() as u32, 0) };
            self.send_calls += 1;
            if r > 0 {
                at += r as usize;
                continue;
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) if waits < 100 => {
                    waits += 1;
                    let _ = self.wait(libc::POLLOUT, 1_000_000);
                }
                Some(libc::EINTR) => {}
                _ => {
                    self.send_errors += 1;
                    at += 1;
                }
            }
        }
    }

    /// Receive up to [`RECV_BATCH`] datagrams without blocking into `batch`; returns how many.
    pub fn recv_batch(&self, batch: &mut RecvBatch) -> usize {
        let fd = self.udp.as_raw_fd();
        let n = batch.bufs.len();
        let mut iov: Vec<libc::iovec> = batch
            .bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            })
            .collect();
        let mut hdrs: Vec<libc::mmsghdr> = (0..n)
            .map(|i| {
                let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
                h.msg_hdr.msg_name = &mut batch.from[i] as *mut libc::sockaddr_in as *mut _;
                h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as u32;
                h.msg_hdr.msg_iov = &mut iov[i] as *mut libc::iovec;
                h.msg_hdr.msg_iovlen = 1;
                h
            })
            .collect();
        let r = unsafe {
            libc::recvmmsg(
                fd,
                hdrs.as_mut_ptr(),
                n as u32,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if r <= 0 {
            return 0;
        }
        for (i, h) in hdrs[..r as usize].iter().enumerate() {
            batch.lens[i] = h.msg_len as usize;
        }
        r as usize
    }

    /// Wait until the socket is ready for `events` or `timeout_ns` passes (ppoll: a timeout to
    /// the nanosecond, which `poll`'s milliseconds are not). Returns whether it became ready.
    pub fn wait(&self, events: libc::c_short, timeout_ns: u64) -> bool {
        let mut pfd = libc::pollfd { fd: self.udp.as_raw_fd(), events, revents: 0 };
        let ts = libc::timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
        };
        let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
        r > 0 && pfd.revents & events != 0
    }
}

/// Buffers for one `recvmmsg`.
pub struct RecvBatch {
    pub bufs: Vec<Vec<u8>>,
    pub lens: [usize; RECV_BATCH],
    pub from: [libc::sockaddr_in; RECV_BATCH],
}

impl Default for RecvBatch {
    fn default() -> Self {
        RecvBatch {
            bufs: (0..RECV_BATCH).map(|_| vec![0u8; RECV_BUF_BYTES]).collect(),
            lens: [0; RECV_BATCH],
            from: [unsafe { std::mem::zeroed() }; RECV_BATCH],
        }
    }
}

impl RecvBatch {
    pub fn datagram(&self, i: usize) -> &[u8] {
        &self.bufs[i][..self.lens[i]]
    }

    pub fn source(&self, i: usize) -> SocketAddrV4 {
        let a = &self.from[i];
        SocketAddrV4::new(u32::from_be(a.sin_addr.s_addr).into(), u16::from_be(a.sin_port))
    }
}

fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    let mut s: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    s.sin_family = libc::AF_INET as libc::sa_family_t;
    s.sin_port = a.port().to_be();
    s.sin_addr.s_addr = u32::from(*a.ip()).to_be();
    s
}
