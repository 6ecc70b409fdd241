/* seislive-gen — synthetic data for seislive: `shots` (surveys modeled with the
 * propagator) and `micro` (microseismic recordings).  See --help of each. */
#include <stdio.h>
#include <string.h>

#include "tools/gen.h"

static const char usage_text[] =
    "usage: seislive-gen COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  shots   a synthetic survey: velocity model, acquisition geometry, shot records\n"
    "          modeled with the propagator; SEG-Y files or a ZeroMQ stream at a pace\n"
    "  micro   a synthetic microseismic recording: receiver array, events, P and S,\n"
    "          noise; miniSEED files or a ZeroMQ stream of trace blocks in real time\n"
    "\n"
    "'seislive-gen COMMAND --help' lists the options of each.\n";

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "shots") == 0)
        return gen_shots(argc - 1, argv + 1);
    if (strcmp(argv[1], "micro") == 0)
        return gen_micro(argc - 1, argv + 1);
    fprintf(stderr, "seislive-gen: unknown command '%s'\n", argv[1]);
    fputs(usage_text, stderr);
    return 2;
}
