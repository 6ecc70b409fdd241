/* file_source — units from files: SEG-Y / Seismic Unix shot files (grouped into shots
 * by trace headers, io/segy_read.h), given as files, globs or directories; optionally
 * watched for new files (a recorder writing one file after another).
 *
 * Reads go through io/uring_reader (io_uring fixed buffers, O_DIRECT where allowed,
 * pread fallback) into the pinned staging buffer and are decoded from there into the
 * slots; a slot is reserved only when a shot starts, so full slots stop the reads.
 * Files are taken in name order; a watched folder or glob is listed again every
 * 0.2 s, and a new file is read once its size has held still for [input] settle
 * seconds, or a file later in name order has appeared (the recorder has moved on).  A
 * file that grows after it was read is read again: its shots already stacked are
 * skipped by the job's ledger (same content), the one completed since is stacked.
 * A shot enters the image only when it is complete: one whose trace count disagrees
 * with the binary header (byte 3213), that the end of the file cuts (a partial last
 * trace), whose traces disagree about the source position, or that has no geometry
 * at all (every coordinate 0) is rejected with its reason, counted and logged.  A bad
 * file header rejects the file, a bad trace its shot; the other files and shots go on.
 * A shot id met again in another file (or later in the same one) is a warning naming
 * both places; the job's ledger decides (same content: skipped; different: error).
 *
 * miniSEED (trace blocks): each file is read whole (io_uring), decoded with
 * io/mseed_read (bad records are rejected, counted and logged there) and cut into
 * blocks of block_samples on the file's time span; files are expected in time order,
 * each continuing the previous one (a recorder's consecutive files). */
#ifndef SEISLIVE_FILE_SOURCE_H
#define SEISLIVE_FILE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "io/source.h"

#ifdef __cplusplus
extern "C" {
#endif

struct file_source_conf {
    char *const *paths;     /* files, globs, directories */
    size_t n_paths;
    bool watch;
    double watch_idle;      /* s without a new file before a watched input ends; 0 = never */
    double settle;          /* watch: s a file's size must hold still before it is read */
    int su_order;           /* enum su_order (io/segy_read.h): SU byte order, 0 = detect */
    int format;             /* enum data_format (conf/config.h); FMT_AUTO: by name */
    bool o_direct;
    int kind;               /* SLOT_SHOT (SEG-Y, SU) or SLOT_TRACES (miniSEED) */
    int block_samples;      /* SLOT_TRACES: samples per block */
};

struct file_source;

int file_source_open(struct file_source **out, const struct file_source_conf *c);
struct source file_source_as_source(struct file_source *f);

#ifdef __cplusplus
}
#endif

#endif
