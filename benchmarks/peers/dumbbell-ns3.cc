// The seed 002 dumbbell for ns-3 (3.37, Debian packages ns3 and libns3-dev), the twin of
// dsim's `dumbbell-N-red` benchmark (python/dsim/bench.py). ns-3 has no RIO and no
// DiffServ edge in its main distribution, so the bottleneck runs RED with RIO's OUT curve
// (420/840/0.05) on the whole queue and no host marks its packets. See
// docs/performance.md for the equivalence, setting by setting.
//
// With --aqm=codel, fq_codel or pie it is the AQM dumbbell of aqm_compare.py instead
// (docs/aqm.md, "Side by side with ns-3"): that AQM with ns-3's defaults and a 1000-packet
// limit at the bottleneck, --rate and --access in Mbit/s, --mss and --window (segments).
//
// With --limit, --min_th and --max_th (packets) it is the dumbbell grown with its load
// (dsim's `scale-N`, issue 24): --rate=N, the bottleneck's and the reverse path's buffers
// and RED's thresholds times N/50 (compare.py --scale passes them).
//
// usage: dumbbell-ns3 --plan=PLAN --duration=SECONDS [--aqm=red|codel|fq_codel|pie]
//                     [--rate=50] [--access=10] [--mss=536] [--window=100]
//                     [--limit=1050] [--min_th=420] [--max_th=840]
//   PLAN: one line per connection "index assured src_delay_us start_us" (the assured
//   column is ignored here).
// prints: "bottleneck_pkts N", "bottleneck_drops N", "events N"; with an AQM also
// "flow K RX_BYTES" per connection, "bottleneck_arrivals N" and "sojourn_ms X" every
// 10 ms (the sojourn time of the last packet that left the bottleneck queue, 0 while it is
// empty).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3-peers.h"

#include <fstream>
#include <map>
#include <iostream>
#include <sstream>
#include <vector>

using namespace ns3;

struct Conn
{
    int index;
    int assured;
    long delayUs;
    long startUs;
};

int
main(int argc, char* argv[])
{
    std::string planFile;
    std::string aqm = "red";
    double duration = 100.0;
    double rateMbps = 50.0;
    double accessMbps = 10.0;
    uint32_t mss = 536;
    uint32_t window = 100;
    uint32_t limit = 1050;
    double minTh = 420;
    double maxTh = 840;
    CommandLine cmd;
    cmd.AddValue("plan", "connection plan file", planFile);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("aqm", "red, codel, fq_codel or pie", aqm);
    cmd.AddValue("rate", "bottleneck rate, Mbit/s", rateMbps);
    cmd.AddValue("access", "access links' rate, Mbit/s", accessMbps);
    cmd.AddValue("mss", "segment size, bytes", mss);
    cmd.AddValue("window", "receive and send buffers, segments", window);
    cmd.AddValue("limit", "RED bottleneck's and reverse path's buffers, packets", limit);
    cmd.AddValue("min_th", "RED's min_th, packets", minTh);
    cmd.AddValue("max_th", "RED's max_th, packets", maxTh);
    cmd.Parse(argc, argv);

    std::vector<Conn> plan;
    std::ifstream in(planFile);
    if (!in)
    {
        std::cerr << "cannot read the plan " << planFile << std::endl;
        return 2;
    }
    std::string line;
    while (std::getline(in, line))
    {
        std::istringstream ls(line);
        Conn c;
        if (ls >> c.index >> c.assured >> c.delayUs >> c.startUs)
        {
            plan.push_back(c);
        }
    }
    const uint32_t n = plan.size();

    // TCP as dsim's benchmark configures it: SACK with classic (RFC 6675-style) recovery
    // and NewReno congestion avoidance grown per ACK, 536-byte segments (576-byte IP
    // packets: no timestamps, no window scaling below 64 KB), receiver buffer 100
    // segments, initial window 2, one ACK per segment, RTO clock 10 ms, minimum RTO
    // 200 ms, initial RTO 3 s, no limited transmit. (ns-3 always opens with a SYN /
    // SYN-ACK handshake.)
    ConfigureTcp({TcpNewReno::GetTypeId(),
                  TcpClassicRecovery::GetTypeId(),
                  mss,
                  2,
                  1,
                  MilliSeconds(200), // the delayed-ACK timer, unused with one ACK per segment
                  MilliSeconds(10),
                  Seconds(3),
                  window * mss,
                  mss * window > 65535});
    // The device holds one packet besides the one it transmits; the queue discs above it
    // hold the rest (their limits are the scenario's buffers).
    Config::SetDefault("ns3::DropTailQueue<Packet>::MaxSize", QueueSizeValue(QueueSize("1p")));

    DumbbellNodes nodes = CreateDumbbellNodes(n);

    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("100p")));
    std::ostringstream rate, accessRate, buffer;
    rate << rateMbps << "Mbps";
    accessRate << accessMbps << "Mbps";
    buffer << limit << "p";
    TrafficControlHelper red;
    red.SetRootQueueDisc("ns3::RedQueueDisc",
                         "MinTh", DoubleValue(minTh),
                         "MaxTh", DoubleValue(maxTh),
                         "LInterm", DoubleValue(20), // max_p = 1 / 20 = 0.05
                         "QW", DoubleValue(0.002),
                         "MeanPktSize", UintegerValue(576),
                         "Gentle", BooleanValue(false),
                         "Wait", BooleanValue(false),
                         "LinkBandwidth", DataRateValue(DataRate(rate.str())),
                         "LinkDelay", TimeValue(MilliSeconds(5)),
                         "MaxSize", QueueSizeValue(QueueSize(buffer.str())));
    const std::map<std::string, std::string> aqms = {
        {"codel", "ns3::CoDelQueueDisc"},
        {"fq_codel", "ns3::FqCoDelQueueDisc"},
        {"pie", "ns3::PieQueueDisc"},
    };
    TrafficControlHelper other;
    if (aqm != "red")
    {
        if (aqms.count(aqm) == 0)
        {
            std::cerr << "aqm: red, codel, fq_codel or pie" << std::endl;
            return 2;
        }
        other.SetRootQueueDisc(aqms.at(aqm), "MaxSize", QueueSizeValue(QueueSize("1000p")));
    }
    TrafficControlHelper big;
    big.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize(buffer.str())));

    std::vector<Time> accessDelay;
    for (const Conn& c : plan)
    {
        accessDelay.push_back(MicroSeconds(c.delayUs));
    }
    DumbbellLinks links = InstallDumbbellLinks(nodes, rate.str(), "5ms", aqm == "red" ? red : other, big,
                                               accessRate.str(), accessDelay, MilliSeconds(2), fifo);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const uint16_t port = 9;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinks = sinkHelper.Install(nodes.dst);
    sinks.Start(Seconds(0));
    for (uint32_t k = 0; k < n; ++k)
    {
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(links.sinkAddr[k], port));
        bulk.SetAttribute("SendSize", UintegerValue(mss));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        ApplicationContainer app = bulk.Install(nodes.src.Get(k));
        app.Start(MicroSeconds(plan[k].startUs));
    }

    // With an AQM: the sojourn time of the last packet that left, sampled every 10 ms.
    Ptr<QueueDisc> q = links.bottleneckQ.Get(0);
    static Time lastSojourn;
    std::vector<double> samples;
    if (aqm != "red")
    {
        q->TraceConnectWithoutContext("SojournTime", MakeCallback(+[](Time t) { lastSojourn = t; }));
        for (double t = 0.01; t < duration; t += 0.01)
        {
            Simulator::Schedule(Seconds(t), [q, &samples]() {
                samples.push_back(q->GetNPackets() == 0 ? 0.0 : lastSojourn.GetSeconds() * 1e3);
            });
        }
    }
    Simulator::Stop(Seconds(duration));
    Simulator::Run();
    QueueDisc::Stats st = q->GetStats();
    std::cout << "flows " << n << std::endl;
    std::cout << "bottleneck_pkts " << st.nTotalDequeuedPackets << std::endl;
    std::cout << "bottleneck_drops " << st.nTotalDroppedPackets << std::endl;
    std::cout << "events " << Simulator::GetEventCount() << std::endl;
    if (aqm != "red")
    {
        for (uint32_t k = 0; k < n; ++k)
        {
            std::cout << "flow " << k << " " << DynamicCast<PacketSink>(sinks.Get(k))->GetTotalRx() << std::endl;
        }
        std::cout << "bottleneck_arrivals " << st.nTotalReceivedPackets << std::endl;
        for (double x : samples)
        {
            std::cout << "sojourn_ms " << x << std::endl;
        }
    }
    Simulator::Destroy();
    return 0;
}
