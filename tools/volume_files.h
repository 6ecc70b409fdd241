/* volume_files — a received 3D image written the ways seislive-sub offers:
 *   NAME.f32 + NAME.json   raw float32 (little-endian, x fastest, then y, z slowest) and
 *                          a JSON sidecar {"n","d","o","order":"x-fastest","dtype":"f32",...}
 *   NAME.segy              SEG-Y rev 1 (segyio): one trace per (x, y) column, samples
 *                          down in depth; IEEE floats (format 5); headers: inline
 *                          (189) = iy + 1, crossline (193) = ix + 1, CDP X/Y (181/185)
 *                          and source/group X/Y in cm (scalar -100 at 71); the sample
 *                          interval (bytes 3217 and 117) holds dz in mm, so tools that read
 *                          it as microseconds show metres as milliseconds.
 * Each file is written to a temporary name and renamed, so a reader never sees half. */
#ifndef SEISLIVE_VOLUME_FILES_H
#define SEISLIVE_VOLUME_FILES_H

#ifdef __cplusplus
extern "C" {
#endif

struct volume_meta {
    int n[3];
    double d[3];
    double o[3];
    long long seq;      /* publisher sequence number, -1 unknown */
    long long units;    /* shots stacked (images) or windows (coherence) */
    int final;
};

/* PATH_NOEXT.f32 and PATH_NOEXT.json. */
int volume_write_raw(const char *path_noext, const struct volume_meta *m, const float *v);
/* PATH (a .segy file). */
int volume_write_segy(const char *path, const struct volume_meta *m, const float *v);

#ifdef __cplusplus
}
#endif

#endif
