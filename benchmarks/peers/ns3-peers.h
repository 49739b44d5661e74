// What the ns-3 programs of benchmarks/peers share: the TCP defaults they set (each
// program giving the values its dsim twin uses; common to both: SACK, no timestamps, no
// limited transmit, a 200 ms minimum RTO) and the nodes of their dumbbells.

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"

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
