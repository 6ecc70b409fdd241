/* mkdirs — create a folder and its missing parents (mkdir -p) for the tools' -o DIR. */
#ifndef SEISLIVE_MKDIRS_H
#define SEISLIVE_MKDIRS_H

#ifdef __cplusplus
extern "C" {
#endif

/* 0, or -errno with err_msg() naming the folder that could not be made. */
int mkdirs(const char *path);

#ifdef __cplusplus
}
#endif

#endif
