/* spepkt.c — the SPE record of one sample, as an Arm core writes it
 * (Arm ARM, Statistical Profiling Extension packet formats), and the
 * cache model that decides what the record says about the access.
 *
 * Record layout (one per sample, closed by its Timestamp as on a core
 * with timestamps enabled): Address PC (EL0, non-secure), Context
 * (CONTEXTIDR_EL1 = tid, as Linux with PID_IN_CONTEXTIDR), Operation Type
 * (load/store class), Events (4 bytes), Data Source (2 bytes, loads and
 * atomics only: Neoverse cores report none for stores), Counters total and
 * issue latency, Address data VA, Counter translation latency, Address
 * data PA (when known), Timestamp. */
#include <string.h>

#include "sptd_dec.h"
#include "spegen.h"

/* Neoverse data source codes (Arm Neoverse N1 TRM, SPE data source). */
#define SRC_L1D 0x0
#define SRC_SYS_CACHE 0xb
#define SRC_DRAM 0xe

#define L1_LINES 512
#define LLC_LINES 16384
#define TLB_PAGES 64

static uint64_t l1[L1_LINES], llc[LLC_LINES], tlb[TLB_PAGES];

void spegen_cache_model(struct spegen_sample *s)
{
	uint64_t line = (s->vaddr >> 6) + 1, page = (s->vaddr >> 12) + 1;
	int l1_hit = l1[line % L1_LINES] == line, llc_hit = llc[line % LLC_LINES] == line;
	int tlb_hit = tlb[page % TLB_PAGES] == page;

	s->events = SPTD_DEC_SPE_EV_RETIRED | SPTD_DEC_SPE_EV_L1D_ACCESS | SPTD_DEC_SPE_EV_TLB_ACCESS;
	s->lat_issue = (uint16_t)(1 + (s->pc & 3));
	s->lat_xlat = tlb_hit ? 1 : 30;
	if (!tlb_hit)
		s->events |= SPTD_DEC_SPE_EV_TLB_WALK;
	if (l1_hit) {
		s->source = SRC_L1D;
		s->lat_total = 4;
	} else if (llc_hit) {
		s->events |= SPTD_DEC_SPE_EV_L1D_MISS | SPTD_DEC_SPE_EV_LLC_ACCESS;
		s->source = SRC_SYS_CACHE;
		s->lat_total = 40;
	} else {
		s->events |= SPTD_DEC_SPE_EV_L1D_MISS | SPTD_DEC_SPE_EV_LLC_ACCESS |
		             SPTD_DEC_SPE_EV_LLC_MISS;
		s->source = SRC_DRAM;
		s->lat_total = 200;
	}
	s->lat_total = (uint16_t)(s->lat_total + s->lat_issue + s->lat_xlat);
	if (s->access == SPEGEN_STORE)
		s->source = 0;     /* no Data Source packet for stores */
	l1[line % L1_LINES] = line;
	llc[line % LLC_LINES] = line;
	tlb[page % TLB_PAGES] = page;
}

static size_t put(uint8_t *b, uint8_t hdr, uint64_t v, unsigned size)
{
	b[0] = hdr;
	for (unsigned i = 0; i < size; i++)
		b[1 + i] = (uint8_t)(v >> (8 * i));
	return 1 + size;
}

#define NS_BIT (1ull << 63)

size_t spegen_packets(const struct spegen_sample *s, uint8_t *buf)
{
	size_t n = 0;
	uint8_t op = s->access == SPEGEN_STORE ? 0x01 : s->access == SPEGEN_ATOMIC ? 0x07 : 0x00;

	n += put(buf + n, 0xb0, (s->pc & 0x00ffffffffffffffull) | NS_BIT, 8);
	n += put(buf + n, 0x64, (uint32_t)s->tid, 4);
	n += put(buf + n, 0x49, op, 1);
	n += put(buf + n, 0x62, s->events, 4);
	if (s->access != SPEGEN_STORE)
		n += put(buf + n, 0x53, s->source, 2);
	n += put(buf + n, 0x98, s->lat_total, 2);
	n += put(buf + n, 0x99, s->lat_issue, 2);
	n += put(buf + n, 0xb2, s->vaddr & 0x00ffffffffffffffull, 8);
	n += put(buf + n, 0x9a, s->lat_xlat, 2);
	if (s->paddr)
		n += put(buf + n, 0xb3, (s->paddr & 0x00ffffffffffffffull) | NS_BIT, 8);
	n += put(buf + n, 0x71, s->ts, 8);
	return n;
}

const char *spegen_access_name(enum spegen_access a)
{
	return a == SPEGEN_LOAD ? "load" : a == SPEGEN_STORE ? "store" :
	       a == SPEGEN_ATOMIC ? "atomic" : "none";
}
