/* backend — which device runs the kernels: the CPU reference or a CUDA GPU.
 *
 * `[runtime] device` is "auto", "cpu" or "cuda:N".  "auto" takes GPU 0 when one is
 * usable and otherwise the CPU, and logs which and why.  A GPU asked for by name
 * that is not there is an error, never a silent fallback.
 *
 * Every kernel family has a CPU reference (kernels/<name>.c) and a CUDA twin
 * (kernels/<name>.cu); callers pick through the device they were given. */
#ifndef SEISLIVE_BACKEND_H
#define SEISLIVE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum sl_device_kind { SL_DEVICE_CPU = 0, SL_DEVICE_CUDA = 1 };

struct sl_device {
    enum sl_device_kind kind;
    int index;              /* CUDA ordinal; -1 for the CPU */
    char name[128];         /* "CPU (2 threads)" or the GPU's name */
    int cc_major, cc_minor; /* compute capability (CUDA) */
    int sm_count;
    size_t mem_total;       /* bytes of device memory (CUDA) */
    size_t mem_free;
};

/* True when this binary has the CUDA backend compiled in. */
bool backend_cuda_compiled(void);

/* Number of usable CUDA devices.  0 (with the reason in WHY) when the binary has no
 * CUDA, there is no driver (cudaErrorInsufficientDriver on build machines) or no
 * device: those mean "no GPU here", not a failure. */
int backend_cuda_count(char *why, size_t why_len);

/* Resolve SPEC ("auto" | "cpu" | "cuda:N") into OUT and make it current for the
 * calling thread.  Returns 0, or -ENODEV / -EINVAL with err_msg() set. */
int backend_select(const char *spec, struct sl_device *out);

/* Parse SPEC without touching any device: returns 0 and sets KIND / INDEX
 * (INDEX -1 for cpu and auto, KIND CPU for auto), or -EINVAL. */
int backend_parse(const char *spec, bool *is_auto, enum sl_device_kind *kind, int *index);

/* Make DEV current for the calling thread (each worker thread calls it). */
int backend_bind(const struct sl_device *dev);

/* Refresh mem_free (CUDA); no-op on the CPU. */
int backend_mem_info(struct sl_device *dev);

/* Implemented in backend_cuda.cu (CUDA builds only). */
int cuda_device_count(char *why, size_t why_len);
int cuda_device_query(int index, struct sl_device *out);
int cuda_device_bind(int index);
int cuda_device_mem(int index, size_t *free_b, size_t *total_b);

#ifdef __cplusplus
}
#endif

#endif
