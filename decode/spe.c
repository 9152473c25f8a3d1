/* spe.c — Arm Statistical Profiling Extension packets -> records.
 *
 * Written from the packet format of the Arm Architecture Reference Manual
 * (chapter "Statistical Profiling Extension", section "Packet formats").
 * A packet is a header byte (or an extended header: 0b001000ii then a
 * second header byte whose index bits the first two extend), then a
 * payload of 1 << header[5:4] bytes, little-endian:
 *
 *   0b00000000              Padding, no payload
 *   0b00000001              End of record, no payload
 *   0b01110001              Timestamp, 8 bytes: ends the record too
 *   0b01ss0010              Events, 1..8 bytes
 *   0b01ss0011              Data Source, 1..8 bytes
 *   0b011001ii              Context (CONTEXTIDR_EL1 / _EL2), 4 bytes
 *   0b010010cc              Operation Type of class cc, 1 byte
 *   0b10110iii              Address of index iii, 8 bytes
 *   0b10011iii              Counter of index iii, 2 bytes
 *
 * Address indexes: 0 the instruction (EL in bits 62:61, NS in 63), 1 the
 * branch target, 2 the data virtual address (bits 63:56 a tag), 3 the data
 * physical address.  Counters: 0 total latency, 1 issue latency, 2
 * translation latency.  Nothing here trusts the bytes: every read is
 * bounded by the buffer, and a byte that starts no packet is counted and
 * skipped, dropping the record it fell in. */
#include <errno.h>
#include <string.h>

#include "sptd_dec.h"

enum pkt_kind {
	PKT_PAD, PKT_END, PKT_TIMESTAMP, PKT_EVENTS, PKT_SOURCE, PKT_CONTEXT, PKT_OP,
	PKT_ADDRESS, PKT_COUNTER,
};

/* One packet as read. */
struct pkt {
	enum pkt_kind kind;
	unsigned index;          /* address/counter index, context index, op class */
	uint64_t payload;        /* little-endian payload, zero-extended */
};

/* Address packet indexes and counter indexes. */
#define ADDR_PC     0
#define ADDR_TARGET 1
#define ADDR_VADDR  2
#define ADDR_PADDR  3
#define CNT_TOTAL   0
#define CNT_ISSUE   1
#define CNT_XLAT    2

/* Bits 55:0 of an address payload; 63:56 hold the EL/NS or a tag. */
#define ADDR_MASK 0x00ffffffffffffffull

/* Read one packet at @p (@n bytes left).  Its length; 0 when the buffer
 * ends inside it; -EBADMSG when @p starts no packet. */
static int packet_read(const uint8_t *p, size_t n, struct pkt *out)
{
	unsigned hdr = p[0], ext = 0, hlen = 1, size;

	switch (hdr) {
	case 0x00:
		out->kind = PKT_PAD;
		return 1;
	case 0x01:
		out->kind = PKT_END;
		return 1;
	default:
		break;
	}
	if ((hdr & 0xfc) == 0x20) {
		/* extended header: only addresses and counters have one */
		if (n < 2)
			return 0;
		ext = (hdr & 3) << 3;
		hdr = p[1];
		hlen = 2;
		if ((hdr & 0xf8) != 0xb0 && (hdr & 0xf8) != 0x98)
			return -EBADMSG;
	}
	size = 1u << ((hdr >> 4) & 3);
	if (hdr == 0x71) {
		out->kind = PKT_TIMESTAMP;
	} else if ((hdr & 0xcf) == 0x42) {
		out->kind = PKT_EVENTS;
	} else if ((hdr & 0xcf) == 0x43) {
		out->kind = PKT_SOURCE;
	} else if ((hdr & 0xfc) == 0x64) {
		out->kind = PKT_CONTEXT;
		out->index = hdr & 3;
	} else if ((hdr & 0xfc) == 0x48) {
		out->kind = PKT_OP;
		out->index = hdr & 3;
	} else if ((hdr & 0xf8) == 0xb0) {
		out->kind = PKT_ADDRESS;
		out->index = ext | (hdr & 7);
	} else if ((hdr & 0xf8) == 0x98) {
		out->kind = PKT_COUNTER;
		out->index = ext | (hdr & 7);
	} else {
		return -EBADMSG;
	}
	if (n < hlen + size)
		return 0;
	out->payload = 0;
	for (unsigned i = 0; i < size; i++)
		out->payload |= (uint64_t)p[hlen + i] << (8 * i);
	return (int)(hlen + size);
}

/* A virtual address from bits 55:0: bit 55 selects the upper (kernel)
 * half, whose top byte is all ones. */
static uint64_t va_extend(uint64_t payload)
{
	uint64_t a = payload & ADDR_MASK;

	return (a >> 55) & 1 ? a | ~ADDR_MASK : a;
}

/* Fold packet @k into @r; 0 used, 1 a packet sysptd does not use. */
static int record_add(struct sptd_dec_spe_record *r, const struct pkt *k)
{
	switch (k->kind) {
	case PKT_EVENTS:
		r->events = k->payload;
		r->have |= SPTD_DEC_SPE_HAVE_EVENTS;
		return 0;
	case PKT_SOURCE:
		r->source = (uint16_t)k->payload;
		r->have |= SPTD_DEC_SPE_HAVE_SOURCE;
		return 0;
	case PKT_CONTEXT:
		r->context = (uint32_t)k->payload;
		r->have |= SPTD_DEC_SPE_HAVE_CONTEXT;
		return 0;
	case PKT_OP:
		r->op_class = (uint8_t)k->index;
		r->op_bits = (uint8_t)k->payload;
		if (k->index == 0)
			r->op = SPTD_DEC_SPE_OP_OTHER;
		else if (k->index == 2)
			r->op = SPTD_DEC_SPE_OP_BRANCH;
		else if (k->index == 3)
			return 1;                         /* reserved class */
		else if ((k->payload & 0xe2) == 0x02)
			r->op = SPTD_DEC_SPE_OP_ATOMIC;   /* subclass 000xxx1x */
		else
			r->op = k->payload & 1 ? SPTD_DEC_SPE_OP_STORE : SPTD_DEC_SPE_OP_LOAD;
		return 0;
	case PKT_ADDRESS:
		switch (k->index) {
		case ADDR_PC:
			r->pc = va_extend(k->payload);
			r->el = (int)((k->payload >> 61) & 3);
			r->have |= SPTD_DEC_SPE_HAVE_PC;
			return 0;
		case ADDR_TARGET:
			r->target = va_extend(k->payload);
			r->have |= SPTD_DEC_SPE_HAVE_TARGET;
			return 0;
		case ADDR_VADDR:
			r->vaddr = va_extend(k->payload);
			r->have |= SPTD_DEC_SPE_HAVE_VADDR;
			return 0;
		case ADDR_PADDR:
			r->paddr = k->payload & ADDR_MASK;
			r->have |= SPTD_DEC_SPE_HAVE_PADDR;
			return 0;
		default:
			return 1;
		}
	case PKT_COUNTER:
		switch (k->index) {
		case CNT_TOTAL:
			r->lat_total = (uint16_t)k->payload;
			r->have |= SPTD_DEC_SPE_HAVE_LAT_TOTAL;
			return 0;
		case CNT_ISSUE:
			r->lat_issue = (uint16_t)k->payload;
			r->have |= SPTD_DEC_SPE_HAVE_LAT_ISSUE;
			return 0;
		case CNT_XLAT:
			r->lat_xlat = (uint16_t)k->payload;
			r->have |= SPTD_DEC_SPE_HAVE_LAT_XLAT;
			return 0;
		default:
			return 1;
		}
	default:
		return 1;
	}
}

int64_t sptd_dec_spe_decode(const uint8_t *buf, size_t len,
                            int (*fn)(void *ctx, const struct sptd_dec_spe_record *r),
                            void *ctx, struct sptd_dec_spe_stats *stats)
{
	struct sptd_dec_spe_stats local = { 0 };
	struct sptd_dec_spe_record r;
	int64_t delivered = 0;
	int broken = 0, open = 0;  /* a bad byte since the last record end; packets seen */
	size_t pos = 0;

	if ((!buf && len) || !fn)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	while (pos < len) {
		struct pkt k;
		int n = packet_read(buf + pos, len - pos, &k);

		if (n == 0) {
			local.truncated = 1;
			break;
		}
		if (n < 0) {
			local.bad_bytes++;
			broken = 1;
			pos++;
			continue;
		}
		pos += (size_t)n;
		if (k.kind == PKT_PAD)
			continue;
		if (k.kind == PKT_TIMESTAMP) {
			r.ts = k.payload;
			r.have |= SPTD_DEC_SPE_HAVE_TS;
			open = 1;
		}
		if (k.kind == PKT_TIMESTAMP || k.kind == PKT_END) {
			if (broken) {
				local.dropped++;
			} else if (r.have || r.op != SPTD_DEC_SPE_OP_NONE) {
				/* (a record of unknown packets only says nothing) */
				int ret = fn(ctx, &r);

				if (ret < 0) {
					delivered = ret;
					goto out;
				}
				delivered++;
				local.records++;
			}
			memset(&r, 0, sizeof(r));
			broken = open = 0;
			continue;
		}
		open = 1;
		local.unknown += (uint64_t)record_add(&r, &k);
	}
	if (open)
		local.dropped++;   /* a record without its end */
out:
	if (stats) {
		stats->records += local.records;
		stats->bad_bytes += local.bad_bytes;
		stats->dropped += local.dropped;
		stats->truncated |= local.truncated;
		stats->unknown += local.unknown;
	}
	return delivered;
}

const char *sptd_dec_spe_op_name(enum sptd_dec_spe_op op)
{
	switch (op) {
	case SPTD_DEC_SPE_OP_LOAD: return "load";
	case SPTD_DEC_SPE_OP_STORE: return "store";
	case SPTD_DEC_SPE_OP_ATOMIC: return "atomic";
	case SPTD_DEC_SPE_OP_BRANCH: return "branch";
	case SPTD_DEC_SPE_OP_OTHER: return "other";
	default: return NULL;
	}
}
