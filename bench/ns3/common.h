// bench/ns3/common.h -- what bbrlab's ns-3 reference programs (dumbbell.cc, dctcp_fig17.cc)
// set up and measure the same way.
//
// - TCP as Linux (and bbrlab) does it: SACK and timestamps on, the MSS, initial window,
//   delayed-ACK count, socket buffers and minimum RTO each program passes (Linux's minimum RTO
//   is 200 ms; ns-3's own default is 1 s). The congestion control and the recovery algorithm
//   are each program's own choice.
// - The PERF line's timing: wall_s times Simulator::Run() alone (set-up and teardown excluded),
//   cpu_s is the process's CPU time over the same span (on a shared machine it is what the
//   simulation itself cost), events is Simulator::GetEventCount() after the run.

#ifndef BBRLAB_NS3_COMMON_H
#define BBRLAB_NS3_COMMON_H

#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include <chrono>
#include <cstdint>
#include <ctime>

namespace bbrlab_ns3
{

// The Linux-like TCP socket defaults, for every TCP socket created after the call.
inline void
SetLinuxTcpDefaults(uint32_t mssBytes,
                    uint32_t initialCwndSegs,
                    uint32_t delAckSegs,
                    uint64_t sockBufBytes,
                    double minRtoMs)
{
    using namespace ns3;
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mssBytes));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwndSegs));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckSegs));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sockBufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(sockBufBytes));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(minRtoMs)));
}

// What the PERF line reports of one Simulator::Run().
struct RunCost
{
    double wallS;
    double cpuS;
    uint64_t events;
};

// Simulator::Run(), timed (the caller has scheduled Simulator::Stop).
inline RunCost
RunTimed()
{
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t cpu0 = std::clock();
    ns3::Simulator::Run();
    RunCost cost;
    cost.cpuS = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
    cost.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cost.events = ns3::Simulator::GetEventCount();
    return cost;
}

} // namespace bbrlab_ns3

#endif
