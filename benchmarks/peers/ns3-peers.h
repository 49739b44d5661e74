// What the ns-3 programs of benchmarks/peers share: the TCP defaults they set (each
// program giving the values its dsim twin uses; common to both: SACK, no timestamps, no
// limited transmit, a 200 ms minimum RTO) and the nodes of their dumbbells.

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <string>
#include <vector>

struct TcpSettings
{
    ns3::TypeId congestion;
    ns3::TypeId recovery; // TcpClassicRecovery (RFC 5681 / 6675-style) or TcpPrrRecovery
    uint32_t segmentSize;
    uint32_t initialCwnd;
    uint32_t delAckCount;
    ns3::Time delAckTimeout;
    ns3::Time clockGranularity;
    ns3::Time initialRto;
    uint32_t buffer; // send and receive buffers, bytes
    bool windowScaling;
};

inline void
ConfigureTcp(const TcpSettings& s)
{
    using namespace ns3;
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(s.congestion));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(s.recovery));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(s.windowScaling));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(s.clockGranularity));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(s.initialRto));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(s.segmentSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(s.initialCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(s.delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(s.delAckTimeout));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(s.buffer));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(s.buffer));
}

// The nodes of a dumbbell of n connections, each with the internet stack: two routers,
// n sources (behind the first) and n sinks (behind the second).
struct DumbbellNodes
{
    ns3::NodeContainer routers;
    ns3::NodeContainer src;
    ns3::NodeContainer dst;
};

inline DumbbellNodes
CreateDumbbellNodes(uint32_t n)
{
    DumbbellNodes d;
    d.routers.Create(2);
    d.src.Create(n);
    d.dst.Create(n);
    ns3::InternetStackHelper stack;
    stack.InstallAll();
    return d;
}

// What InstallDumbbellLinks returns: the bottleneck's queue disc and the addresses of the
// sources and sinks.
struct DumbbellLinks
{
    ns3::QueueDiscContainer bottleneckQ;
    std::vector<ns3::Ipv4Address> srcAddr;
    std::vector<ns3::Ipv4Address> sinkAddr;
};

// The links of a dumbbell, in this order (the addresses follow it): the bottleneck from
// router 0 to router 1 (`bottleneckQ` on its first device, `reverseQ` on the other), then
// per connection i an access link from source i to router 0 (one-way delay accessDelay[i])
// and a link from router 1 to sink i (lastDelay), both at edgeRate with `edgeQ` on their
// devices.
inline DumbbellLinks
InstallDumbbellLinks(const DumbbellNodes& d,
                     const std::string& rate,
                     const std::string& delay,
                     ns3::TrafficControlHelper& bottleneckQ,
                     ns3::TrafficControlHelper& reverseQ,
                     const std::string& edgeRate,
                     const std::vector<ns3::Time>& accessDelay,
                     ns3::Time lastDelay,
                     ns3::TrafficControlHelper& edgeQ)
{
    using namespace ns3;
    DumbbellLinks out;
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(rate));
    bottleneck.SetChannelAttribute("Delay", StringValue(delay));
    NetDeviceContainer core = bottleneck.Install(d.routers.Get(0), d.routers.Get(1));
    out.bottleneckQ = bottleneckQ.Install(core.Get(0));
    reverseQ.Install(core.Get(1));
    addr.Assign(core);
    addr.NewNetwork();
    for (uint32_t i = 0; i < d.src.GetN(); ++i)
    {
        PointToPointHelper access;
        access.SetDeviceAttribute("DataRate", StringValue(edgeRate));
        access.SetChannelAttribute("Delay", TimeValue(accessDelay[i]));
        NetDeviceContainer a = access.Install(d.src.Get(i), d.routers.Get(0));
        edgeQ.Install(a);
        out.srcAddr.push_back(addr.Assign(a).GetAddress(0));
        addr.NewNetwork();
        PointToPointHelper last;
        last.SetDeviceAttribute("DataRate", StringValue(edgeRate));
        last.SetChannelAttribute("Delay", TimeValue(lastDelay));
        NetDeviceContainer b = last.Install(d.routers.Get(1), d.dst.Get(i));
        edgeQ.Install(b);
        out.sinkAddr.push_back(addr.Assign(b).GetAddress(1));
        addr.NewNetwork();
    }
    return out;
}
