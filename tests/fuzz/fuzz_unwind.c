/* fuzz_unwind.c — DWARF unwinding of a copied user stack (decode/unwind.c)
 * over hostile inputs: the ELF file whose call-frame information steers the
 * walk, the registers and the stack bytes all come from the input.
 *
 * Input: a 4-byte little-endian ELF length L (clamped to what is there),
 * L bytes of ELF file, then the registers (17 u64s, perf_regs order, as
 * many as are there; the rest 0), then the stack copy (everything left,
 * at most 64 KiB).  The ELF is written to a scratch file and "mapped" at
 * 0x10000 (pgoff 0) over 16 MiB; every find gets a new descriptor of it.
 * The same bytes are also read back through the raw_sample.ustack blob.
 * Checked: an unwind returns 0..max frames, the first the IP when any,
 * never reads outside the copy (ASan), never hangs (frames are bounded);
 * a blob that decodes re-encodes to the same bytes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "sptd_dec.h"

#define MAP_START 0x10000ull
#define MAP_LEN (16ull << 20)
#define STACK_MAX 65536u

static char elf_path[4096];

static int find_map(void *ctx, uint64_t addr, struct sptd_dec_unwind_map *map)
{
	(void)ctx;
	map->start = MAP_START;
	map->end = MAP_START + MAP_LEN;
	map->pgoff = 0;
	map->name = elf_path;
	map->fd = -1;
	if (addr < map->start || addr >= map->end)
		return -ENOENT;
	map->fd = open(elf_path, O_RDONLY | O_CLOEXEC);
	return map->fd < 0 ? -ENOENT : 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	sptd_fuzz_quiet_logs();
	snprintf(elf_path, sizeof(elf_path), "%s/unwind.elf", sptd_fuzz_scratch());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sptd_dec_ustack us = { .stack = NULL }, back;
	struct sptd_dec_unwind *u = NULL;
	uint64_t ips[SPTD_DEC_UNWIND_MAX_FRAMES];
	unsigned char *blob;
	size_t elf_len, off, regs_len, blob_len;
	int n, max;

	if (!elf_path[0])
		LLVMFuzzerInitialize(NULL, NULL);
	if (size < 4)
		return 0;
	elf_len = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 |
	          (size_t)data[3] << 24;
	if (elf_len > size - 4)
		elf_len = size - 4;
	if (sptd_fuzz_write_file(elf_path, data + 4, elf_len) < 0)
		return 0;
	off = 4 + elf_len;
	regs_len = size - off < sizeof(us.regs) ? size - off : sizeof(us.regs);
	memcpy(us.regs, data + off, regs_len);
	off += regs_len;
	us.stack_len = size - off < STACK_MAX ? size - off : STACK_MAX;
	us.stack = us.stack_len ? data + off : NULL;

	FUZZ_CHECK(sptd_dec_unwind_create(1, find_map, NULL, &u) == 0, "create failed");
	max = 1 + (int)(us.regs[0] % SPTD_DEC_UNWIND_MAX_FRAMES);
	for (int round = 0; round < 2; round++) {
		/* the second round reuses the files the first reported */
		n = sptd_dec_unwind_run(u, &us, ips, max);
		FUZZ_CHECK(n >= 0 && n <= max, "%d frames for at most %d", n, max);
		FUZZ_CHECK(n == 0 || ips[0] == us.regs[8], "frame 0 %llx is not the IP %llx",
		           (unsigned long long)ips[0], (unsigned long long)us.regs[8]);
	}
	sptd_dec_unwind_destroy(u);

	/* the stored form: encode, decode, the same state */
	blob_len = sptd_dec_ustack_size(us.stack_len);
	blob = malloc(blob_len);
	if (blob) {
		FUZZ_CHECK(sptd_dec_ustack_encode(&us, blob, blob_len) == (int)blob_len, "encode");
		FUZZ_CHECK(sptd_dec_ustack_decode(blob, blob_len, &back) == 0, "decode");
		FUZZ_CHECK(memcmp(back.regs, us.regs, sizeof(us.regs)) == 0 &&
		           back.stack_len == us.stack_len &&
		           (!us.stack_len || memcmp(back.stack, us.stack, us.stack_len) == 0),
		           "round trip");
		FUZZ_CHECK(sptd_dec_ustack_decode(blob, blob_len - 1, &back) ==
		           (blob_len - 1 < sptd_dec_ustack_size(0) ? -EBADMSG : 0), "short blob");
		free(blob);
	}
	return 0;
}
