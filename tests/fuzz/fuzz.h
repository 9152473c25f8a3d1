/* fuzz.h — what every fuzz harness shares.
 *
 * A harness is one file defining LLVMFuzzerTestOneInput (and optionally
 * LLVMFuzzerInitialize).  It is linked two ways:
 *   - with clang -fsanitize=fuzzer,address,undefined (SPTD_FUZZ=ON, clang):
 *     fuzz_NAME, the libFuzzer binary scripts/fuzz.sh runs;
 *   - with replay.c, any compiler: replay_NAME, which runs the committed
 *     corpus tests/fuzz/corpus/NAME/ once as a CTest test, so every build
 *     (the sanitizer build of CI included) replays the inputs that once
 *     crashed.
 * A harness checks invariants the code promises (durations >= 0, exit
 * codes as the README says) with FUZZ_CHECK, which aborts: libFuzzer and
 * the replay test both report an abort as a failure. */
#ifndef SPTD_FUZZ_H
#define SPTD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Abort with a message when @cond is false: an invariant the code under
 * test promises does not hold for this input. */
#define FUZZ_CHECK(cond, ...)                                                   \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "fuzz invariant failed at %s:%d: %s: ",      \
			        __FILE__, __LINE__, #cond);                          \
			fprintf(stderr, __VA_ARGS__);                                \
			fputc('\n', stderr);                                         \
			abort();                                                     \
		}                                                               \
	} while (0)

/* Write @size bytes of @data to @path (created 0600, replaced).  0 or a
 * negative errno. */
int sptd_fuzz_write_file(const char *path, const void *data, size_t size);
/* A private scratch directory for this process (made on first call under
 * /dev/shm, else $TMPDIR or /tmp; removed at exit).  Static storage. */
const char *sptd_fuzz_scratch(void);
/* Read the whole file @path into a malloc'd buffer (*len its size).  NULL
 * when it cannot be read. */
void *sptd_fuzz_read_file(const char *path, size_t *len);
/* The shared fixtures directory (../shared/fixtures of the source tree, or
 * $SPTD_FIXTURES).  Static storage. */
const char *sptd_fuzz_fixtures(void);
/* Silence the libraries' log hooks (their warnings on corrupt input would
 * drown the fuzzer's own output); SPTD_FUZZ_LOG=1 prints them instead. */
void sptd_fuzz_quiet_logs(void);

/* ---- raw PT with a fixture image (fuzz_rawpt, fuzz_flowdiff) ---------------- */

/* Bytes of the header that raw-PT inputs start with. */
#define SPTD_FUZZ_RAWPT_HEADER 8

struct sptd_dec_session;

/* A decode session for a raw-PT input @data (@size > the header) with
 * flow decoder @decoder (SPTD_DEC_DECODER_*), ready to run.  The header:
 *   [0] image: 0 libxdc-foo (flat at 0x7ffff7819000), 1 libxdc-unzip (flat
 *       at 0x400000), 2 drpt2trace-hello (ELF by its program headers),
 *       3 none (a missing fixture: none either)
 *   [1] flags: bit 0 no_timing, bit 1 TSC -> ns by mult/shift, bit 2 by
 *       tsc_hz, bit 3 two CPUs (the PT split at its middle), bit 4 a
 *       context switch list (tid 1 then 2 on each CPU)
 *   [2] mtc_freq, [3] nom_freq, [4] cpu model (0 unknown, 1 6/94/3,
 *       2 6/85/4), [5] tsc shift, [6..7] tsc mult (u16)
 * Aborts when a session call fails.  Destroy it with
 * sptd_dec_session_destroy. */
struct sptd_dec_session *sptd_fuzz_rawpt_session(const uint8_t *data, size_t size, int decoder);

#endif /* SPTD_FUZZ_H */
