// The congestion-control dumbbell for ns-3 (3.37, Debian packages ns3 and libns3-dev), the
// twin of the dsim scenario benchmarks/peers/cc_compare.py builds: N bulk TCP connections
// with CUBIC (TcpCubic) or DCTCP (TcpDctcp), mixed round trips, one bottleneck with a
// drop-tail FIFO, RED, or RED as DCTCP's step marker. docs/tcp.md ("Validation against
// ns-3") lists the settings, one by one.
//
// usage: cc-ns3 --plan=PLAN --cc=cubic|dctcp --queue=droptail|red|step --rate=20Mbps
//               --delay=10ms --limit=200 [--minth=30 --maxth=90 --maxp=0.1 --wq=0.002]
//               [--k=20] --duration=60 --warmup=10 --run=1 [--hystart=0]
//               [--recovery=classic|prr]
//   PLAN: one line per connection "index access_delay_us start_us".
// prints, over [warmup, duration): "flow I goodput_bps G delay_p50_ms A delay_p99_ms B
// recoveries R timeouts T" per connection (the one-way delay of its data packets, from the
// flow monitor, in bins of 0.1 ms; the loss recoveries and timeouts its sender entered),
// then "queue arrivals N drops D marks M" of the bottleneck queue disc.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/flow-monitor-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3-peers.h"

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <vector>

using namespace ns3;

// Loss recoveries and retransmission timeouts of each sender inside the measurement
// window, counted from its congestion state (CA_RECOVERY and CA_LOSS entries).
static std::map<std::string, uint32_t> g_recoveries;
static std::map<std::string, uint32_t> g_timeouts;
static bool g_counting = false;

static void
CongStateChanged(std::string context,
                 TcpSocketState::TcpCongState_t from,
                 TcpSocketState::TcpCongState_t to)
{
    if (!g_counting)
    {
        return;
    }
    // context: /NodeList/<node>/$ns3::TcpL4Protocol/SocketList/<k>/CongState
    std::string node = context.substr(10, context.find('/', 10) - 10);
    if (to == TcpSocketState::CA_RECOVERY && from != TcpSocketState::CA_RECOVERY)
    {
        g_recoveries[node]++;
    }
    if (to == TcpSocketState::CA_LOSS && from != TcpSocketState::CA_LOSS)
    {
        g_timeouts[node]++;
    }
}

struct Conn
{
    int index;
    long delayUs;
    long startUs;
};

static std::vector<Conn>
ReadPlan(const std::string& file)
{
    std::vector<Conn> plan;
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line))
    {
        std::istringstream ls(line);
        Conn c;
        if (ls >> c.index >> c.delayUs >> c.startUs)
        {
            plan.push_back(c);
        }
    }
    return plan;
}

// The p-quantile of a flow monitor histogram (the start of its bin), in ms.
static double
QuantileMs(Histogram h, double p)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < h.GetNBins(); ++i)
    {
        total += h.GetBinCount(i);
    }
    uint64_t seen = 0;
    for (uint32_t i = 0; i < h.GetNBins() && total > 0; ++i)
    {
        seen += h.GetBinCount(i);
        if (seen >= p * total)
        {
            return h.GetBinStart(i) * 1e3;
        }
    }
    return -1;
}

int
main(int argc, char* argv[])
{
    std::string planFile;
    std::string cc = "cubic";
    std::string queue = "droptail";
    std::string rate = "20Mbps";
    std::string delay = "10ms";
    uint32_t limit = 200;
    double minTh = 30;
    double maxTh = 90;
    double maxP = 0.1;
    double wq = 0.002;
    uint32_t k = 20;
    double duration = 60;
    double warmup = 10;
    uint32_t run = 1;
    bool hystart = false;
    std::string recovery = "classic";
    CommandLine cmd;
    cmd.AddValue("plan", "connection plan file", planFile);
    cmd.AddValue("cc", "cubic or dctcp", cc);
    cmd.AddValue("queue", "droptail, red or step", queue);
    cmd.AddValue("rate", "bottleneck rate", rate);
    cmd.AddValue("delay", "bottleneck one-way delay", delay);
    cmd.AddValue("limit", "bottleneck buffer, packets", limit);
    cmd.AddValue("minth", "RED min_th, packets", minTh);
    cmd.AddValue("maxth", "RED max_th, packets", maxTh);
    cmd.AddValue("maxp", "RED max_p", maxP);
    cmd.AddValue("wq", "RED weight", wq);
    cmd.AddValue("k", "step marking: marks what finds more than k queued", k);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("warmup", "seconds left out of the statistics", warmup);
    cmd.AddValue("run", "RNG run number", run);
    cmd.AddValue("hystart", "TcpCubic's HyStart", hystart);
    cmd.AddValue("recovery", "classic (TcpClassicRecovery) or prr (TcpPrrRecovery)", recovery);
    cmd.Parse(argc, argv);
    RngSeedManager::SetRun(run);

    std::vector<Conn> plan = ReadPlan(planFile);
    if (plan.empty())
    {
        std::cerr << "cannot read the plan " << planFile << std::endl;
        return 2;
    }
    const uint32_t n = plan.size();

    // TCP as the dsim scenario configures it: SACK with RFC 6675-style recovery, no
    // timestamps, 1460-byte segments, IW 10, delayed ACKs every second segment or 40 ms,
    // RTO clock 1 ms, minimum RTO 200 ms, initial RTO 1 s, no limited transmit, 4 MB
    // buffers (window scaling on: ns-3 needs it for them). ns-3 opens with a handshake.
    TypeId tcp = cc == "dctcp" ? TcpDctcp::GetTypeId() : TcpCubic::GetTypeId();
    TypeId recoveryType =
        recovery == "prr" ? TcpPrrRecovery::GetTypeId() : TcpClassicRecovery::GetTypeId();
    ConfigureTcp(
        {tcp, recoveryType, 1460, 10, 2, MilliSeconds(40), MilliSeconds(1), Seconds(1), 4 << 20, true});
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(hystart));
    // The device holds one packet besides the one it sends; the queue discs hold the rest.
    Config::SetDefault("ns3::DropTailQueue<Packet>::MaxSize", QueueSizeValue(QueueSize("1p")));

    DumbbellNodes nodes = CreateDumbbellNodes(n);

    TrafficControlHelper big;
    big.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("10000p")));
    TrafficControlHelper bottleneckQ;
    const QueueSizeValue limitValue(QueueSize(std::to_string(limit) + "p"));
    if (queue == "droptail")
    {
        bottleneckQ.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", limitValue);
    }
    else if (queue == "red")
    {
        bottleneckQ.SetRootQueueDisc("ns3::RedQueueDisc",
                                     "MinTh", DoubleValue(minTh),
                                     "MaxTh", DoubleValue(maxTh),
                                     "LInterm", DoubleValue(1.0 / maxP),
                                     "QW", DoubleValue(wq),
                                     "MeanPktSize", UintegerValue(1500),
                                     "Gentle", BooleanValue(false),
                                     "Wait", BooleanValue(false),
                                     "LinkBandwidth", DataRateValue(DataRate(rate)),
                                     "LinkDelay", TimeValue(Time(delay)),
                                     "MaxSize", limitValue);
    }
    else
    {
        // DCTCP's step: the instantaneous queue (QW = 1) at MaxTh = k + 1 or above marks
        // (UseHardDrop false: a "forced" verdict marks an ECN-capable packet); between
        // MinTh and MaxTh a vanishing probability (LInterm 1e9).
        bottleneckQ.SetRootQueueDisc("ns3::RedQueueDisc",
                                     "MinTh", DoubleValue(k),
                                     "MaxTh", DoubleValue(k + 1),
                                     "LInterm", DoubleValue(1e9),
                                     "QW", DoubleValue(1.0),
                                     "MeanPktSize", UintegerValue(1500),
                                     "Gentle", BooleanValue(false),
                                     "Wait", BooleanValue(false),
                                     "UseEcn", BooleanValue(true),
                                     "UseHardDrop", BooleanValue(false),
                                     "LinkBandwidth", DataRateValue(DataRate(rate)),
                                     "LinkDelay", TimeValue(Time(delay)),
                                     "MaxSize", limitValue);
    }

    std::vector<Time> accessDelay;
    for (const Conn& c : plan)
    {
        accessDelay.push_back(MicroSeconds(c.delayUs));
    }
    DumbbellLinks links =
        InstallDumbbellLinks(nodes, rate, delay, bottleneckQ, big, "1Gbps", accessDelay, MilliSeconds(1), big);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const uint16_t port = 9;
    std::vector<Ptr<PacketSink>> sinks(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sinkHelper.Install(nodes.dst.Get(i));
        s.Start(Seconds(0));
        sinks[i] = DynamicCast<PacketSink>(s.Get(0));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(links.sinkAddr[i], port));
        bulk.SetAttribute("SendSize", UintegerValue(1460));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        ApplicationContainer app = bulk.Install(nodes.src.Get(i));
        app.Start(MicroSeconds(plan[i].startUs));
    }

    // The senders' sockets exist once every application has started (within 1 s).
    Simulator::Schedule(Seconds(1.5), []() {
        Config::Connect("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongState",
                        MakeCallback(&CongStateChanged));
    });

    // Counters at the start of the measurement window.
    std::vector<uint64_t> rxAtWarmup(n, 0);
    QueueDisc::Stats qAtWarmup;
    Simulator::Schedule(Seconds(warmup), [&]() {
        for (uint32_t i = 0; i < n; ++i)
        {
            rxAtWarmup[i] = sinks[i]->GetTotalRx();
        }
        qAtWarmup = links.bottleneckQ.Get(0)->GetStats();
        g_counting = true;
    });

    FlowMonitorHelper fmHelper;
    fmHelper.SetMonitorAttribute("DelayBinWidth", DoubleValue(0.0001));
    fmHelper.SetMonitorAttribute("StartTime", TimeValue(Seconds(warmup)));
    Ptr<FlowMonitor> monitor = fmHelper.InstallAll();

    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    const double window = duration - warmup;
    Ptr<Ipv4FlowClassifier> classifier = DynamicCast<Ipv4FlowClassifier>(fmHelper.GetClassifier());
    std::map<uint32_t, const FlowMonitor::FlowStats*> dataFlow;
    for (const auto& [id, st] : monitor->GetFlowStats())
    {
        Ipv4FlowClassifier::FiveTuple t = classifier->FindFlow(id);
        if (t.destinationPort != port)
        {
            continue;
        }
        for (uint32_t i = 0; i < n; ++i)
        {
            if (t.sourceAddress == links.srcAddr[i])
            {
                dataFlow[i] = &st;
            }
        }
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        double goodput = (sinks[i]->GetTotalRx() - rxAtWarmup[i]) * 8.0 / window;
        double p50 = -1;
        double p99 = -1;
        if (dataFlow.count(i))
        {
            p50 = QuantileMs(dataFlow[i]->delayHistogram, 0.5);
            p99 = QuantileMs(dataFlow[i]->delayHistogram, 0.99);
        }
        std::string node = std::to_string(nodes.src.Get(i)->GetId());
        std::cout << "flow " << i << " goodput_bps " << goodput << " delay_p50_ms " << p50
                  << " delay_p99_ms " << p99 << " recoveries " << g_recoveries[node]
                  << " timeouts " << g_timeouts[node] << std::endl;
    }
    QueueDisc::Stats q = links.bottleneckQ.Get(0)->GetStats();
    std::cout << "queue arrivals " << q.nTotalReceivedPackets - qAtWarmup.nTotalReceivedPackets
              << " drops " << q.nTotalDroppedPackets - qAtWarmup.nTotalDroppedPackets
              << " marks " << q.nTotalMarkedPackets - qAtWarmup.nTotalMarkedPackets << std::endl;
    Simulator::Destroy();
    return 0;
}
