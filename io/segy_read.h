/* segy_read — SEG-Y (and Seismic Unix) shot records decoded from memory.
 *
 * The file source reads the bytes (io_uring into pinned memory); this file makes sense
 * of them: the 3600-byte file header (segyio's field readers), each 240-byte trace
 * header and the samples (segy_to_native: big-endian IBM or IEEE floats).  Traces are
 * grouped into shots by the field record number (bytes 9-12), or, where it is 0, by the
 * energy source point (17-20).  Coordinates follow the conventions of io/segy_write.h
 * (tools/segy_shots.h lists them): source/group X, Y (73-88) times the coordinate
 * scalar (71), source depth (49) and minus the group elevation (41) times the elevation
 * scalar (69); a scalar s > 0 multiplies, s < 0 divides by |s|, 0 means 1; a value
 * SEG-Y does not allow (other than 0, +-1, +-10, ..., +-10000) is taken as 1.
 * Seismic Unix files are the same traces without the file header, in the byte order
 * of the machine that wrote them: big-endian (XDR, what SU distributes and most
 * exchanged files are) or little-endian (written on x86); samples IEEE floats.  The
 * order is decided from the first trace header's plausibility (su_layout_detect). */
#ifndef SEISLIVE_SEGY_READ_H
#define SEISLIVE_SEGY_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SEGY_FILE_HEADER 3600
#define SEGY_TRACE_HEADER 240

struct segy_layout {
    bool su;             /* Seismic Unix: no file header */
    bool le;             /* little-endian (SU only; SEG-Y is always big-endian) */
    int format;          /* sample format code: 1 IBM, 5 IEEE (SU: 5) */
    int ns;              /* samples per trace */
    double dt;           /* s */
    size_t trace0;       /* byte offset of the first trace */
    size_t trace_bytes;  /* 240 + 4 ns */
    int per_ensemble;    /* SEG-Y byte 3213: traces per shot (ensemble); 0 = not given */
    char note[320];      /* SU: which byte order was taken and why (for the log) */
};

/* Byte order of a Seismic Unix file: decided from the file, or given. */
enum su_order { SU_ORDER_AUTO = 0, SU_ORDER_BIG = 1, SU_ORDER_LITTLE = 2 };

/* From the first bytes of a SEG-Y file (at least 3600; extended textual headers are
 * skipped).  PATH names the file in errors.  0 or -EINVAL with err_msg() naming the
 * byte (format code, sample count and interval are checked). */
int segy_layout_parse(const void *head, size_t len, const char *path, struct segy_layout *l);
/* From the first trace header of a Seismic Unix file whose first LEN bytes are HEAD
 * (the whole file, as far as the caller knows: su_layout_detect with FILE_SIZE = LEN). */
int su_layout_parse(const void *head, size_t len, const char *path, struct segy_layout *l);
/* The same for a file of FILE_SIZE bytes of which HEAD holds the first LEN.  ORDER
 * (enum su_order) forces a byte order; SU_ORDER_AUTO takes the order under which the
 * header is plausible: sample count and interval not 0, the file a whole number of
 * traces, the second trace header agreeing, the first samples ordinary floats.  A tie
 * takes big-endian.  l->note says which order and why. */
int su_layout_detect(const void *head, size_t len, uint64_t file_size, int order,
                     const char *path, struct segy_layout *l);

struct segy_trace_hdr {
    int64_t shot;        /* field record (or energy source point) */
    double src[3];       /* m, z down */
    float rec[3];        /* m, z down */
    int ns;              /* from the trace header; 0 = not set (use the file's) */
    int dt_us;           /* from the trace header; 0 = not set */
    int32_t scalar_xy;   /* coordinate scalar (byte 71) as stored */
    int32_t scalar_z;    /* elevation scalar (byte 69) as stored */
};

/* True for the coordinate / elevation scalars SEG-Y rev 1 allows. */
bool segy_scalar_valid(int32_t s);

/* The geometry and shot key of the trace whose header is TH. */
void segy_trace_header(const struct segy_layout *l, const void *th, struct segy_trace_hdr *t);

/* Decode the samples of the trace at TRACE (header first) into OUT (l->ns floats).
 * Returns 0, or -EINVAL when a sample is not finite (err_msg() names PATH, the trace
 * number and the byte offset). */
int segy_trace_samples(const struct segy_layout *l, const void *trace, float *out,
                       const char *path, long trace_no, size_t byte_off);

#ifdef __cplusplus
}
#endif

#endif
