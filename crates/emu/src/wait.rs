//! The event loop's sleep: until the next deadline or a readable descriptor, by epoll_pwait2's
//! own timeout or, on kernels without it, a timerfd (see [`Waiter`]).

use std::os::fd::RawFd;

use crate::forward::now_ns;
use crate::run::errno_str;

/// Sleeping until the next deadline (rounded up to the timer quantum) or until a descriptor is
/// readable. epoll_pwait2 (Linux >= 5.11) takes the timeout itself: one syscall and one hrtimer
/// per sleep instead of a timerfd_settime per deadline (each costs a clock-event reprogramming,
/// a VM exit under virtualization); timerfd is the fallback. A nearly idle emulator wakes early
/// and busy-polls to the deadline (`spin_window`). Each wait keeps the wake time it asked for,
/// so that the loop can tell how late a sleep that ended by its timeout woke
/// ([`crate::forward::LoopStats::note_sleep`]: the machine's share of the stalls).
pub(crate) struct Waiter {
    epoll_fd: RawFd,
    timer_fd: RawFd,
    /// The absolute wake time the timerfd is armed for (0: not armed).
    armed_for: u64,
    use_pwait2: bool,
    /// The deadline an early (idle) wake-up was for.
    spin_target: u64,
    /// The wake time the latest wait asked for: epoll_pwait2's timeout, or the time the timerfd
    /// was armed for (None: it polled, or blocked without a timer).
    asked_ns: Option<u64>,
    /// The configured busy-poll before a deadline and the wake-up quantum (the run's `spin_ns`
    /// and `timer_quantum_ns`).
    spin_ns: u64,
    timer_quantum_ns: u64,
}

impl Waiter {
    pub(crate) fn new(
        epoll_fd: RawFd,
        timer_fd: RawFd,
        spin_ns: u64,
        timer_quantum_ns: u64,
    ) -> Waiter {
        Waiter {
            epoll_fd,
            timer_fd,
            armed_for: 0,
            use_pwait2: true,
            spin_target: 0,
            asked_ns: None,
            spin_ns,
            timer_quantum_ns,
        }
    }

    pub(crate) fn timer_fired(&mut self) {
        let mut b = [0u8; 8];
        unsafe { libc::read(self.timer_fd, b.as_mut_ptr() as *mut _, 8) };
        self.armed_for = 0;
    }

    /// The wake time the latest wait asked for (None: no timed sleep), and whether the wait
    /// ended by its timeout: `events` (what it returned) hold nothing but the timer's expiry
    /// (`timer_tag`; none at all for epoll_pwait2), so no descriptor woke the loop first.
    pub(crate) fn slept(
        &self,
        events: &[libc::epoll_event],
        timer_tag: u64,
    ) -> Option<(u64, bool)> {
        let only_timer = events.iter().all(|e| {
            let tag = e.u64;
            tag == timer_tag
        });
        self.asked_ns.map(|t| (t, only_timer))
    }

    /// Wait for events; the number ready, or None when the loop should simply go round again
    /// (interrupted, or epoll_pwait2 found missing).
    pub(crate) fn wait(
        &mut self,
        deadline: Option<u64>,
        events: &mut [libc::epoll_event],
    ) -> Result<Option<usize>, String> {
        let now = now_ns();
        let mut timeout: Option<u64> = None; // relative ns; None = block
        let mut poll = false;
        let spin = deadline
            .map_or(self.spin_ns, |d| crate::spin_window(d, now, self.spin_ns, self.spin_target));
        match deadline {
            Some(d) if d <= now + spin => poll = true, // due now or within the spin window
            Some(d) => {
                if spin > self.spin_ns {
                    self.spin_target = d;
                }
                let wake = crate::wake_time(d, spin, self.timer_quantum_ns);
                if self.use_pwait2 {
                    timeout = Some(wake.saturating_sub(now));
                } else if self.armed_for == 0 || wake < self.armed_for {
                    self.arm_timer(wake);
                }
            }
            None => {}
        }
        self.asked_ns = match timeout {
            _ if poll => None,
            Some(t) => Some(now + t),
            None => (self.armed_for != 0).then_some(self.armed_for),
        };
        let (ep, ptr, len) = (self.epoll_fd, events.as_mut_ptr(), events.len() as libc::c_int);
        let nev = if poll {
            unsafe { libc::epoll_wait(ep, ptr, len, 0) }
        } else if let Some(t) = timeout {
            let ts = libc::timespec {
                tv_sec: (t / 1_000_000_000) as _,
                tv_nsec: (t % 1_000_000_000) as _,
            };
            let none = std::ptr::null::<libc::sigset_t>();
            let r = unsafe {
                libc::syscall(libc::SYS_epoll_pwait2, ep, ptr, len, &ts as *const _, none, 0usize)
            } as i32;
            if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                self.use_pwait2 = false;
                return Ok(None);
            }
            r
        } else {
            unsafe { libc::epoll_wait(ep, ptr, len, -1) }
        };
        if nev < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                return Ok(None);
            }
            return Err(format!("epoll_wait: {}", errno_str()));
        }
        Ok(Some(nev as usize))
    }

    fn arm_timer(&mut self, wake: u64) {
        let its = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: (wake / 1_000_000_000) as _,
                tv_nsec: (wake % 1_000_000_000) as _,
            },
        };
        let flags = libc::TFD_TIMER_ABSTIME;
        unsafe { libc::timerfd_settime(self.timer_fd, flags, &its, std::ptr::null_mut()) };
        self.armed_for = wake;
    }
}
