# What cbq.tcl and ef.tcl share: the command line, a CBR source, a leaf class, the end of
# the run.

# The command line CHOICE TRACE [DURATION_S] (`usage` its words): sets `trace_file` and
# `duration` (default 60 s), returns CHOICE.
proc arguments {usage} {
    global argc argv trace_file duration
    if {$argc < 2 || $argc > 3} {
        puts stderr "usage: $usage"
        exit 2
    }
    set trace_file [lindex $argv 1]
    set duration [expr {$argc > 2 ? [lindex $argv 2] : 60}]
    return [lindex $argv 0]
}

# A CBR source at `node` towards `dst` (a UDP agent with flow id `fid`, into a null
# agent): `size`-byte packets at `rate`, evenly spaced (random_ 0), from `start` s.
proc cbr_source {node dst fid size rate start} {
    global ns
    set udp [new Agent/UDP]
    $udp set packetSize_ 1500
    $udp set fid_ $fid
    $ns attach-agent $node $udp
    set sink [new Agent/Null]
    $ns attach-agent $dst $sink
    $ns connect $udp $sink
    set cbr [new Application/Traffic/CBR]
    $cbr set packetSize_ $size
    $cbr set rate_ $rate
    $cbr set random_ 0
    $cbr attach-agent $udp
    $ns at $start "$cbr start"
}

# A leaf class of the CBQ on `link` under `parent` (setparams: allot, okborrow, maxidle
# "auto", priority `prio`, level 1, extradelay 0) with a drop-tail queue of `limit`
# packets, taking the flow ids `fids`.
proc leaf_class {link parent allot borrow prio limit fids} {
    set cl [new CBQClass]
    set q [new Queue/DropTail]
    $q set limit_ $limit
    $cl install-queue $q
    $cl setparams $parent $borrow $allot auto $prio 1 0
    $link insert $cl
    foreach fid $fids {
        $link bind $cl $fid
    }
    return $cl
}

# The end of the run: the trace (file handle `tf`) written out.
proc finish {} {
    global ns tf
    $ns flush-trace
    close $tf
    exit 0
}
