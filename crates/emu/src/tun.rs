//! Opening a TUN device: one job, one function.
//!
//! The devices are `IFF_TUN | IFF_NO_PI` (raw IP packets, no packet-info header) and
//! non-persistent: the kernel removes a device when its last file descriptor closes, so the
//! emulator's TUNs vanish when it exits, however it exits. That is half of the emu backend's
//! clean-up guarantee (the other half, namespaces and processes, is the Python `Testbed`).

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd};

use crate::run::errno_str;

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

/// Open (create) TUN device `name`, non-blocking and close-on-exec.
pub(crate) fn open_tun(name: &str) -> Result<OwnedFd, String> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('\0') {
        return Err(format!("bad TUN name {name:?}"));
    }
    let path = CString::new("/dev/net/tun").unwrap();
    let fd =
        unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(format!("cannot open /dev/net/tun: {}", errno_str()));
    }
    // Owned from here on: closed on every error path below.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut ifr = [0u8; 40];
    ifr[..name.len()].copy_from_slice(name.as_bytes());
    let flags: i16 = (libc::IFF_TUN | libc::IFF_NO_PI) as i16;
    ifr[16..18].copy_from_slice(&flags.to_ne_bytes());
    if unsafe {
        libc::ioctl(std::os::fd::AsRawFd::as_raw_fd(&fd), TUNSETIFF as _, ifr.as_mut_ptr())
    } < 0
    {
        return Err(format!("TUNSETIFF {name}: {}", errno_str()));
    }
    Ok(fd)
}
