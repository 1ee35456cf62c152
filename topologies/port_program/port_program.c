// SPDX-License-Identifier: GPL-2.0
/*
 * MRC lab switch port program: tc egress (clsact, direct-action) on every
 * switch-side port of the fabric.
 *
 * Per packet, in this order:
 *   1. fault hooks: black-hole (drop all), random drop with probability p;
 *   2. virtual queue: bytes backlog drained at the port's shaped rate;
 *      a lab DATA packet that would push it past the trim threshold is
 *      trimmed to its MRC header (or dropped in tail-drop mode); any
 *      packet that would push it past the hard queue limit is dropped.
 *      The real qdisc therefore never holds more than queue_limit bytes,
 *      so it never has to drop: every loss has a counter here;
 *   3. ECN: CE on ECT packets of the data class above the ECN threshold;
 *   4. priority: skb->priority selects the htb class (headers / control
 *      high, data low); htb classifies on skb->priority before filters.
 *
 * Lab packets are Ethernet + IPv4 or IPv6 + UDP (dst MRC_PORT or
 * BASELINE_PORT) + MRC header. IPv6 is the srv6 data plane's: its
 * destination is a uSID list the routers rewrite in flight, so UDP
 * checksums are off there, and a packet may carry one Segment Routing
 * Header (routing type 4) between IPv6 and UDP. Both families get the same
 * treatment; only the header fixes differ (see trim and set_ce).
 *
 * One program and one set of maps serve every port (keyed by ifindex), so
 * user space reads the whole fabric's counters from one map.
 * Layouts are mirrored in topologies/port_program/port_program.py: keep them in sync.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define MRC_PORT        4793
#define BASELINE_PORT   4794
#define MRC_VERSION     1
#define T_DATA          1
#define T_PROBE_REPLY   5
#define FL_TRIMMED      0x02
#define MRC_COMMON_LEN  12
#define SRH_TYPE        4    /* IPv6 routing header type: Segment Routing (RFC 8754) */
#define ND_FIRST        133  /* ICMPv6 router solicitation ... */
#define ND_LAST         137  /* ... redirect: neighbour discovery, IPv6's ARP */
/* skb->tc_index of a trimmed packet sent round again (see port_egress);
 * tc_index is otherwise unused since dsmark/tcindex left the kernel (6.3) */
#define TRIM_PASS       0x4d52

/* port_cfg.flags */
#define CFG_TRIM        0x1  /* trim on congestion; clear = tail drop */
#define CFG_ECN         0x2  /* mark CE above ecn_thresh */
#define CFG_BLACKHOLE   0x4  /* gray failure: drop everything, link stays up */
#define CFG_LOSSLESS    0x8  /* PFC-like: DATA never trimmed; report who feeds a queue past xoff */

/* lab_globals.flags */
#define G_FORCE_TAILDROP 0x1 /* lab-wide "no trimming" switch */

struct port_cfg {
	__u64 rate_bps;     /* virtual queue drain rate; 0 = no virtual queue */
	__u32 trim_thresh;  /* bytes */
	__u32 ecn_thresh;   /* bytes */
	__u32 queue_limit;  /* bytes, hard cap for every packet */
	__u32 drop_prob;    /* P(drop) scaled to 2^32 */
	__u32 flags;        /* CFG_* */
	__u32 prio_hi;      /* skb->priority (tc classid) of headers/control; 0 = keep */
	__u32 prio_lo;      /* skb->priority of data */
	__u32 name_tag;     /* user space only: crc32 of the ifname (stale-entry check) */
	/* lossless mode (docs/lossless.md); all zero when it is off */
	__u32 xoff;         /* bytes: DATA arriving above it names its ingress port in feeders */
	__u32 xon;          /* bytes: at or below it a packet's arrival clears feeders */
	__u32 port_bit;     /* 1 + this port's bit in its router's feeders masks; 0 = none */
	__u64 pause_total_ns;  /* written by the pause controller: time this port was paused, */
	__u64 pause_start_ns;  /* and since when it is (0 = not paused); the queue does not drain then */
};

struct port_state {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 backlog;      /* virtual queue bytes */
	__u64 last_ns;
	__u64 max_backlog;  /* high-water mark since attach/reset */
	__u64 pause_mark;   /* the port's pause time (cfg) as of last_ns */
	__u64 feeders;      /* lossless: bits (port_bit - 1) of ingress ports whose DATA came above xoff */
};

struct port_stats {
	__u64 passed;           /* forwarded unmodified (except ECN) */
	__u64 passed_bytes;
	__u64 trimmed;          /* forwarded as header only */
	__u64 trimmed_bytes;    /* bytes as they arrived, before trimming */
	__u64 ecn_marked;
	__u64 dropped_fault;    /* black-hole + random drop */
	__u64 dropped_fault_bytes;
	__u64 dropped_queue;    /* virtual queue full (tail drop / hard limit) */
	__u64 dropped_queue_bytes;
	__u64 other;            /* non-lab packets among passed/dropped (ARP, LLDP...) */
	__u64 errors;           /* trim failed in the kernel helper (also in dropped_queue) */
};

struct lab_globals {
	__u32 flags;
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct port_cfg);
} port_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct port_state);
} port_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct port_stats);
} port_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lab_globals);
} lab_globals SEC(".maps");

/* K_UDP is internal to classify: a UDP header sits at l4_off, not yet looked at */
enum kind { K_OTHER, K_OTHER_IP, K_CTRL, K_DATA, K_UDP };

struct pkt {
	__u32 ip_off;
	__u32 l4_off;    /* UDP header (after the IPv6 SRH or the inner IPv6 header, if any) */
	__u32 inner_off; /* the inner IPv6 header of an IPv6-in-IPv6 packet, or 0 */
	__u32 hdr_len;   /* MRC header length */
	__u8 tos;        /* IPv4 TOS or IPv6 traffic class: ECN in the low 2 bits */
	__u8 ipv6;
	__u8 link_ctrl;  /* IPv6 neighbour discovery: queued with control, as ARP */
};

#define ADD(f, v) __sync_fetch_and_add(&(f), (v))

static __always_inline int parse_ipv4(struct __sk_buff *skb, struct pkt *p)
{
	struct iphdr ip;

	if (bpf_skb_load_bytes(skb, p->ip_off, &ip, sizeof(ip)))
		return K_OTHER;
	if (ip.version != 4 || ip.ihl < 5)
		return K_OTHER;
	p->tos = ip.tos;
	/* fragments are never lab packets: lab datagrams fit one MTU */
	if (ip.protocol != IPPROTO_UDP || (ip.frag_off & bpf_htons(0x3fff)))
		return K_OTHER_IP;
	p->l4_off = p->ip_off + ip.ihl * 4;
	return K_UDP;
}

/* IPv6, then at most one extension header, a type-4 SRH (its length is
 * hdrlen * 8 + 8 bytes), or an inner IPv6 header (MRC's IPv6-in-IPv6
 * packet: the outer header carries the route and the ECN mark, the inner one
 * the receiving NIC's address). Any other extension header (hop-by-hop,
 * fragment, destination options, another routing type) is not the lab's:
 * the srv6 data plane sends none. */
static __always_inline int parse_ipv6(struct __sk_buff *skb, struct pkt *p)
{
	struct ipv6hdr ip6;
	struct ipv6_rt_hdr rt;
	__u8 next, icmp_type;

	if (bpf_skb_load_bytes(skb, p->ip_off, &ip6, sizeof(ip6)))
		return K_OTHER;
	if (ip6.version != 6)
		return K_OTHER;
	p->ipv6 = 1;
	p->tos = ip6.priority << 4 | ip6.flow_lbl[0] >> 4;
	p->l4_off = p->ip_off + sizeof(ip6);
	next = ip6.nexthdr;
	if (next == IPPROTO_ROUTING) {
		if (bpf_skb_load_bytes(skb, p->l4_off, &rt, sizeof(rt)) || rt.type != SRH_TYPE)
			return K_OTHER_IP;
		p->l4_off += rt.hdrlen * 8 + 8;
		next = rt.nexthdr;
	} else if (next == IPPROTO_IPV6) {
		if (bpf_skb_load_bytes(skb, p->l4_off, &ip6, sizeof(ip6)) || ip6.version != 6)
			return K_OTHER_IP;
		p->inner_off = p->l4_off;
		p->l4_off += sizeof(ip6);
		next = ip6.nexthdr;
	}
	if (next == IPPROTO_ICMPV6 && !bpf_skb_load_bytes(skb, p->l4_off, &icmp_type, 1))
		p->link_ctrl = icmp_type >= ND_FIRST && icmp_type <= ND_LAST;
	return next == IPPROTO_UDP ? K_UDP : K_OTHER_IP;
}

/* The UDP header at l4_off: lab traffic (K_DATA, K_CTRL) or not (K_OTHER_IP) */
static __always_inline int classify_udp(struct __sk_buff *skb, struct pkt *p)
{
	struct udphdr udp;
	__u8 mrc[4];

	if (bpf_skb_load_bytes(skb, p->l4_off, &udp, sizeof(udp)))
		return K_OTHER_IP;
	if (udp.dest != bpf_htons(MRC_PORT) && udp.dest != bpf_htons(BASELINE_PORT))
		return K_OTHER_IP;
	if (bpf_skb_load_bytes(skb, p->l4_off + sizeof(udp), mrc, sizeof(mrc)))
		return K_OTHER_IP;
	if (mrc[0] != MRC_VERSION || mrc[1] < T_DATA || mrc[1] > T_PROBE_REPLY ||
	    mrc[3] < MRC_COMMON_LEN)
		return K_OTHER_IP;
	p->hdr_len = mrc[3];
	/* a DATA packet with payload can be trimmed; everything else of the
	 * lab (trimmed headers, ACK, NACK, PROBE, PROBE_REPLY) is control */
	if (mrc[1] == T_DATA && !(mrc[2] & FL_TRIMMED) &&
	    skb->len > p->l4_off + sizeof(udp) + p->hdr_len)
		return K_DATA;
	return K_CTRL;
}

static __always_inline int classify(struct __sk_buff *skb, struct pkt *p)
{
	struct ethhdr eth;
	int kind;

	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)))
		return K_OTHER;
	p->ip_off = sizeof(eth);
	if (eth.h_proto == bpf_htons(ETH_P_IP))
		kind = parse_ipv4(skb, p);
	else if (eth.h_proto == bpf_htons(ETH_P_IPV6))
		kind = parse_ipv6(skb, p);
	else
		return K_OTHER;
	return kind == K_UDP ? classify_udp(skb, p) : kind;
}

/* IPv4 after a trim: total length, and the header checksum over it */
static __always_inline int fix_ipv4_length(struct __sk_buff *skb, struct pkt *p,
					   __u32 new_len, __u16 old_tot)
{
	__u16 new_tot = bpf_htons(new_len - p->ip_off);

	if (bpf_skb_store_bytes(skb, p->ip_off + 2, &new_tot, 2, 0))
		return -1;
	return bpf_l3_csum_replace(skb, p->ip_off + 10, old_tot, new_tot, 2);
}

/* IPv6 after a trim: payload length (it counts the SRH or the inner header
 * too), and the inner header's own; no header checksum */
static __always_inline int fix_ipv6_length(struct __sk_buff *skb, struct pkt *p,
					   __u32 new_len)
{
	__u16 plen = bpf_htons(new_len - p->ip_off - sizeof(struct ipv6hdr));

	if (bpf_skb_store_bytes(skb, p->ip_off + 4, &plen, 2, 0))
		return -1;
	if (!p->inner_off)
		return 0;
	plen = bpf_htons(new_len - p->inner_off - sizeof(struct ipv6hdr));
	return bpf_skb_store_bytes(skb, p->inner_off + 4, &plen, 2, 0);
}

/* Cut the packet to Ethernet + IP (+ SRH) + UDP + MRC header, set TRIMMED,
 * fix the IP lengths (and the IPv4 header checksum) and the UDP length.
 * UDP checksum := 0, as the payload it covered is gone. In IPv4 zero means
 * "no checksum". In IPv6 a zero UDP checksum is invalid (RFC 8200) unless
 * the receiver opted in (RFC 6936): the srv6 data plane's receivers set
 * UDP_NO_CHECK6_RX, as its routers rewrite the destination address (the
 * uSID list) and its senders send zero checksums already. */
static __always_inline int trim(struct __sk_buff *skb, struct pkt *p, __u32 new_len)
{
	__u16 old_tot = 0, udp_len, zero = 0;
	__u8 flags;

	if (!p->ipv6 && bpf_skb_load_bytes(skb, p->ip_off + 2, &old_tot, 2))
		return -1;
	if (bpf_skb_change_tail(skb, new_len, 0))
		return -1;
	if (p->ipv6 ? fix_ipv6_length(skb, p, new_len)
		    : fix_ipv4_length(skb, p, new_len, old_tot))
		return -1;
	udp_len = bpf_htons(sizeof(struct udphdr) + p->hdr_len);
	if (bpf_skb_store_bytes(skb, p->l4_off + 4, &udp_len, 2, 0))
		return -1;
	if (bpf_skb_store_bytes(skb, p->l4_off + 6, &zero, 2, 0))
		return -1;
	if (bpf_skb_load_bytes(skb, p->l4_off + sizeof(struct udphdr) + 2, &flags, 1))
		return -1;
	flags |= FL_TRIMMED;
	if (bpf_skb_store_bytes(skb, p->l4_off + sizeof(struct udphdr) + 2, &flags, 1, 0))
		return -1;
	return 0;
}

static __always_inline int set_ce(struct __sk_buff *skb, struct pkt *p)
{
	__u16 old_w, new_w;

	/* IPv4: tos is the second byte of the first 16-bit word of the header.
	 * IPv6: version:4 traffic-class:8 flow-label:20, so the class's ECN bits
	 * are 0x0030 of the first word; IPv6 has no header checksum, and the
	 * traffic class is not in the UDP pseudo-header. */
	if (bpf_skb_load_bytes(skb, p->ip_off, &old_w, 2))
		return -1;
	new_w = old_w | bpf_htons(p->ipv6 ? 0x0030 : 0x0003);
	if (bpf_skb_store_bytes(skb, p->ip_off, &new_w, 2, 0))
		return -1;
	if (p->ipv6)
		return 0;
	return bpf_l3_csum_replace(skb, p->ip_off + 10, old_w, new_w, 2);
}

enum verdict { V_PASS, V_TRIM, V_DROP };

SEC("tc")
int port_egress(struct __sk_buff *skb)
{
	__u32 ifindex = skb->ifindex, zero = 0;
	struct port_cfg *cfg;
	struct port_stats *st;
	struct port_state *qs;
	struct lab_globals *g;
	struct pkt p = {};
	__u32 len = skb->len, out_len, cfg_flags;
	__u64 now, backlog, elapsed, drained, rate, paused, held, feeder = 0;
	int kind, verdict = V_PASS, mark = 0, lossless;

	if (skb->tc_index == TRIM_PASS) {
		/* second pass of a packet trimmed below: already counted and in
		 * the virtual queue; now the qdisc sees its real, trimmed length */
		skb->tc_index = 0;
		return TC_ACT_OK;
	}
	cfg = bpf_map_lookup_elem(&port_cfg, &ifindex);
	st = bpf_map_lookup_elem(&port_stats, &ifindex);
	qs = bpf_map_lookup_elem(&port_state, &ifindex);
	if (!cfg || !st || !qs)
		return TC_ACT_OK;   /* not a lab port (or being detached) */
	cfg_flags = cfg->flags;
	lossless = cfg_flags & CFG_LOSSLESS;
	g = bpf_map_lookup_elem(&lab_globals, &zero);
	if (g && (g->flags & G_FORCE_TAILDROP))
		cfg_flags &= ~CFG_TRIM;

	kind = classify(skb, &p);
	if (kind <= K_OTHER_IP)
		ADD(st->other, 1);

	if (cfg_flags & CFG_BLACKHOLE)
		goto fault;
	if (cfg->drop_prob && bpf_get_prandom_u32() < cfg->drop_prob)
		goto fault;

	out_len = len;
	rate = cfg->rate_bps;
	if (lossless && kind == K_DATA && skb->ingress_ifindex) {
		/* no map lookups under the spin lock: the ingress port's bit first */
		__u32 in = skb->ingress_ifindex;
		struct port_cfg *in_cfg = bpf_map_lookup_elem(&port_cfg, &in);

		if (in_cfg && in_cfg->port_bit && in_cfg->port_bit <= 64)
			feeder = 1ULL << (in_cfg->port_bit - 1);
	}
	if (rate) {
		__u32 hdr_out = p.l4_off + sizeof(struct udphdr) + p.hdr_len;

		now = bpf_ktime_get_ns();
		/* a paused port's queue does not drain: time paused since the
		 * last packet is taken off the elapsed time (0 unless lossless) */
		paused = cfg->pause_total_ns;
		if (cfg->pause_start_ns && now > cfg->pause_start_ns)
			paused += now - cfg->pause_start_ns;
		bpf_spin_lock(&qs->lock);
		elapsed = now - qs->last_ns;
		qs->last_ns = now;
		held = paused > qs->pause_mark ? paused - qs->pause_mark : 0;
		qs->pause_mark = paused;
		elapsed = elapsed > held ? elapsed - held : 0;
		backlog = qs->backlog;
		/* drained = elapsed * rate / 8e9, guarding the multiplication */
		if (elapsed >= (~0ULL) / rate)
			backlog = 0;
		else {
			drained = elapsed * rate / 8000000000ULL;
			backlog = drained >= backlog ? 0 : backlog - drained;
		}
		if (lossless && backlog <= cfg->xon)
			qs->feeders = 0;
		if (kind == K_DATA && !lossless && backlog + len > cfg->trim_thresh) {
			if (cfg_flags & CFG_TRIM) {
				verdict = V_TRIM;
				out_len = hdr_out;
			} else {
				verdict = V_DROP;
			}
		}
		if (verdict != V_DROP && backlog + out_len > cfg->queue_limit)
			verdict = V_DROP;
		if (verdict != V_DROP) {
			if (verdict == V_PASS && kind != K_CTRL &&
			    (cfg_flags & CFG_ECN) && backlog + out_len > cfg->ecn_thresh &&
			    (p.tos & 3) && (p.tos & 3) != 3)
				mark = 1;
			backlog += out_len;
			if (lossless && backlog > cfg->xoff)
				qs->feeders |= feeder;
		}
		qs->backlog = backlog;
		if (backlog > qs->max_backlog)
			qs->max_backlog = backlog;
		bpf_spin_unlock(&qs->lock);
	}

	/* Drops return TC_ACT_STOLEN, not TC_ACT_SHOT: SHOT makes the sender's
	 * sendmsg fail, and ovs-vswitchd then discards the rest of that port's
	 * transmit batch uncounted (measured: 50 packets into a black hole,
	 * 2 counted). STOLEN frees the packet and reports success. */
	if (verdict == V_DROP) {
		ADD(st->dropped_queue, 1);
		ADD(st->dropped_queue_bytes, len);
		return TC_ACT_STOLEN;
	}
	if (verdict == V_TRIM) {
		if (trim(skb, &p, out_len)) {
			/* the virtual queue already holds out_len for it: the
			 * error is rare and counted, the backlog error tiny */
			ADD(st->errors, 1);
			ADD(st->dropped_queue, 1);
			ADD(st->dropped_queue_bytes, len);
			return TC_ACT_STOLEN;
		}
		ADD(st->trimmed, 1);
		ADD(st->trimmed_bytes, len);
		if (cfg->prio_hi)
			skb->priority = cfg->prio_hi;
		/* The qdisc charges qdisc_skb_cb(skb)->pkt_len, computed before
		 * this hook: returned as is, a trimmed header would cost htb a
		 * full packet of link time (measured: links drained at ~0.6 of
		 * their rate under trimming). Sending it through the device's
		 * egress again recomputes pkt_len from the new length. */
		skb->tc_index = TRIM_PASS;
		return bpf_redirect(ifindex, 0);
	}
	if (mark && set_ce(skb, &p) == 0)
		ADD(st->ecn_marked, 1);
	ADD(st->passed, 1);
	ADD(st->passed_bytes, len);
	/* control, ARP and neighbour discovery first; data and other traffic
	 * queue behind */
	if (kind == K_CTRL || p.link_ctrl ||
	    (kind == K_OTHER && skb->protocol == bpf_htons(ETH_P_ARP))) {
		if (cfg->prio_hi)
			skb->priority = cfg->prio_hi;
	} else if (cfg->prio_lo) {
		skb->priority = cfg->prio_lo;
	}
	return TC_ACT_OK;

fault:
	ADD(st->dropped_fault, 1);
	ADD(st->dropped_fault_bytes, len);
	return TC_ACT_STOLEN;
}

char _license[] SEC("license") = "GPL";
