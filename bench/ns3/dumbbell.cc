// bench/ns3/dumbbell.cc -- bbrlab's ns-3 reference dumbbell, for side-by-side speed runs.
//
// The model, set to bbrlab's defaults so that both simulators run the same experiment:
//
//   sender 0 --+
//   sender 1 --+-- router ====== bottleneck ======> receiver (one PacketSink per flow)
//   sender N --+     FIFO drop-tail queue disc      random loss on arrival (data only)
//
// - Each flow has its own sender host and access link: ACCESS_FACTOR x the bottleneck rate,
//   no delay, a device queue that never fills (bbrlab's hosts never drop at their NIC).
// - The bottleneck carries rtt/2 of one-way delay each way. The router's egress has a FIFO
//   queue disc of --buffer and a one-packet device queue under it, so the backlog (and every
//   drop) is in the queue disc, as in bbrlab's single drop-tail queue. The receiver's reverse
//   direction (ACKs) has a device queue that never fills.
// - TCP as Linux (and bbrlab) does it: MSS 1448 with timestamps (1500-byte IP packets), initial
//   window 10, SACK, delayed ACK every 2nd segment, PRR recovery, minimum RTO 200 ms (ns-3's own
//   default is 1 s). BBR paces itself in ns-3; CUBIC and Reno send unpaced.
// - --loss drops data packets at random as they arrive at the receiver; ACKs are never lost.
//
// Output: one CONFIG line, one FLOW line per flow, an AGG line and a PERF line, each a list of
// key=value pairs. PERF's wall_s times Simulator::Run() alone (set-up and teardown excluded),
// cpu_s is the process's CPU time over the same span, events is Simulator::GetEventCount(),
// data_pkts_delivered is the bytes the sinks received divided by the MSS (bbrlab's
// data_packets_delivered counts the same thing).
//
// Build: bench/ns3/build.sh (Debian 12's libns3-dev, ns-3.37).

#include "common.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// IPv4 (20) + TCP (20) + timestamp option (12) bytes on each data segment: an MSS of 1448
// makes the 1500-byte IP packets bbrlab sends.
constexpr uint32_t kHeaderBytes = 52;
// Device queues that must never drop: far more packets than any scenario has in flight.
constexpr const char* kUnlimitedDeviceQueue = "10000000p";
// Every flow starts at t=0, as bbrlab's do by default. ns-3 spends the first RTT on the
// handshake, which bbrlab's simulator does not model; goodput is over the whole run on both.
constexpr double kStartS = 0.0;

struct Options
{
    std::string cca = "TcpCubic";
    uint32_t flows = 1;
    std::string bw = "100Mbps";
    double rttMs = 40.0;
    std::string buffer = "1bdp";
    double durationS = 60.0;
    double loss = 0.0;
    uint32_t mss = 1448;
    double accessFactor = 10.0; // bbrlab: access_rate defaults to 10 x the bottleneck rate
    double minRtoMs = 200.0;    // Linux's TCP_RTO_MIN
    uint32_t delAck = 2;        // Linux ACKs every 2nd full segment
    uint32_t initialCwnd = 10;  // RFC 6928, Linux's default
    uint32_t run = 1;
};

struct FlowCounters
{
    Ptr<PacketSink> sink;
    Ptr<Application> app;
    uint64_t dataSegsSent = 0;
    uint64_t retxSegs = 0;
    SequenceNumber32 highestSent{0};
    bool sentAny = false;
};

std::vector<FlowCounters> g_flow;
uint64_t g_ackPktsOnBottleneck = 0;
uint64_t g_lossDrops = 0;

// A segment whose first byte is below the highest byte sent so far is a retransmission.
void
OnSegmentSent(uint32_t flow, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() == 0)
    {
        return; // SYN, FIN or pure ACK
    }
    FlowCounters& f = g_flow[flow];
    f.dataSegsSent++;
    SequenceNumber32 first = h.GetSequenceNumber();
    SequenceNumber32 end = first + p->GetSize();
    if (f.sentAny && first < f.highestSent)
    {
        f.retxSegs++;
    }
    if (!f.sentAny || end > f.highestSent)
    {
        f.highestSent = end;
        f.sentAny = true;
    }
}

// BulkSendApplication creates its socket when it starts: attach the trace just after.
void
AttachSocketTrace(uint32_t flow)
{
    Ptr<Socket> s = DynamicCast<BulkSendApplication>(g_flow[flow].app)->GetSocket();
    NS_ABORT_MSG_IF(!s, "flow " << flow << " has no socket");
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnSegmentSent, flow));
}

void
CountAck(Ptr<const Packet>)
{
    g_ackPktsOnBottleneck++;
}

void
CountLoss(Ptr<const Packet>)
{
    g_lossDrops++;
}

// Bad command-line input: one line naming the option and the accepted form, exit status 2.
[[noreturn]] void
BadOption(const std::string& option, const std::string& accepted, const std::string& got)
{
    std::fprintf(stderr, "dumbbell: --%s: expected %s, got \"%s\"\n", option.c_str(), accepted.c_str(), got.c_str());
    std::exit(2);
}

// "<x>bdp" (a multiple of rate x rtt, in whole packets), "<n>p" (packets) or "<n>B" (bytes).
QueueSize
BufferSize(const std::string& spec, double bdpBytes, uint32_t packetBytes)
{
    const char* accepted = "<x>bdp, <n>p (packets) or <n>B (bytes), e.g. 1bdp, 333p, 500000B";
    char* end = nullptr;
    const double x = std::strtod(spec.c_str(), &end);
    const std::string unit(end);
    if (end == spec.c_str() || !(x > 0) || !std::isfinite(x))
    {
        BadOption("buffer", accepted, spec);
    }
    if (unit == "bdp")
    {
        auto pkts = static_cast<uint32_t>(std::max(1.0, std::round(x * bdpBytes / packetBytes)));
        return QueueSize(QueueSizeUnit::PACKETS, pkts);
    }
    if ((unit == "p" || unit == "B") && x == std::floor(x) && x < 4e9)
    {
        return QueueSize(unit == "p" ? QueueSizeUnit::PACKETS : QueueSizeUnit::BYTES, uint32_t(x));
    }
    BadOption("buffer", accepted, spec);
}

void
SetTcpDefaults(const Options& o, uint64_t sockBufBytes)
{
    std::string type = o.cca.rfind("ns3::", 0) == 0 ? o.cca : "ns3::" + o.cca;
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(type)));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TypeId::LookupByName("ns3::TcpPrrRecovery")));
    bbrlab_ns3::SetLinuxTcpDefaults(o.mss, o.initialCwnd, o.delAck, sockBufBytes, o.minRtoMs);
}

} // namespace

int
main(int argc, char* argv[])
{
    Options o;
    CommandLine cmd(__FILE__);
    cmd.AddValue("cca", "TcpCubic | TcpBbr | TcpLinuxReno | any ns3::Tcp* congestion control", o.cca);
    cmd.AddValue("flows", "number of flows, one sender host each", o.flows);
    cmd.AddValue("bw", "bottleneck rate, e.g. 100Mbps, 1Gbps", o.bw);
    cmd.AddValue("rtt", "base RTT in ms (the bottleneck's one-way delay is rtt/2)", o.rttMs);
    cmd.AddValue("buffer", "bottleneck drop-tail limit: <x>bdp, <n>p (packets) or <n>B (bytes)", o.buffer);
    cmd.AddValue("duration", "simulated seconds", o.durationS);
    cmd.AddValue("loss", "random loss probability of data packets at the receiver", o.loss);
    cmd.AddValue("segSize", "TCP MSS in bytes", o.mss);
    cmd.AddValue("accessFactor", "access link rate as a multiple of the bottleneck rate", o.accessFactor);
    cmd.AddValue("minRto", "minimum RTO in ms", o.minRtoMs);
    cmd.AddValue("delAck", "segments per delayed ACK", o.delAck);
    cmd.AddValue("run", "RNG run number", o.run);
    cmd.Parse(argc, argv);
    if (o.flows == 0)
    {
        BadOption("flows", "a positive integer", "0");
    }
    if (!(o.durationS > 0))
    {
        BadOption("duration", "a positive number of seconds", std::to_string(o.durationS));
    }
    if (!(o.rttMs > 0))
    {
        BadOption("rtt", "a positive number of milliseconds", std::to_string(o.rttMs));
    }
    if (!(o.loss >= 0 && o.loss < 1))
    {
        BadOption("loss", "a probability in [0, 1)", std::to_string(o.loss));
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(o.run);

    const DataRate rate(o.bw);
    const uint32_t packetBytes = o.mss + kHeaderBytes;
    const double bdpBytes = rate.GetBitRate() * (o.rttMs / 1e3) / 8.0;
    const QueueSize buffer = BufferSize(o.buffer, bdpBytes, packetBytes);
    const double bufferBytes = buffer.GetUnit() == QueueSizeUnit::PACKETS
                                   ? double(buffer.GetValue()) * packetBytes
                                   : double(buffer.GetValue());
    // Socket buffers that never limit the window: 4 x (BDP + buffer), at least 4 MiB, at most 1 GiB.
    const uint64_t sockBufBytes = static_cast<uint64_t>(
        std::min(double(1ULL << 30), std::max(4.0 * (1 << 20), 4.0 * (bdpBytes + bufferBytes))));
    SetTcpDefaults(o, sockBufBytes);

    NodeContainer senders;
    senders.Create(o.flows);
    NodeContainer routerAndReceiver;
    routerAndReceiver.Create(2);
    Ptr<Node> router = routerAndReceiver.Get(0);
    Ptr<Node> receiver = routerAndReceiver.Get(1);

    PointToPointHelper accessLink;
    accessLink.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(rate.GetBitRate() * o.accessFactor))));
    accessLink.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    accessLink.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue(kUnlimitedDeviceQueue));
    std::vector<NetDeviceContainer> access;
    for (uint32_t i = 0; i < o.flows; i++)
    {
        access.push_back(accessLink.Install(senders.Get(i), router));
    }

    PointToPointHelper bottleneckLink;
    bottleneckLink.SetDeviceAttribute("DataRate", DataRateValue(rate));
    bottleneckLink.SetChannelAttribute("Delay", TimeValue(MicroSeconds(int64_t(std::llround(o.rttMs * 500.0)))));
    bottleneckLink.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
    NetDeviceContainer bottleneck = bottleneckLink.Install(router, receiver);
    Ptr<NetDevice> routerEgress = bottleneck.Get(0);
    Ptr<NetDevice> receiverDev = bottleneck.Get(1);
    DynamicCast<PointToPointNetDevice>(receiverDev)->GetQueue()->SetMaxSize(QueueSize(kUnlimitedDeviceQueue));

    InternetStackHelper internet;
    internet.InstallAll();
    Ipv4AddressHelper ip("10.0.0.0", "255.255.255.0");
    for (auto& devs : access)
    {
        ip.Assign(devs);
        ip.NewNetwork();
    }
    Ipv4InterfaceContainer bottleneckIf = ip.Assign(bottleneck);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Address assignment installs ns-3's default queue disc on every device: remove them all,
    // then put the one FIFO on the router's bottleneck egress.
    TrafficControlHelper none;
    for (auto& devs : access)
    {
        none.Uninstall(devs);
    }
    none.Uninstall(bottleneck);
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(buffer));
    Ptr<QueueDisc> queue = fifo.Install(routerEgress).Get(0);

    if (o.loss > 0)
    {
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
        em->SetRate(o.loss);
        em->AssignStreams(1);
        receiverDev->SetAttribute("ReceiveErrorModel", PointerValue(em));
        receiverDev->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&CountLoss));
    }
    receiverDev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&CountAck));

    g_flow.resize(o.flows);
    const Ipv4Address dst = bottleneckIf.GetAddress(1);
    for (uint32_t i = 0; i < o.flows; i++)
    {
        const uint16_t port = uint16_t(10000 + i);
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sink.Install(receiver);
        sinkApp.Start(Seconds(0));
        g_flow[i].sink = DynamicCast<PacketSink>(sinkApp.Get(0));

        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(dst, port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0)); // unlimited: a bulk transfer
        bulk.SetAttribute("SendSize", UintegerValue(o.mss * 8));
        ApplicationContainer sendApp = bulk.Install(senders.Get(i));
        sendApp.Start(Seconds(kStartS));
        g_flow[i].app = sendApp.Get(0);
        Simulator::Schedule(Seconds(kStartS) + NanoSeconds(1), &AttachSocketTrace, i);
    }

    std::printf("CONFIG cca=%s flows=%u bw=%s rtt_ms=%.3f buffer=%s buffer_%s=%u bdp_pkts=%.1f loss=%g "
                "duration_s=%.3f mss=%u iw=%u delack=%u min_rto_ms=%.0f access_factor=%.1f sockbuf_bytes=%" PRIu64 "\n",
                o.cca.c_str(), o.flows, o.bw.c_str(), o.rttMs, o.buffer.c_str(),
                buffer.GetUnit() == QueueSizeUnit::PACKETS ? "pkts" : "bytes", buffer.GetValue(),
                bdpBytes / packetBytes, o.loss, o.durationS, o.mss, o.initialCwnd, o.delAck, o.minRtoMs,
                o.accessFactor, sockBufBytes);
    std::fflush(stdout);

    Simulator::Stop(Seconds(o.durationS));
    const bbrlab_ns3::RunCost cost = bbrlab_ns3::RunTimed();
    const double wallS = cost.wallS;
    const double cpuS = cost.cpuS;
    const uint64_t events = cost.events;

    uint64_t rxBytes = 0;
    uint64_t segs = 0;
    uint64_t retx = 0;
    const double activeS = o.durationS - kStartS;
    for (uint32_t i = 0; i < o.flows; i++)
    {
        const FlowCounters& f = g_flow[i];
        const uint64_t rx = f.sink->GetTotalRx();
        rxBytes += rx;
        segs += f.dataSegsSent;
        retx += f.retxSegs;
        std::printf("FLOW %u goodput_Mbps=%.3f rx_bytes=%" PRIu64 " data_segs_tx=%" PRIu64 " retx_segs=%" PRIu64 "\n",
                    i, rx * 8.0 / activeS / 1e6, rx, f.dataSegsSent, f.retxSegs);
    }
    const QueueDisc::Stats& qs = queue->GetStats();
    const double goodputBps = rxBytes * 8.0 / activeS;
    std::printf("AGG goodput_Mbps=%.3f util_pct=%.2f retx_segs=%" PRIu64 " retx_pct=%.3f queue_drops=%u loss_drops=%" PRIu64 "\n",
                goodputBps / 1e6, 100.0 * goodputBps / rate.GetBitRate(), retx, segs ? 100.0 * retx / segs : 0.0,
                qs.nTotalDroppedPackets, g_lossDrops);
    const uint64_t delivered = rxBytes / o.mss;
    std::printf("PERF wall_s=%.3f cpu_s=%.3f events=%" PRIu64 " data_pkts_delivered=%" PRIu64 " ack_pkts=%" PRIu64
                " data_pkts_per_wall_s=%.0f events_per_data_pkt=%.2f ns_per_event=%.1f\n",
                wallS, cpuS, events, delivered, g_ackPktsOnBottleneck, delivered / wallS,
                delivered ? double(events) / delivered : 0.0, events ? wallS * 1e9 / events : 0.0);
    Simulator::Destroy();
    return 0;
}
