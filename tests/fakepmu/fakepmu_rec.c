/* fakepmu_rec.c — the record writers (fakepmu_rec_*, see fakepmu.h):
 * COMM, MMAP2, SWITCH_CPU_WIDE, LOST, AUX, ITRACE_START and TEXT_POKE
 * records with sample_id_all's pid/tid, time and cpu, as the kernel writes
 * them into a perf ring.  Split out of fakepmu.c. */
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fakepmu.h"


static size_t rec_put(unsigned char *buf, size_t len, size_t cap, uint32_t type, uint16_t misc,
                      const void *body, size_t blen, int pid, int tid, uint64_t time, int cpu)
{
	struct perf_event_header h;
	size_t size = sizeof(h) + ((blen + 7) & ~(size_t)7) + 24;
	uint32_t ids[2] = { (uint32_t)pid, (uint32_t)tid }, cpus[2] = { (uint32_t)cpu, 0 };
	unsigned char *p;

	if (len + size > cap)
		return len;
	p = buf + len;
	memset(p, 0, size);
	h.type = type;
	h.misc = misc;
	h.size = (uint16_t)size;
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), body, blen);
	p += size - 24;
	memcpy(p, ids, 8);
	memcpy(p + 8, &time, 8);
	memcpy(p + 16, cpus, 8);
	return len + size;
}

size_t fakepmu_rec_comm(unsigned char *buf, size_t len, size_t cap, int pid, int tid,
                        const char *comm, uint64_t time, int cpu)
{
	unsigned char body[64] = { 0 };
	uint32_t ids[2] = { (uint32_t)pid, (uint32_t)tid };
	size_t n = strlen(comm) + 1;

	memcpy(body, ids, 8);
	memcpy(body + 8, comm, n > 40 ? 40 : n);
	return rec_put(buf, len, cap, PERF_RECORD_COMM, 0, body, 8 + n, pid, tid, time, cpu);
}

size_t fakepmu_rec_mmap2(unsigned char *buf, size_t len, size_t cap, int pid, int tid,
                         uint64_t addr, uint64_t size, uint64_t pgoff, const char *file,
                         uint64_t time, int cpu)
{
	unsigned char body[64 + 256] = { 0 };
	uint32_t ids[2] = { (uint32_t)pid, (uint32_t)tid }, prot = PROT_READ | PROT_EXEC, flags = MAP_PRIVATE;
	struct stat sb;
	size_t n = strlen(file) + 1;

	if (n > 256)
		n = 256;
	memcpy(body, ids, 8);
	memcpy(body + 8, &addr, 8);
	memcpy(body + 16, &size, 8);
	memcpy(body + 24, &pgoff, 8);
	/* the device and inode, as the kernel gives them for a file (the
	 * recorder reads the path only when it is still that inode) */
	if (file[0] == '/' && stat(file, &sb) == 0) {
		uint32_t maj = major(sb.st_dev), min = minor(sb.st_dev);
		uint64_t ino = sb.st_ino;

		memcpy(body + 32, &maj, 4);
		memcpy(body + 36, &min, 4);
		memcpy(body + 40, &ino, 8);
	}
	memcpy(body + 56, &prot, 4);
	memcpy(body + 60, &flags, 4);
	memcpy(body + 64, file, n);
	return rec_put(buf, len, cap, PERF_RECORD_MMAP2, 0, body, 64 + n, pid, tid, time, cpu);
}

size_t fakepmu_rec_switch(unsigned char *buf, size_t len, size_t cap, int out, int pid,
                          int tid, int other_pid, int other_tid, uint64_t time, int cpu)
{
	uint32_t body[2] = { (uint32_t)other_pid, (uint32_t)other_tid };

	return rec_put(buf, len, cap, PERF_RECORD_SWITCH_CPU_WIDE,
	               out ? PERF_RECORD_MISC_SWITCH_OUT : 0, body, 8, pid, tid, time, cpu);
}

size_t fakepmu_rec_lost(unsigned char *buf, size_t len, size_t cap, uint64_t lost,
                        uint64_t time, int cpu)
{
	uint64_t body[2] = { 0, lost };

	return rec_put(buf, len, cap, PERF_RECORD_LOST, 0, body, 16, -1, -1, time, cpu);
}

size_t fakepmu_rec_aux(unsigned char *buf, size_t len, size_t cap, uint64_t off,
                       uint64_t size, uint64_t flags, uint64_t time, int cpu)
{
	uint64_t body[3] = { off, size, flags };

	return rec_put(buf, len, cap, PERF_RECORD_AUX, 0, body, 24, -1, -1, time, cpu);
}

size_t fakepmu_rec_itrace(unsigned char *buf, size_t len, size_t cap, int pid, int tid,
                          uint64_t time, int cpu)
{
	uint32_t body[2] = { (uint32_t)pid, (uint32_t)tid };

	return rec_put(buf, len, cap, PERF_RECORD_ITRACE_START, 0, body, 8, pid, tid, time, cpu);
}

size_t fakepmu_rec_text_poke(unsigned char *buf, size_t len, size_t cap, uint64_t addr,
                             const void *old_bytes, uint16_t old_len, const void *new_bytes,
                             uint16_t new_len, uint64_t time, int cpu)
{
	unsigned char body[12 + 2 * 256] = { 0 };

	if ((size_t)old_len + new_len > sizeof(body) - 12)
		return len;
	memcpy(body, &addr, 8);
	memcpy(body + 8, &old_len, 2);
	memcpy(body + 10, &new_len, 2);
	memcpy(body + 12, old_bytes, old_len);
	memcpy(body + 12 + old_len, new_bytes, new_len);
	return rec_put(buf, len, cap, PERF_RECORD_TEXT_POKE, 0, body, 12u + old_len + new_len, -1,
	               -1, time, cpu);
}

size_t fakepmu_rec_ksymbol(unsigned char *buf, size_t len, size_t cap, uint64_t addr,
                           uint32_t code_len, int unregister, const char *name, uint64_t time,
                           int cpu)
{
	unsigned char body[16 + 128] = { 0 };
	uint16_t type = 1, flags = unregister ? 1 : 0;   /* BPF; UNREGISTER */
	size_t n = strlen(name) + 1;

	if (n > sizeof(body) - 16)
		return len;
	memcpy(body, &addr, 8);
	memcpy(body + 8, &code_len, 4);
	memcpy(body + 12, &type, 2);
	memcpy(body + 14, &flags, 2);
	memcpy(body + 16, name, n);
	return rec_put(buf, len, cap, PERF_RECORD_KSYMBOL, 0, body, 16 + n, -1, -1, time, cpu);
}
