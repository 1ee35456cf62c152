"""Reference answers of exercise 04."""

NACKS_WITHOUT_TRIMMING = 0
LOSS_SIGNAL = "timeouts"
DETECTIONS_PER_DROP = 1.0
MORE_PATHS_SUSPECTED = True
SLOWER = "without"

EXPLANATION = """
With trimming, a packet that overflows the last-hop queue arrives as a
header: the receiver NACKs it and the sender resends it within a round trip;
the path stays GOOD. Without trimming the packet is simply gone. The sender
finds out only from a SACK gap (later packets acked, this one not, past a
reorder window), from a tail loss (nothing sent or acked for a while with
packets in flight) or when the RTO fires; here the RTO finds about two
thirds of them and the tail-loss rule most of the rest (the drops come at
the end of each burst into the slow last hop, where no later packet's ACK
can show a gap): one detection per tail-dropped packet, where trimming
gave one NACK per trimmed packet. Worse, MRC reads a loss without a trim as a sign
the path may have failed: it takes the whole route (every EV on that T1)
out of use and probes it; the probe answers (the route works, it was only
congested), but meanwhile the plane's traffic squeezes onto its other
routes, and iterations get slower. Trimming is what lets the transport tell
congestion from failure.
"""
