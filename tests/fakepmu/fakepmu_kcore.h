/* fakepmu_kcore.h — a fake kernel for the capture of kernel code that PT
 * decoding needs (collector/record/pt_image.c), written under a root
 * directory that sysptd reads instead of / ($SPTD_KERNEL_ROOT):
 *
 *   ROOT/proc/kcore     an ELF64 core as fs/proc/kcore.c makes it: one
 *                       PT_LOAD for the kernel text (KCORE_TEXT) and one
 *                       for the whole module area (MODULES_VADDR..END:
 *                       module text, BPF JIT, trampolines), unused bytes 0
 *   ROOT/proc/kallsyms  _stext/_etext, each module's function ("[name]"),
 *                       each extra entry ("[bpf]", "[__builtin__ftrace]")
 *   ROOT/proc/modules   as kernel/module/procfs.c prints it: name, size
 *                       (every part of the module, text and data: past
 *                       the text), refcount, deps, state, text base in
 *                       %px (0 when addresses are hidden)
 *
 * The preload (preload_kcore.c) can make reads of its kernel text segment
 * fail with EIO, as a real /proc/kcore read can. */
#ifndef SPTD_FAKEPMU_KCORE_H
#define SPTD_FAKEPMU_KCORE_H

#include <stddef.h>
#include <stdint.h>

/* Where the fake kernel puts things (x86-64 layout). */
#define FAKEKERNEL_TEXT UINT64_C(0xffffffff81000000)    /* _stext */
#define FAKEKERNEL_MODULES UINT64_C(0xffffffffc0000000) /* MODULES_VADDR */
#define FAKEKERNEL_MODULES_LEN UINT64_C(0x40000)        /* the module area's size here */
#define FAKEKERNEL_DATA_OFF 4096                  /* first segment's file offset:
                                                   * headers lie before it */

/* Code at an address of the module area: a module's text, or code named
 * only by kallsyms (BPF JIT, a trampoline). */
struct fakepmu_kcode {
	const char *name;      /* module name; for kallsyms-only code its symbol */
	const char *tag;       /* NULL: a module (listed in /proc/modules); else
	                        * kallsyms' module column ("bpf",
	                        * "__builtin__ftrace") */
	uint64_t addr;         /* text base, inside the module area */
	uint64_t size;         /* /proc/modules size (modules only) */
	const uint8_t *code;   /* bytes at @addr */
	size_t len;
};

/* The fake kernel: @text (@text_len bytes at FAKEKERNEL_TEXT) and @ncode
 * pieces of module-area code.  @hide_addrs: /proc/modules and kallsyms
 * show 0 addresses (a reader without CAP_SYSLOG).  0 or -errno. */
int fakepmu_kernel_write(const char *root, const uint8_t *text, size_t text_len,
                         const struct fakepmu_kcode *code, int ncode, int hide_addrs);

#endif
