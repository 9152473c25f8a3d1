/* ring_map.c — an event's mapped rings and the fields of its control page
 * (struct perf_event_mmap_page): data_head / data_tail, aux_head, the AUX
 * placement, and the clock conversion under its seqlock.
 *
 * Memory order as perf_event_open(2) asks: heads are read with acquire
 * (the records before them are visible), data_tail is written with release
 * (the kernel may overwrite what was read only after the read). */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perf-local.h"

static size_t page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : 4096;
}

/* mmap through the table: the mapping, or NULL and *@err. */
static void *map_fd(size_t len, int writable, int fd, off_t off, int *err)
{
	void *map;

	errno = 0;
	map = sptd_col_sys.mmap(NULL, len, writable ? PROT_READ | PROT_WRITE : PROT_READ,
	                        MAP_SHARED, fd, off);
	if (map == MAP_FAILED || !map) {
		*err = errno ? -errno : -ENOMEM;
		return NULL;
	}
	return map;
}

int sptd_col_perf_ring_map(struct sptd_col_perf_ring *ring, int fd, size_t data_pages,
                           int writable)
{
	size_t page = page_size();
	int err = 0;

	if (!ring || fd < 0 || data_pages == 0 || (data_pages & (data_pages - 1)) != 0 ||
	    data_pages > (1u << 20) || ring->base)
		return -EINVAL;
	ring->page = page;
	ring->len = (1 + data_pages) * page;
	ring->base = map_fd(ring->len, writable, fd, 0, &err);
	if (!ring->base) {
		ring->len = 0;
		return err;
	}
	return 0;
}

int sptd_col_perf_ring_map_aux(struct sptd_col_perf_ring *ring, int fd, size_t aux_bytes,
                               int writable)
{
	struct perf_event_mmap_page *pg;
	int err = 0;

	if (!ring || !ring->base || fd < 0 || ring->aux || aux_bytes == 0 ||
	    aux_bytes % ring->page != 0 || ((aux_bytes / ring->page) & (aux_bytes / ring->page - 1)))
		return -EINVAL;
	pg = ring->base;
	pg->aux_offset = ring->len;
	pg->aux_size = aux_bytes;
	ring->aux = map_fd(aux_bytes, writable, fd, (off_t)ring->len, &err);
	if (!ring->aux)
		return err;
	ring->aux_len = aux_bytes;
	return 0;
}

void sptd_col_perf_ring_unmap(struct sptd_col_perf_ring *ring)
{
	if (!ring)
		return;
	if (ring->aux)
		sptd_col_sys.munmap(ring->aux, ring->aux_len);
	if (ring->base)
		sptd_col_sys.munmap(ring->base, ring->len);
	ring->aux = ring->base = NULL;
	ring->aux_len = ring->len = 0;
}

const void *sptd_col_perf_ring_data(const struct sptd_col_perf_ring *ring, uint64_t *size)
{
	const struct perf_event_mmap_page *pg;
	uint64_t offset, bytes;

	if (size)
		*size = 0;
	if (!ring || !ring->base)
		return NULL;
	/* data_offset/data_size since Linux 4.1; the page size before */
	pg = ring->base;
	offset = pg->data_offset ? pg->data_offset : ring->page;
	bytes = pg->data_size ? pg->data_size : ring->len - ring->page;
	if (offset > ring->len || bytes > ring->len - offset)
		return NULL;
	if (size)
		*size = bytes;
	return (const unsigned char *)ring->base + offset;
}

uint64_t sptd_col_perf_ring_head(const struct sptd_col_perf_ring *ring)
{
	const struct perf_event_mmap_page *pg = ring ? ring->base : NULL;

	return pg ? __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) : 0;
}

uint64_t sptd_col_perf_ring_aux_head(const struct sptd_col_perf_ring *ring)
{
	const struct perf_event_mmap_page *pg = ring ? ring->base : NULL;

	return pg ? __atomic_load_n(&pg->aux_head, __ATOMIC_ACQUIRE) : 0;
}

int sptd_col_perf_ring_clock(const struct sptd_col_perf_ring *ring,
                             struct sptd_col_perf_clock *clock)
{
	const struct perf_event_mmap_page *pg;
	uint32_t seq;

	if (!ring || !ring->base || !clock)
		return -EINVAL;
	pg = ring->base;
	do {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		clock->cap_user_time = pg->cap_user_time;
		clock->cap_user_time_zero = pg->cap_user_time_zero;
		clock->time_mult = pg->time_mult;
		clock->time_shift = pg->time_shift;
		clock->time_zero = pg->time_zero;
		clock->time_offset = pg->time_offset;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE) != seq);
	return 0;
}

uint64_t sptd_col_perf_ring_unread(const struct sptd_col_perf_ring *ring)
{
	const struct perf_event_mmap_page *pg = ring ? ring->base : NULL;
	uint64_t size, len;

	if (!pg || !sptd_col_perf_ring_data(ring, &size))
		return 0;
	len = sptd_col_perf_ring_head(ring) - pg->data_tail;
	return len > size ? size : len;   /* more than the ring: cannot be, with a reader */
}

/* A mapped forward ring's data area, size, head and control page, or
 * -EINVAL. */
static int forward_ring(struct sptd_col_perf_ring *ring, const void **data, uint64_t *size,
                        uint64_t *head, struct perf_event_mmap_page **pg)
{
	if (!ring || !ring->base)
		return -EINVAL;
	*data = sptd_col_perf_ring_data(ring, size);
	if (!*data)
		return -EINVAL;
	*pg = ring->base;
	*head = sptd_col_perf_ring_head(ring);
	return 0;
}

int64_t sptd_col_perf_ring_consume(struct sptd_col_perf_ring *ring, void *dst, uint64_t cap)
{
	struct perf_event_mmap_page *pg;
	const void *data;
	uint64_t size, head, tail, len;

	if ((!dst && cap) || forward_ring(ring, &data, &size, &head, &pg) < 0)
		return -EINVAL;
	tail = pg->data_tail;
	if (head - tail > size)
		tail = head - size;   /* overrun: what is older is gone */
	len = head - tail < cap ? head - tail : cap;
	if (len)
		sptd_col_ring_copy(data, size, tail + len, len, dst);
	__atomic_store_n(&pg->data_tail, tail + len, __ATOMIC_RELEASE);
	return (int64_t)len;
}

int sptd_col_perf_ring_drain(struct sptd_col_perf_ring *ring, sptd_col_record_fn fn, void *ctx)
{
	struct perf_event_mmap_page *pg;
	const void *data;
	uint64_t size, head;
	int ret;

	if (!fn || forward_ring(ring, &data, &size, &head, &pg) < 0)
		return -EINVAL;
	ret = sptd_col_ring_walk_forward(data, size, pg->data_tail, head, fn, ctx);
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
	return ret;
}
