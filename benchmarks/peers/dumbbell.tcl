# The seed 002 dumbbell for ns-2 (2.35, Debian package ns2), the twin of dsim's
# `dumbbell-N` benchmark (python/dsim/bench.py). See docs/performance.md for the
# equivalence, setting by setting.
#
# usage: ns dumbbell.tcl PLAN DURATION_S
#   PLAN: one line per connection "index assured src_delay_us start_us" (written by
#   compare.py from dsim.bench.dumbbell_plan, so all three simulators get the same values).
# prints: "bottleneck_pkts N", "bottleneck_drops N" (packets that left / were refused by
# the R0->R1 queue).

if {$argc != 2} {
    puts stderr "usage: ns dumbbell.tcl PLAN DURATION_S"
    exit 2
}
set plan_file [lindex $argv 0]
set duration [lindex $argv 1]

set ns [new Simulator]

# TCP as dsim's benchmark configures it (ns-2's own defaults differ: window_ 20,
# packetSize_ 1000, syn_ true): SACK (Sack1 agent, Sack1 sink: one ACK per segment, no
# delayed ACKs), 536-byte payload (+ 40 header bytes = 576-byte packets), window 100
# segments, initial window 2, cwnd grown per ACK (packet counting), RTO clock 10 ms,
# minimum RTO 200 ms, initial RTO 3 s, no SYN.
Agent/TCP set packetSize_ 536
Agent/TCP set window_ 100
Agent/TCP set windowInit_ 2
Agent/TCP set tcpTick_ 0.01
Agent/TCP set minrto_ 0.2
Agent/TCP set rtxcur_init_ 3.0
Agent/TCP set syn_ false
Agent/TCP set delay_growth_ false

set r0 [$ns node]
set r1 [$ns node]

# Bottleneck: 50 Mbit/s, 5 ms; R0->R1 is a dsRED core queue in RIO-C mode (coupled: the
# OUT average counts IN and OUT packets), 1050 packets; the reverse direction drop-tail.
$ns simplex-link $r0 $r1 50Mb 5ms dsRED/core
$ns simplex-link $r1 $r0 50Mb 5ms DropTail
$ns queue-limit $r0 $r1 1050
$ns queue-limit $r1 $r0 1050
set core [[$ns link $r0 $r1] queue]
$core meanPktSize 576
$core set numQueues_ 1
$core setNumPrec 2
$core setMREDMode RIO-C
# Codepoint 10 = IN (precedence 0), 11 = OUT and 0 = best effort (precedence 1).
$core addPHBEntry 10 0 0
$core addPHBEntry 11 0 1
$core addPHBEntry 0 0 1
# configQ queue precedence min_th max_th max_p [wq, default 0.002]
$core configQ 0 0 500 840 0.02
$core configQ 0 1 420 840 0.05

set f [open $plan_file r]
set flows 0
while {[gets $f line] >= 0} {
    if {[llength $line] != 4} continue
    lassign $line i assured delay_us start_us
    set s($i) [$ns node]
    set d($i) [$ns node]
    # Access link of the source: 10 Mbit/s, the connection's own delay. An Assured host's
    # link is a dsRED edge queue: its token bucket (1 Mbit/s, 20 000 bytes) marks the
    # in-profile packets 10 (IN) and the others 11 (OUT); as a queue it is drop-tail
    # (DROP mode) of 100 packets.
    if {$assured} {
        $ns simplex-link $s($i) $r0 10Mb ${delay_us}us dsRED/edge
        set e [[$ns link $s($i) $r0] queue]
        $e meanPktSize 576
        $e set numQueues_ 1
        $e setNumPrec 2
        $e setMREDMode DROP
        $e addPolicyEntry -1 -1 TokenBucket 10 1000000 20000
        $e addPolicerEntry TokenBucket 10 11
        $e addPHBEntry 10 0 0
        $e addPHBEntry 11 0 1
        $e configQ 0 0 100 100 1
        $e configQ 0 1 100 100 1
    } else {
        $ns simplex-link $s($i) $r0 10Mb ${delay_us}us DropTail
    }
    $ns simplex-link $r0 $s($i) 10Mb ${delay_us}us DropTail
    $ns duplex-link $r1 $d($i) 10Mb 2ms DropTail
    foreach {a b} [list $s($i) $r0 $r0 $s($i) $r1 $d($i) $d($i) $r1] {
        $ns queue-limit $a $b 100
    }
    set tcp($i) [new Agent/TCP/Sack1]
    set sink($i) [new Agent/TCPSink/Sack1]
    $ns attach-agent $s($i) $tcp($i)
    $ns attach-agent $d($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [$tcp($i) attach-app FTP]
    $ns at [expr {$start_us / 1e6}] "$ftp($i) start"
    incr flows
}
close $f

proc finish {} {
    global core flows
    set pkts [$core getStat pkts]
    set drops [expr {[$core getStat drops] + [$core getStat edrops]}]
    set queued [$core getCurrent 0]
    puts "flows $flows"
    puts "bottleneck_pkts [expr {int($pkts - $drops - $queued)}]"
    puts "bottleneck_drops [expr {int($drops)}]"
    exit 0
}
$ns at $duration "finish"
$ns run
