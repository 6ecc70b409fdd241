/* fuzz — one target per parser of untrusted input (issue 12, docs/RELIABILITY.md).
 *
 * Each target is a plain function over a byte string that drives a production parser
 * the way the pipeline does (the same calls, in the same order, with the same bounds),
 * so it links into two programs:
 *   - build/fuzz/fuzz-NAME: libFuzzer + ASan + UBSan, built by clang (`make fuzz`);
 *   - build/<kind>/unit-tests: tests/test_fuzz_corpus.c replays every seed and every
 *     saved crash input through it under gcc (and ASan + UBSan with `make SAN=1 test`),
 *     so CI needs no clang.
 * A target returns the parser's result: 0 accepted, or the negative error code, in
 * which case err_msg() must name the place (the replay test checks that with
 * fuzz_target.place). */
#ifndef SEISLIVE_FUZZ_H
#define SEISLIVE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int fuzz_wire(const uint8_t *data, size_t size);
int fuzz_segy(const uint8_t *data, size_t size);
int fuzz_su(const uint8_t *data, size_t size);
int fuzz_mseed(const uint8_t *data, size_t size);
int fuzz_config(const uint8_t *data, size_t size);
int fuzz_state(const uint8_t *data, size_t size);
int fuzz_nonlinloc(const uint8_t *data, size_t size);
int fuzz_stations(const uint8_t *data, size_t size);
int fuzz_sac(const uint8_t *data, size_t size);

struct fuzz_target {
    const char *name;                            /* corpus folder, binary fuzz-NAME */
    int (*fn)(const uint8_t *data, size_t size);
    size_t max_len;                              /* libFuzzer -max_len */
    const char *place;                           /* what every error message names */
};
/* Every target, ended by {NULL}. */
extern const struct fuzz_target fuzz_targets[];

/* Wire messages in one byte string: frames separated by FUZZ_FRAME_SEP (frame 0, the
 * JSON header, cannot hold a NUL, so the separator starts with one). */
#define FUZZ_FRAME_SEP "\0FRAME\0"
#define FUZZ_FRAME_SEP_LEN 7
/* Two files in one input (header + buffer, stations + corrections): split at the
 * first FUZZ_PART_SEP. */
#define FUZZ_PART_SEP "\0PART\0"
#define FUZZ_PART_SEP_LEN 6
/* The config target's files after the TOML (p1 .. p5 beside it, tests/fuzz/fuzz_config.c). */
#define FUZZ_CONFIG_FILES 5

/* A private folder (on tmpfs when /dev/shm exists) for parsers that only read paths;
 * created once per process, removed at exit. */
const char *fuzz_dir(void);
/* Write SIZE bytes of DATA to fuzz_dir()/NAME; 0 or -errno. */
int fuzz_write(const char *name, const void *data, size_t size);
/* Silence the log (once): a fuzzer runs millions of rejected inputs. */
void fuzz_quiet(void);

#endif
