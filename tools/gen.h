/* gen — the subcommands of seislive-gen (tools/gen_main.c dispatches):
 *   shots  synthetic surveys modeled with the propagator (tools/gen_shots.c)
 *   micro  synthetic microseismic recordings (tools/gen_micro.c)
 * Each returns the process exit status (0 ok, 1 failed, 2 bad usage). */
#ifndef SEISLIVE_GEN_H
#define SEISLIVE_GEN_H

#ifdef __cplusplus
extern "C" {
#endif

int gen_shots(int argc, char **argv);
int gen_micro(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
