// SPDX-License-Identifier: GPL-2.0
/*
 * MRC lab uN End program: the SRv6 uN (End with the NEXT-C-SID flavour,
 * 32-bit block, 16-bit uSIDs) of a router, for kernels built without
 * seg6local (CONFIG_IPV6_SEG6_LWTUNNEL). tc ingress (clsact,
 * direct-action) on every port of every srv6 router.
 *
 * The router's End route stays in its routing table, as a plain route to
 * its End device (no encap). Per IPv6 packet whose destination is in the
 * locator block, the program asks the kernel's own FIB for the longest
 * match of the destination; while that is the End device, it shifts the
 * uSIDs after the block left by 16 bits (the first one leaves) and counts
 * the packet for that uSID. Then the kernel forwards the rewritten packet
 * as it forwards any other: a route lookup, the hop limit decremented
 * once, ICMPv6 "no route" for an address the tables do not hold. The
 * longest match, not a prefix comparison, decides: a T0's host /64 must
 * win over its own End /48 (docs/srv6.md).
 *
 * Without the program (or with it failing), a packet for an End prefix is
 * routed to the End device and dropped there: the router fails closed.
 * Like seg6local, it leaves L4 checksums alone (docs/srv6.md "Checksums").
 *
 * Layouts are mirrored in topologies/srv6/un_engine.py: keep them in sync.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <linux/if_ether.h>
#include <linux/ipv6.h>
#include <linux/in6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define AF_INET6        10
#define USID_BITS       16
/* uSID slots after the 32-bit block: at most this many Ends in one router */
#define CONTAINER_SLOTS 6
/* un_ends key of packets the program could not rewrite (uSID 0 is never used) */
#define ERRORS_KEY      0

struct un_config {
	__u32 block;        /* the locator block, the destination's first 32 bits (network order) */
	__u32 end_ifindex;  /* every router's End device has this ifindex (in its own namespace) */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct un_config);
} un_config SEC(".maps");

/* packets shifted, by the uSID that left the address: each router's End counter */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << USID_BITS);
	__type(key, __u32);
	__type(value, __u64);
} un_ends SEC(".maps");

static __always_inline void count(__u32 usid)
{
	__u64 *n = bpf_map_lookup_elem(&un_ends, &usid);

	if (n)
		__sync_fetch_and_add(n, 1);
}

SEC("tc")
int un_ingress(struct __sk_buff *skb)
{
	const __u32 key = 0;
	struct un_config *cfg;
	struct ipv6hdr ip6;
	__u32 w1, w2, w3;
	int shifts = 0;

	if (skb->protocol != bpf_htons(ETH_P_IPV6))
		return TC_ACT_OK;
	cfg = bpf_map_lookup_elem(&un_config, &key);
	if (!cfg || !cfg->end_ifindex)
		return TC_ACT_OK;
	if (bpf_skb_load_bytes(skb, ETH_HLEN, &ip6, sizeof(ip6)) || ip6.version != 6)
		return TC_ACT_OK;
	if (ip6.daddr.in6_u.u6_addr32[0] != cfg->block)
		return TC_ACT_OK;   /* not a uSID container: nothing to look up */
	w1 = bpf_ntohl(ip6.daddr.in6_u.u6_addr32[1]);
	w2 = bpf_ntohl(ip6.daddr.in6_u.u6_addr32[2]);
	w3 = bpf_ntohl(ip6.daddr.in6_u.u6_addr32[3]);

#pragma unroll
	for (int i = 0; i < CONTAINER_SLOTS; i++) {
		struct bpf_fib_lookup fib = {};   /* the helper writes into it: fresh every pass */
		int rc;

		fib.family = AF_INET6;
		fib.ifindex = skb->ingress_ifindex;
		/* a nonzero length makes the helper check it, not the skb, against the
		 * route's MTU: the header's alone always fits, so a jumbo packet is
		 * never answered FRAG_NEEDED by the End device's MTU */
		fib.tot_len = sizeof(ip6);
		__builtin_memcpy(fib.ipv6_src, &ip6.saddr, sizeof(fib.ipv6_src));
		fib.ipv6_dst[0] = cfg->block;
		fib.ipv6_dst[1] = bpf_htonl(w1);
		fib.ipv6_dst[2] = bpf_htonl(w2);
		fib.ipv6_dst[3] = bpf_htonl(w3);
		rc = bpf_fib_lookup(skb, &fib, sizeof(fib), 0);
		/* NO_NEIGH: the End device has no neighbour; the route is what matters */
		if ((rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH) ||
		    fib.ifindex != cfg->end_ifindex)
			break;
		count(w1 >> USID_BITS);
		w1 = w1 << USID_BITS | w2 >> USID_BITS;
		w2 = w2 << USID_BITS | w3 >> USID_BITS;
		w3 = w3 << USID_BITS;
		shifts++;
	}
	if (!shifts)
		return TC_ACT_OK;
	ip6.daddr.in6_u.u6_addr32[1] = bpf_htonl(w1);
	ip6.daddr.in6_u.u6_addr32[2] = bpf_htonl(w2);
	ip6.daddr.in6_u.u6_addr32[3] = bpf_htonl(w3);
	/* BPF_F_RECOMPUTE_CSUM keeps skb->csum right for a CHECKSUM_COMPLETE packet */
	if (bpf_skb_store_bytes(skb, ETH_HLEN + __builtin_offsetof(struct ipv6hdr, daddr), &ip6.daddr,
				sizeof(ip6.daddr), BPF_F_RECOMPUTE_CSUM))
		count(ERRORS_KEY);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
