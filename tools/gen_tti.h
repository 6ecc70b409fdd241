/* gen_tti — seislive-gen shots' --tti EPS,DELTA[,THETA[,PHI]] option (tools/gen_shots.c):
 * read into the survey model (tools/survey_model.h: one epsilon, delta and axis for every
 * rock but the salt), then checked as a whole once every option is known.  Both print
 * what is wrong on stderr, naming the option and the item. */
#ifndef SEISLIVE_GEN_TTI_H
#define SEISLIVE_GEN_TTI_H

#include "tools/survey_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ARG into M (m->tti set, angles in degrees); *DIP = 1 when THETA is "dip".  The ranges
 * are the propagator's (tti_model_check): EPS, DELTA finite and > -0.5, THETA -90..90,
 * PHI -360..360.  0, or -1 with a message. */
int gen_tti_parse(const char *arg, struct survey_model *m, int *dip);

/* After all options: with DIP, the axis normal to the --dip interface (theta = -dip_deg;
 * refused when there is none, or with MODEL_FILE, a --model file that has none); with
 * MODEL_FILE, no salt (every point anisotropic); the medium must be one the propagator
 * runs at the default tti_sigma that survey.toml keeps.  0, or 1 with a message. */
int gen_tti_check(struct survey_model *m, int dip, int model_file);

#ifdef __cplusplus
}
#endif

#endif
