# The seed 002 dumbbell for ns-2 (2.35, Debian package ns2), the twin of dsim's
# `dumbbell-N` benchmark (python/dsim/bench.py). See docs/performance.md for the
# equivalence, setting by setting.
#
# usage: ns dumbbell.tcl PLAN DURATION_S [AQM [SEED [flows]]] [KEY=VALUE ...]
#   PLAN: one line per connection "index assured src_delay_us start_us" (written by
#   compare.py from dsim.bench.dumbbell_plan, so all three simulators get the same values).
#   AQM: "rio" (default: dsRED with token-bucket profilers on the Assured hosts), "red"
#   (no profilers, Queue/RED with RIO's OUT curve, as the ns-3 program runs it) or
#   "droptail" (no profilers, a 1050-packet drop-tail bottleneck). SEED: of ns-2's default
#   random number generator (RED's drop decisions), default 1 (ns-2's own default).
# prints: "bottleneck_pkts N", "bottleneck_drops N" (packets that left / were refused by
# the R0->R1 queue), and with "flows" one line per connection with the agent's counters:
# "tcp INDEX ndatapack_ nrexmitpack_ nrexmit_ ncwndcuts_ ack_ DROPS" (data packets sent,
# of them retransmissions, timeouts, window reductions = fast retransmits + timeouts,
# highest cumulative ACK in segments, packets of the connection dropped at the bottleneck).
#   KEY=VALUE: the bottleneck of the dumbbell grown with its load (dsim's `scale-N`,
#   bench.scaled_bottleneck): rate_mbps (default 50), limit (packets, of both directions,
#   default 1050), in_min, in_max (RIO's IN thresholds, default 500, 840), out_min,
#   out_max (RIO's OUT and RED's thresholds, default 420, 840); sample_ms (default 0: none):
#   with "rio", print every sample_ms "sample TIME_S IN_PKTS ALL_PKTS IN_AVG ALL_AVG" (the
#   virtual queues of IN and of all packets, RIO-C) and at the end dsRED's statistics
#   ("All TOTAL TX LDROPS EDROPS", then one line per codepoint; ldrops: forced drops).

set bottleneck [dict create rate_mbps 50 limit 1050 in_min 500 in_max 840 out_min 420 out_max 840 sample_ms 0]
set args {}
foreach a $argv {
    if {[regexp {^([a-z_]+)=([0-9]+)$} $a -> key value]} {
        if {![dict exists $bottleneck $key]} {
            puts stderr "$a: KEY is one of [dict keys $bottleneck]"
            exit 2
        }
        dict set bottleneck $key $value
    } else {
        lappend args $a
    }
}
set nargs [llength $args]
if {$nargs < 2 || $nargs > 5} {
    puts stderr "usage: ns dumbbell.tcl PLAN DURATION_S \[rio|red|droptail \[SEED \[flows\]\]\] \[KEY=VALUE ...\]"
    exit 2
}
set plan_file [lindex $args 0]
set duration [lindex $args 1]
set aqm [expr {$nargs > 2 ? [lindex $args 2] : "rio"}]
set seed [expr {$nargs > 3 ? [lindex $args 3] : 1}]
set per_flow [expr {$nargs > 4 && [lindex $args 4] eq "flows"}]
if {$aqm ni {rio red droptail}} {
    puts stderr "AQM $aqm: rio, red or droptail"
    exit 2
}
global defaultRNG
$defaultRNG seed $seed

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
# OUT average counts IN and OUT packets), RED or drop-tail, 1050 packets; the reverse
# direction drop-tail. RED: 420/840 packets, max_p 1/20, w_q 0.002, 576-byte mean
# packet, neither gentle nor waiting between drops (dsim's RED, and ns-3's settings).
Queue/RED set thresh_ [dict get $bottleneck out_min]
Queue/RED set maxthresh_ [dict get $bottleneck out_max]
Queue/RED set linterm_ 20
Queue/RED set q_weight_ 0.002
Queue/RED set mean_pktsize_ 576
Queue/RED set gentle_ false
Queue/RED set wait_ false
Queue/RED set bytes_ false
Queue/RED set queue_in_bytes_ false
set kind [dict get {rio dsRED/core red RED droptail DropTail} $aqm]
set rate "[dict get $bottleneck rate_mbps]Mb"
$ns simplex-link $r0 $r1 $rate 5ms $kind
$ns simplex-link $r1 $r0 $rate 5ms DropTail
$ns queue-limit $r0 $r1 [dict get $bottleneck limit]
$ns queue-limit $r1 $r0 [dict get $bottleneck limit]
set core [[$ns link $r0 $r1] queue]
if {$aqm eq "rio"} {
    $core meanPktSize 576
    $core set numQueues_ 1
    $core setNumPrec 2
    $core setMREDMode RIO-C
    # Codepoint 10 = IN (precedence 0), 11 = OUT and 0 = best effort (precedence 1).
    $core addPHBEntry 10 0 0
    $core addPHBEntry 11 0 1
    $core addPHBEntry 0 0 1
    # configQ queue precedence min_th max_th max_p [wq, default 0.002]
    $core configQ 0 0 [dict get $bottleneck in_min] [dict get $bottleneck in_max] 0.02
    $core configQ 0 1 [dict get $bottleneck out_min] [dict get $bottleneck out_max] 0.05
}
# Per-connection arrivals, departures and drops (early drops included) at the bottleneck,
# when asked for or when the queue has no counters of its own (left out of the timed runs
# of `make bench-peers`: the monitor costs time).
if {$per_flow || $aqm ne "rio"} {
    set fmon [$ns makeflowmon Fid]
    $ns attach-fmon [$ns link $r0 $r1] $fmon [expr {$aqm ne "droptail"}]
}

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
    if {$assured && $aqm eq "rio"} {
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
    $tcp($i) set fid_ $i
    $ns attach-agent $s($i) $tcp($i)
    $ns attach-agent $d($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [$tcp($i) attach-app FTP]
    $ns at [expr {$start_us / 1e6}] "$ftp($i) start"
    incr flows
}
close $f

set sample_s [expr {[dict get $bottleneck sample_ms] / 1000.0}]
proc sample {} {
    global ns core sample_s
    puts "sample [$ns now] [$core getCurrentV 0 0] [expr {[$core getCurrentV 0 0] + [$core getCurrentV 0 1]}] [$core getAverageV 0 0] [$core getAverageV 0 1]"
    $ns at [expr {[$ns now] + $sample_s}] "sample"
}
if {$aqm eq "rio" && $sample_s > 0} {
    $ns at 0.0 "sample"
}

proc finish {} {
    global core flows fmon tcp aqm per_flow sample_s
    if {$aqm eq "rio" && $sample_s > 0} {
        $core printStats
        flush stdout
    }
    if {$aqm eq "rio"} {
        set pkts [$core getStat pkts]
        set drops [expr {[$core getStat drops] + [$core getStat edrops]}]
        set departed [expr {int($pkts - $drops - [$core getCurrent 0])}]
    } else {
        set drops [$fmon set pdrops_]
        set departed [$fmon set pdepartures_]
    }
    puts "flows $flows"
    puts "bottleneck_pkts $departed"
    puts "bottleneck_drops [expr {int($drops)}]"
    if {!$per_flow} {
        exit 0
    }
    foreach f [$fmon flows] {
        set flow_drops([$f set flowid_]) [$f set pdrops_]
    }
    for {set i 0} {$i < $flows} {incr i} {
        set d [expr {[info exists flow_drops($i)] ? $flow_drops($i) : 0}]
        set a $tcp($i)
        puts "tcp $i [$a set ndatapack_] [$a set nrexmitpack_] [$a set nrexmit_] [$a set ncwndcuts_] [$a set ack_] $d"
    }
    exit 0
}
$ns at $duration "finish"
$ns run
