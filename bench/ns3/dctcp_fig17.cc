// bench/ns3/dctcp_fig17.cc -- the DCTCP paper's Fig. 17 topology in ns-3, for side-by-side runs
// against bbrlab's examples/dctcp-fig17.toml (speed and behaviour).
//
// The model (the DCTCP paper, section 4.2's multi-hop experiment, as ns-3's own dctcp example
// sets it up):
//
//   S1 (10 senders) --+                     +-- R1 (1 receiver of 20 flows)
//                     +-- T1 ==10G== T2 ----+
//   S2 (20 senders) --+                     +-- R2 (20 receivers)
//                        S3 (10 senders) ---+
//
// - Every host link 1 Gbit/s, T1-T2 10 Gbit/s, 10 us of propagation each.
// - Every switch egress port: RED marking on the instantaneous queue (queue weight 1, no
//   averaging: DCTCP's step marking), ECN marks instead of drops, no hard drop above max_th;
//   thresholds min/max 20/60 packets on 1 Gbit/s ports, 50/150 on 10 Gbit/s ports; a limit of
//   2666 packets (4 MB of shared buffer in 1500-byte packets, the paper's Triumph switch).
//   A one-packet device queue under each queue disc keeps the backlog in the queue disc.
// - Flows: S1 -> R1 (10), S3 -> R1 (10): both cross T2 -> R1; S2 -> R2 (20): with S1's flows they
//   cross T1 -> T2. Bulk transfers, DCTCP, MSS 1448, delayed ACK every 2nd segment, timestamps,
//   SACK, initial window 10, minimum RTO 200 ms (Linux's; ns-3's default is 1 s).
// - Starts staggered evenly over the first second, 3 s to converge, throughput over the 5th
//   second (from 4 s to 5 s), as the paper's figure.
//
// Output: CONFIG, one GROUP line per sender group (per-flow mean throughput over the
// measurement window, min/max, Jain's index), one QUEUE line per bottleneck port (mean backlog
// in packets and as delay at the port's rate, sampled every 100 us over the window, marks,
// drops), and a PERF line: wall_s times Simulator::Run() alone, cpu_s the process CPU over it,
// events, data packets delivered (bytes the sinks received / MSS).
//
// Build: sh bench/ns3/build.sh OUT bench/ns3/dctcp_fig17.cc (Debian 12's libns3-dev, ns-3.37).
// Run:   ./dctcp_fig17 [--duration=5] [--run=1]

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
#include <ctime>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

constexpr uint32_t kMss = 1448;
// IP packet of a full segment: MSS + IPv4 (20) + TCP (20) + timestamps (12).
constexpr uint32_t kPacketBytes = kMss + 52;
// Linux's TCP defaults: initial window 10, an ACK every 2nd segment, minimum RTO 200 ms.
constexpr uint32_t kInitialCwndSegs = 10;
constexpr uint32_t kDelAckSegs = 2;
constexpr double kMinRtoMs = 200;
// 4 MiB socket buffers: far above a flow's BDP here (about 10 kB at 1 Gbit/s and ~80 us).
constexpr uint64_t kSockBufBytes = 4 << 20;
constexpr double kHostRateBps = 1e9;
constexpr double kFabricRateBps = 10e9;
constexpr int64_t kLinkDelayUs = 10;
// The paper's switch: 4 MB of buffer, 2666 packets of 1500 bytes.
constexpr const char* kPortLimit = "2666p";
constexpr double kStartupWindowS = 1.0; // flows start evenly over the first second
constexpr double kMeasureFromS = 4.0;   // 1 s of starts + 3 s to converge
constexpr double kMeasureToS = 5.0;
constexpr double kQueueSampleS = 100e-6;

struct Group
{
    const char* name;
    std::vector<Ptr<PacketSink>> sinks;
    std::vector<uint64_t> rxAtStart;
};

struct PortSampler
{
    const char* name;
    Ptr<QueueDisc> qd;
    double rateBps;
    double sumPkts = 0;
    uint64_t samples = 0;
};

std::vector<PortSampler> g_ports;

void
SamplePorts()
{
    for (auto& p : g_ports)
    {
        p.sumPkts += p.qd->GetNPackets();
        p.samples++;
    }
    if (Simulator::Now().GetSeconds() + kQueueSampleS < kMeasureToS)
    {
        Simulator::Schedule(Seconds(kQueueSampleS), &SamplePorts);
    }
}

void
MarkStart(std::vector<Group>* groups)
{
    for (auto& g : *groups)
    {
        g.rxAtStart.clear();
        for (auto& s : g.sinks)
        {
            g.rxAtStart.push_back(s->GetTotalRx());
        }
    }
}

// RED marking on the instantaneous queue: min/max thresholds in packets, never a hard drop.
Ptr<QueueDisc>
InstallRed(Ptr<NetDevice> dev, double minTh, double maxTh, double rateBps)
{
    TrafficControlHelper tc;
    tc.SetRootQueueDisc("ns3::RedQueueDisc",
                        "MinTh", DoubleValue(minTh),
                        "MaxTh", DoubleValue(maxTh),
                        "LinkBandwidth", DataRateValue(DataRate(uint64_t(rateBps))),
                        "LinkDelay", TimeValue(MicroSeconds(kLinkDelayUs)));
    return tc.Install(dev).Get(0);
}

} // namespace

int
main(int argc, char* argv[])
{
    double durationS = kMeasureToS;
    uint32_t run = 1;
    CommandLine cmd(__FILE__);
    cmd.AddValue("duration", "simulated seconds (the measurement needs 5)", durationS);
    cmd.AddValue("run", "RNG run number", run);
    cmd.Parse(argc, argv);
    if (!(durationS >= kMeasureToS))
    {
        std::fprintf(stderr, "dctcp_fig17: --duration: expected a number of seconds >= 5, got %g\n", durationS);
        return 2;
    }
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(run);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
    bbrlab_ns3::SetLinuxTcpDefaults(kMss, kInitialCwndSegs, kDelAckSegs, kSockBufBytes, kMinRtoMs);
    Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(true));
    Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
    Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1.0)); // the instantaneous queue
    Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(kPacketBytes));
    Config::SetDefault("ns3::RedQueueDisc::MaxSize", QueueSizeValue(QueueSize(kPortLimit)));
    GlobalValue::Bind("ChecksumEnabled", BooleanValue(false));

    NodeContainer t1t2;
    t1t2.Create(2);
    Ptr<Node> t1 = t1t2.Get(0);
    Ptr<Node> t2 = t1t2.Get(1);
    NodeContainer s1, s2, s3, r2;
    s1.Create(10);
    s2.Create(20);
    s3.Create(10);
    r2.Create(20);
    Ptr<Node> r1 = CreateObject<Node>();

    InternetStackHelper internet;
    internet.InstallAll();

    PointToPointHelper host;
    host.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(kHostRateBps))));
    host.SetChannelAttribute("Delay", TimeValue(MicroSeconds(kLinkDelayUs)));
    host.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
    PointToPointHelper fabric = host;
    fabric.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(kFabricRateBps))));

    // Every link's device pair: (node side, switch side) for host links, (T1, T2) for the fabric.
    std::vector<NetDeviceContainer> hostLinks;
    auto attach = [&](Ptr<Node> h, Ptr<Node> sw) {
        hostLinks.push_back(host.Install(h, sw));
        return hostLinks.back();
    };
    for (uint32_t i = 0; i < s1.GetN(); i++)
        attach(s1.Get(i), t1);
    for (uint32_t i = 0; i < s2.GetN(); i++)
        attach(s2.Get(i), t1);
    for (uint32_t i = 0; i < s3.GetN(); i++)
        attach(s3.Get(i), t2);
    for (uint32_t i = 0; i < r2.GetN(); i++)
        attach(r2.Get(i), t2);
    NetDeviceContainer r1Link = attach(r1, t2);
    NetDeviceContainer t1t2Link = fabric.Install(t1, t2);

    // RED on every switch egress (the switch side of each host link, both ends of the fabric);
    // hosts' own egress keeps the default queue disc replaced by a FIFO that never fills.
    TrafficControlHelper hostTc;
    hostTc.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("100000p")));
    Ipv4AddressHelper ip("10.0.0.0", "255.255.255.0");
    std::vector<Ipv4InterfaceContainer> hostIfs;
    Ptr<QueueDisc> t2ToR1, t1ToT2;
    for (auto& l : hostLinks)
    {
        hostIfs.push_back(ip.Assign(l));
        ip.NewNetwork();
        TrafficControlHelper none;
        none.Uninstall(l);
        hostTc.Install(l.Get(0));
        Ptr<QueueDisc> q = InstallRed(l.Get(1), 20, 60, kHostRateBps);
        if (l.Get(0)->GetNode() == r1)
            t2ToR1 = q;
    }
    ip.Assign(t1t2Link);
    {
        TrafficControlHelper none;
        none.Uninstall(t1t2Link);
    }
    t1ToT2 = InstallRed(t1t2Link.Get(0), 50, 150, kFabricRateBps);
    InstallRed(t1t2Link.Get(1), 50, 150, kFabricRateBps);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // hostIfs order: S1 (10), S2 (20), S3 (10), R2 (20), R1; address 1 is the host's.
    auto hostAddr = [&](uint32_t idx) { return hostIfs[idx].GetAddress(0); };
    const uint32_t kR2 = 40, kR1 = 60;
    std::vector<Group> groups = {{"S1", {}, {}}, {"S3", {}, {}}, {"S2", {}, {}}};
    uint16_t port = 5000;
    auto addFlow = [&](Ptr<Node> src, Ptr<Node> dst, Ipv4Address dstAddr, double startS, Group& g) {
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sink.Install(dst);
        sa.Start(Seconds(0));
        g.sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(dstAddr, port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(kMss * 8));
        ApplicationContainer ca = bulk.Install(src);
        ca.Start(Seconds(startS));
        port++;
    };
    for (uint32_t i = 0; i < 10; i++)
        addFlow(s1.Get(i), r1, hostAddr(kR1), kStartupWindowS * i / 10, groups[0]);
    for (uint32_t i = 0; i < 10; i++)
        addFlow(s3.Get(i), r1, hostAddr(kR1), kStartupWindowS * i / 10, groups[1]);
    for (uint32_t i = 0; i < 20; i++)
        addFlow(s2.Get(i), r2.Get(i), hostAddr(kR2 + i), kStartupWindowS * i / 20, groups[2]);

    g_ports.push_back({"T2->R1", t2ToR1, kHostRateBps});
    g_ports.push_back({"T1->T2", t1ToT2, kFabricRateBps});
    Simulator::Schedule(Seconds(kMeasureFromS), &MarkStart, &groups);
    Simulator::Schedule(Seconds(kMeasureFromS), &SamplePorts);

    std::printf("CONFIG topology=dctcp-fig17 cca=TcpDctcp duration_s=%.3f mss=%u red_1g=20/60 "
                "red_10g=50/150 limit=%s delay_us=%" PRId64 " run=%u\n",
                durationS, kMss, kPortLimit, kLinkDelayUs, run);
    std::fflush(stdout);

    // Throughput read at the window's end: stop the run there when --duration is 5.
    std::vector<std::vector<double>> perFlowMbps(groups.size());
    Simulator::Schedule(Seconds(kMeasureToS) - NanoSeconds(1), [&]() {
        const double window = kMeasureToS - kMeasureFromS;
        for (size_t g = 0; g < groups.size(); g++)
            for (size_t i = 0; i < groups[g].sinks.size(); i++)
                perFlowMbps[g].push_back(
                    (groups[g].sinks[i]->GetTotalRx() - groups[g].rxAtStart[i]) * 8.0 / window / 1e6);
    });
    Simulator::Stop(Seconds(durationS));
    const bbrlab_ns3::RunCost cost = bbrlab_ns3::RunTimed();
    const double wallS = cost.wallS;
    const double cpuS = cost.cpuS;
    const uint64_t events = cost.events;

    uint64_t rxBytes = 0;
    for (size_t g = 0; g < groups.size(); g++)
    {
        double sum = 0, sumSq = 0, lo = 1e18, hi = 0;
        for (double x : perFlowMbps[g])
        {
            sum += x;
            sumSq += x * x;
            lo = std::min(lo, x);
            hi = std::max(hi, x);
        }
        const double n = double(perFlowMbps[g].size());
        for (auto& s : groups[g].sinks)
            rxBytes += s->GetTotalRx();
        std::printf("GROUP %s flows=%.0f per_flow_mean_Mbps=%.2f min_Mbps=%.2f max_Mbps=%.2f jain=%.4f\n",
                    groups[g].name, n, sum / n, lo, hi, sumSq > 0 ? sum * sum / (n * sumSq) : 0.0);
    }
    for (auto& p : g_ports)
    {
        const double meanPkts = p.samples ? p.sumPkts / p.samples : 0.0;
        const QueueDisc::Stats& st = p.qd->GetStats();
        std::printf("QUEUE %s mean_pkts=%.1f mean_delay_us=%.1f marks=%u drops=%u\n", p.name, meanPkts,
                    meanPkts * kPacketBytes * 8 / p.rateBps * 1e6,
                    st.GetNMarkedPackets(RedQueueDisc::UNFORCED_MARK) + st.GetNMarkedPackets(RedQueueDisc::FORCED_MARK),
                    st.nTotalDroppedPackets);
    }
    const uint64_t delivered = rxBytes / kMss;
    std::printf("PERF wall_s=%.3f cpu_s=%.3f events=%" PRIu64 " data_pkts_delivered=%" PRIu64
                " events_per_data_pkt=%.2f\n",
                wallS, cpuS, events, delivered, delivered ? double(events) / delivered : 0.0);
    Simulator::Destroy();
    return 0;
}
