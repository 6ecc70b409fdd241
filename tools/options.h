/* options — values of the tools' command-line options. */
#ifndef SEISLIVE_OPTIONS_H
#define SEISLIVE_OPTIONS_H

#ifdef __cplusplus
extern "C" {
#endif

/* A comma-separated list of MIN to MAX numbers ("10,20.5,3e2") into V: the count, or
 * -1 when S is not such a list (a bad number, an empty item, too few or too many). */
int options_doubles(const char *s, double *v, int min, int max);
/* The same for whole numbers ("64,128,160") into V. */
int options_ints(const char *s, int *v, int min, int max);

#ifdef __cplusplus
}
#endif

#endif
