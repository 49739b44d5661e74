// The seed 002 dumbbell for ns-3 (3.37, Debian packages ns3 and libns3-dev), the twin of
// dsim's `dumbbell-N-red` benchmark (python/dsim/bench.py). ns-3 has no RIO and no
// DiffServ edge in its main distribution, so the bottleneck runs RED with RIO's OUT curve
// (420/840/0.05) on the whole queue and no host marks its packets. See
// docs/performance.md for the equivalence, setting by setting.
//
// usage: dumbbell-ns3 --plan=PLAN --duration=SECONDS
//   PLAN: one line per connection "index assured src_delay_us start_us" (the assured
//   column is ignored here).
// prints: "bottleneck_pkts N", "bottleneck_drops N", "events N".

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3-peers.h"

#include <fstream>
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
    double duration = 100.0;
    CommandLine cmd;
    cmd.AddValue("plan", "connection plan file", planFile);
    cmd.AddValue("duration", "simulated seconds", duration);
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
    // packets: no timestamps, no window scaling), receiver buffer 100 segments, initial
    // window 2, one ACK per segment, RTO clock 10 ms, minimum RTO 200 ms, initial RTO 3 s,
    // no limited transmit. (ns-3 always opens with a SYN / SYN-ACK handshake.)
    ConfigureTcp({TcpNewReno::GetTypeId(),
                  TcpClassicRecovery::GetTypeId(),
                  536,
                  2,
                  1,
                  MilliSeconds(200), // the delayed-ACK timer, unused with one ACK per segment
                  MilliSeconds(10),
                  Seconds(3),
                  100 * 536,
                  false});
    // The device holds one packet besides the one it transmits; the queue discs above it
    // hold the rest (their limits are the scenario's buffers).
    Config::SetDefault("ns3::DropTailQueue<Packet>::MaxSize", QueueSizeValue(QueueSize("1p")));

    DumbbellNodes nodes = CreateDumbbellNodes(n);

    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("100p")));
    TrafficControlHelper red;
    red.SetRootQueueDisc("ns3::RedQueueDisc",
                         "MinTh", DoubleValue(420),
                         "MaxTh", DoubleValue(840),
                         "LInterm", DoubleValue(20), // max_p = 1 / 20 = 0.05
                         "QW", DoubleValue(0.002),
                         "MeanPktSize", UintegerValue(576),
                         "Gentle", BooleanValue(false),
                         "Wait", BooleanValue(false),
                         "LinkBandwidth", DataRateValue(DataRate("50Mbps")),
                         "LinkDelay", TimeValue(MilliSeconds(5)),
                         "MaxSize", QueueSizeValue(QueueSize("1050p")));
    TrafficControlHelper big;
    big.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("1050p")));

    std::vector<Time> accessDelay;
    for (const Conn& c : plan)
    {
        accessDelay.push_back(MicroSeconds(c.delayUs));
    }
    DumbbellLinks links =
        InstallDumbbellLinks(nodes, "50Mbps", "5ms", red, big, "10Mbps", accessDelay, MilliSeconds(2), fifo);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const uint16_t port = 9;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinks = sinkHelper.Install(nodes.dst);
    sinks.Start(Seconds(0));
    for (uint32_t k = 0; k < n; ++k)
    {
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(links.sinkAddr[k], port));
        bulk.SetAttribute("SendSize", UintegerValue(536));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        ApplicationContainer app = bulk.Install(nodes.src.Get(k));
        app.Start(MicroSeconds(plan[k].startUs));
    }

    Simulator::Stop(Seconds(duration));
    Simulator::Run();
    QueueDisc::Stats st = links.bottleneckQ.Get(0)->GetStats();
    std::cout << "flows " << n << std::endl;
    std::cout << "bottleneck_pkts " << st.nTotalDequeuedPackets << std::endl;
    std::cout << "bottleneck_drops " << st.nTotalDroppedPackets << std::endl;
    std::cout << "events " << Simulator::GetEventCount() << std::endl;
    Simulator::Destroy();
    return 0;
}
