/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — composition methods (compose.h): the schemes, the composite method, and the compositions
 * the registry offers by name.
 *
 * A composite step calls its base's step once per stage with the sub-step g_i h, through the stepper
 * it was given. What the stepper core needs for that (stepper.c, method_internal.h):
 *  - the base runs with s->method = base (its step and workspace functions read s->method->cls->data),
 *    restored before returning, so that messages and the rollback name the composite;
 *  - between stages the base's cache follows the rule of lf_stepper_step: valid after a stage iff
 *    that stage set it (cache_valid = cache_set, then cache_set = 0), so the torque cached by one
 *    stage is used by the next (one torque evaluation per stage for vlv, lgvi, the splittings) and a
 *    stage that leaves none makes the next one evaluate it; the composite's own cache_set is the last
 *    stage's. A failing stage fails the step: the stepper restores y and the cache from before it;
 *  - the time: generic (lie_ode) bases read s->t, which runs through t + (g_1 + .. + g_{i-1}) h and
 *    is restored exactly (with its Kahan compensation) before the stepper adds h;
 *  - workspace and cache are the base's (no allocation in a step).
 * Splitting bases (dlm, no_squish, split_exact) are composed by lf_split_run instead, which merges the
 * adjacent flows of the same part across stages (one kick, not two, at each stage boundary) and runs
 * the compositions of a first-order method and its adjoint (blanes_moan4) and the Runge–Kutta–Nystrom
 * splittings (rkn4, rkn6). */
#include "method/compose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "method/method_internal.h"
#include "method/splitting_internal.h"

/* ---------------------------------------------------------------- the schemes */
/* 1/(2 - 2^(1/3)), -2^(1/3)/(2 - 2^(1/3));  1/(4 - 4^(1/3)), 1 - 4/(4 - 4^(1/3)) (30 digits, mpmath) */
#define TJ1 1.35120719195965763405
#define TJ2 -1.7024143839193152681
#define SZ1 0.414490771794375737142
#define SZ3 -0.657963087177502948569
/* Blanes & Moan (2002), S6: the order-4 splitting with 6 stages (their Table 2: a1 = 0.0792036964311957,
 * a2 = 0.353172906049774, a3 = -0.0420650803577195, a4 = 1 - 2(a1 + a2 + a3); b1 = 0.209515106613362,
 * b2 = -0.143851773179818, b3 = 1/2 - b1 - b2) for X = A + B as e^{a1 A} e^{b1 B} e^{a2 A} ... e^{a4 A} ...
 * e^{b1 B} e^{a1 A}. Written as a composition of Phi = "A, then B" and its adjoint,
 * Phi*_{c12 h} o ... o Phi*_{c2 h} o Phi_{c1 h}: c1 = a1, c1 + c2 = b1, c2 + c3 = a2, ... (12 maps,
 * palindromic; computed with mpmath), which has order 4 for any first-order Phi and so for the
 * splittings into 2 (split_exact) or 4 (dlm, no_squish) parts. */
#define BM1 0.0792036964311957
#define BM2 0.1303114101821663
#define BM3 0.2228614958676077
#define BM4 -0.3667132690474257
#define BM5 0.3246481886897062
#define BM6 0.1096884778767498
/* Blanes & Moan (2002), Table 3: SRKN_6^b (order 4) b1 = 0.0829844064174052, a1 = 0.245298957184271,
 * b2 = 0.396309801498368, a2 = 0.604872665711080, b3 = -0.0390563049223486, a3 = 1/2 - (a1 + a2),
 * b4 = 1 - 2 (b1 + b2 + b3); SRKN_11^b (order 6) b1..b5 = 0.0414649985182624, 0.198128671918067,
 * -0.0400061921041533, 0.0752539843015807, -0.0115113874206879, b6 = 1/2 - (b1 + ... + b5);
 * a1..a5 = 0.123229775946271, 0.290553797799558, -0.127049212625417, -0.246331761062075,
 * 0.357208872795928, a6 = 1 - 2 (a1 + ... + a5): kick b1, flow a1, kick b2, ..., kick b1. */
#define R4B1 0.0829844064174052
#define R4A1 0.245298957184271
#define R4B2 0.396309801498368
#define R4A2 0.604872665711080
#define R4B3 -0.0390563049223486
#define R4A3 (0.5 - (R4A1 + R4A2))
#define R4B4 (1 - 2 * (R4B1 + R4B2 + R4B3))
#define R6B1 0.0414649985182624
#define R6B2 0.198128671918067
#define R6B3 -0.0400061921041533
#define R6B4 0.0752539843015807
#define R6B5 -0.0115113874206879
#define R6B6 (0.5 - (R6B1 + R6B2 + R6B3 + R6B4 + R6B5))
#define R6A1 0.123229775946271
#define R6A2 0.290553797799558
#define R6A3 -0.127049212625417
#define R6A4 -0.246331761062075
#define R6A5 0.357208872795928
#define R6A6 (1 - 2 * (R6A1 + R6A2 + R6A3 + R6A4 + R6A5))
/* Kahan & Li (1997), as printed in Hairer, Lubich & Wanner, GNI §V.3.2 */
#define KL6_1 0.39216144400731413927925056
#define KL6_2 0.33259913678935943859974864
#define KL6_3 -0.70624617255763935980996482
#define KL6_4 0.08221359629355080023149045
#define KL6_5 0.79854399093482996339895035
#define KL8_1 0.13020248308889008087881763
#define KL8_2 0.56116298177510838456196441
#define KL8_3 -0.38947496264484728640807860
#define KL8_4 0.15884190655515560089621075
#define KL8_5 -0.39590389413323757733623154
#define KL8_6 0.18453964097831570709183254
#define KL8_7 0.25837438768632204729397911
#define KL8_8 0.29501172360931029887096624
#define KL8_9 -0.60550853383003451169892108

/* Blanes & Moan (2002), Table 2, S10: the order-6 splitting with 10 stages for X = A + B,
 * e^{a1 A} e^{b1 B} ... e^{a6 A} ... e^{b1 B} e^{a1 A} with a1..a5 = 0.0502627644003922,
 * 0.413514300428344, 0.0450798897943977, -0.188054853819569, 0.541960678450780, a6 = 1 - 2(a1 + .. + a5),
 * b1..b4 = 0.148816447901042, -0.132385865767784, 0.0673076046921850, 0.432666402578175,
 * b5 = 1/2 - (b1 + .. + b4); as Phi / Phi* maps like S6 above (c1 = a1, c1 + c2 = b1, ...: 20 maps,
 * palindromic; mpmath, 40 digits; the same construction gives S6's BM1..BM6 above digit for digit). */
#define BM6_1 0.0502627644003922
#define BM6_2 0.0985536835006498
#define BM6_3 0.3149606169276942
#define BM6_4 -0.4473464826954782
#define BM6_5 0.4924263724898759
#define BM6_6 -0.4251187677976909
#define BM6_7 0.2370639139781219
#define BM6_8 0.1956024886000531
#define BM6_9 0.3463581898507269
#define BM6_10 -0.3627627792543449
/* Blanes & Moan (2002), Table 3, SRKN_14^a (order 6, 14 torques): flow a1, kick b1, flow a2, ...,
 * kick b1, flow a1 with a1..a7 = 0.0378593198406116, 0.102635633102435, -0.0258678882665587,
 * 0.314241403071447, -0.130144459517415, 0.106417700369543, -0.00879424312851058,
 * a8 = 1 - 2 (a1 + .. + a7); b1..b6 = 0.0917191526244617, 0.183983170005006, -0.0565343658328883,
 * 0.00491468877471285, 0.143761127168358, 0.328567693746804, b7 = 1/2 - (b1 + .. + b6); in the
 * form kick, flow, kick, ... with kicks of 0 at both ends. */
#define R6A_A1 0.0378593198406116
#define R6A_A2 0.102635633102435
#define R6A_A3 -0.0258678882665587
#define R6A_A4 0.314241403071447
#define R6A_A5 -0.130144459517415
#define R6A_A6 0.106417700369543
#define R6A_A7 -0.00879424312851058
#define R6A_A8 (1 - 2 * (R6A_A1 + R6A_A2 + R6A_A3 + R6A_A4 + R6A_A5 + R6A_A6 + R6A_A7))
#define R6A_B1 0.0917191526244617
#define R6A_B2 0.183983170005006
#define R6A_B3 -0.0565343658328883
#define R6A_B4 0.00491468877471285
#define R6A_B5 0.143761127168358
#define R6A_B6 0.328567693746804
#define R6A_B7 (0.5 - (R6A_B1 + R6A_B2 + R6A_B3 + R6A_B4 + R6A_B5 + R6A_B6))
/* McLachlan, "On the numerical integration of ordinary differential equations by symmetric
 * composition methods", SIAM J. Sci. Comput. 16 (1995) 151: the symmetric composition of order 8 with
 * 15 stages (his error coefficient 0.14); g1..g8, then g7..g1 (26 digits; sum g = 1 and
 * sum g^3 = sum g^5 = sum g^7 = 0 to 2e-26, mpmath) */
#define ML8_1 0.74167036435061295344822780
#define ML8_2 -0.40910082580003159399730010
#define ML8_3 0.19075471029623837995387626
#define ML8_4 -0.57386247111608226665638773
#define ML8_5 0.29906418130365592384446354
#define ML8_6 0.33462491824529818378495798
#define ML8_7 0.31529309239676659663205666
#define ML8_8 -0.79688793935291635401978884

/* Processed compositions (Blanes, Casas & Ros, SIAM J. Sci. Comput. 21 (1999) 711): kernel a_1..a_mid
 * (palindromic) and processor p_1..p_k, derived for lieflow (tools/processed/README.md: the published
 * tables were not at hand) to 45 digits, printed to 24; tools/processed/check_shipped_coefficients.py recomputes the
 * residuals of these digits (1.2e-23), test_compose.c measures the effective orders 6 and 8. */
#define PR6_A1 0.431536873432457497101024
#define PR6_A2 0.430814570569786998370505
#define PR6_A3 -0.834161353671636100611274
#define PR6_A4 0.943619819338783210279487
#define PR6_P1 0.154051919964961184368490
#define PR6_P2 0.104505894995483373652117
#define PR6_P3 -0.359029725939573394718046
#define PR6_P4 -0.171227427078014490437725
#define PR6_P5 0.359605130060070129047025
#define PR8_A1 0.289354318126985995363808
#define PR8_A2 0.773259981733696684337399
#define PR8_A3 -0.610269206533014705515396
#define PR8_A4 0.249038749957091196694066
#define PR8_A5 0.212889811269204592538731
#define PR8_A6 -0.828547309107927526837219
#define PR8_P1 -0.539825116806797512211327
#define PR8_P2 0.011930921570564170712731
#define PR8_P3 0.563040506979716117652920
#define PR8_P4 0.536495748102781144419773
#define PR8_P5 -0.328387983311454058915540
#define PR8_P6 -0.223393419570854479105253
#define PR8_P7 0.199332630204416574824845
#define PR8_P8 0.336109944517059151019215
#define PR8_P9 -0.560732366263511674899009
#define PR8_P10 0.111217194768459859885931

/* A processed Runge–Kutta–Nystrom kernel of effective order 6 (7 torques per step: kick b1, flow a1, ...,
 * palindromic) and its 31-entry processor in the same kick/flow form, derived for lieflow after Blanes,
 * Casas & Ros, Appl. Numer. Math. 39 (2001) 245 (tools/processed/rkn/README.md; check_shipped_coefficients.py there recomputes the
 * residuals of these digits: 1.5e-24) */
#define PRK_K1 0.063800007092285923808346
#define PRK_K2 -0.204296202975912111199363
#define PRK_K3 -0.037909505052018425946832
#define PRK_K4 0.366150777442058095179078
#define PRK_K5 0.251238255912400160189523
#define PRK_K6 0.227470877285220252073116
#define PRK_K7 0.222871242047332341948962
#define PRK_K8 0.221349096497267527894337
#define PRK_P1 0.308748617083026055019821
#define PRK_P2 -0.021150962014436128053064
#define PRK_P3 -0.503100932017315879930481
#define PRK_P4 -0.066867297152824031669501
#define PRK_P5 -0.000779891492470504432774
#define PRK_P6 -0.277752325001971681341087
#define PRK_P7 0.248982323408481417954603
#define PRK_P8 0.147330124417891935270572
#define PRK_P9 0.053452678766993798247981
#define PRK_P10 0.079708779889595724773869
#define PRK_P11 0.433370777345173708487032
#define PRK_P12 -0.331176818794457135983649
#define PRK_P13 -0.001539954858695709387615
#define PRK_P14 0.335537090949186249899676
#define PRK_P15 -0.424479885347476289491157
#define PRK_P16 -0.201635969682891609217572
#define PRK_P17 -0.357007105978805159487215
#define PRK_P18 0.190456799403022246565855
#define PRK_P19 -0.153265502786274922645583
#define PRK_P20 0.001567501434296965739524
#define PRK_P21 0.358346972552989334523193
#define PRK_P22 0.161681231256658228496207
#define PRK_P23 -0.125787007647200638226791
#define PRK_P24 0.078678241992302118722345
#define PRK_P25 -0.038864719667782136434278
#define PRK_P26 0.023941299001975102467350
#define PRK_P27 0.152000237173219907454628
#define PRK_P28 -0.222535805976895775836616
#define PRK_P29 -0.054523256042306987223102
#define PRK_P30 -0.095580962217871189514088
#define PRK_P31 -0.093352422987974974108439

/* the processor of a scheme without one */
#define UNPROCESSED 0, {0}

static const lf_compose_scheme schemes[] = {
    {"triple_jump4", "triple jump, order 4, 3 stages", "Yoshida 1990; Creutz & Gocksch 1989", 4, LF_COMPOSE_SYMMETRIC, 3,
     {TJ1, TJ2, TJ1}, UNPROCESSED},
    {"suzuki4", "Suzuki's fractal, order 4, 5 stages", "Suzuki 1990", 4, LF_COMPOSE_SYMMETRIC, 5, {SZ1, SZ1, SZ3, SZ1, SZ1}, UNPROCESSED},
    {"blanes_moan4", "Blanes & Moan's optimized order-4 splitting S6 (6 stages)",
     "Blanes & Moan, J. Comput. Appl. Math. 142 (2002) 313, Table 2", 4, LF_COMPOSE_ADJOINT, 12,
     {BM1, BM2, BM3, BM4, BM5, BM6, BM6, BM5, BM4, BM3, BM2, BM1}, UNPROCESSED},
    {"rkn4", "Blanes & Moan's Runge-Kutta-Nystrom splitting SRKN_6^b, order 4 (6 torques)",
     "Blanes & Moan, J. Comput. Appl. Math. 142 (2002) 313, Table 3", 4, LF_COMPOSE_RKN, 13,
     {R4B1, R4A1, R4B2, R4A2, R4B3, R4A3, R4B4, R4A3, R4B3, R4A2, R4B2, R4A1, R4B1}, UNPROCESSED},
    {"rkn6", "Blanes & Moan's Runge-Kutta-Nystrom splitting SRKN_11^b, order 6 (11 torques)",
     "Blanes & Moan, J. Comput. Appl. Math. 142 (2002) 313, Table 3", 6, LF_COMPOSE_RKN, 23,
     {R6B1, R6A1, R6B2, R6A2, R6B3, R6A3, R6B4, R6A4, R6B5, R6A5, R6B6, R6A6, R6B6, R6A5, R6B5, R6A4, R6B4, R6A3,
      R6B3, R6A2, R6B2, R6A1, R6B1}, UNPROCESSED},
    {"blanes_moan6", "Blanes & Moan's optimized order-6 splitting S10 (10 stages)",
     "Blanes & Moan, J. Comput. Appl. Math. 142 (2002) 313, Table 2", 6, LF_COMPOSE_ADJOINT, 20,
     {BM6_1, BM6_2, BM6_3, BM6_4, BM6_5, BM6_6, BM6_7, BM6_8, BM6_9, BM6_10, BM6_10, BM6_9, BM6_8, BM6_7, BM6_6, BM6_5,
      BM6_4, BM6_3, BM6_2, BM6_1}, UNPROCESSED},
    {"rkn6a", "Blanes & Moan's Runge-Kutta-Nystrom splitting SRKN_14^a, order 6 (14 torques)",
     "Blanes & Moan, J. Comput. Appl. Math. 142 (2002) 313, Table 3", 6, LF_COMPOSE_RKN, 31,
     {0, R6A_A1, R6A_B1, R6A_A2, R6A_B2, R6A_A3, R6A_B3, R6A_A4, R6A_B4, R6A_A5, R6A_B5, R6A_A6, R6A_B6, R6A_A7, R6A_B7,
      R6A_A8, R6A_B7, R6A_A7, R6A_B6, R6A_A6, R6A_B5, R6A_A5, R6A_B4, R6A_A4, R6A_B3, R6A_A3, R6A_B2, R6A_A2, R6A_B1,
      R6A_A1, 0}, UNPROCESSED},
    {"kahan_li6", "Kahan & Li s9odr6a, order 6, 9 stages", "Kahan & Li, Math. Comp. 66 (1997) 1089", 6, LF_COMPOSE_SYMMETRIC, 9,
     {KL6_1, KL6_2, KL6_3, KL6_4, KL6_5, KL6_4, KL6_3, KL6_2, KL6_1}, UNPROCESSED},
    {"kahan_li8", "Kahan & Li s17odr8a, order 8, 17 stages", "Kahan & Li, Math. Comp. 66 (1997) 1089", 8, LF_COMPOSE_SYMMETRIC, 17,
     {KL8_1, KL8_2, KL8_3, KL8_4, KL8_5, KL8_6, KL8_7, KL8_8, KL8_9, KL8_8, KL8_7, KL8_6, KL8_5, KL8_4, KL8_3, KL8_2,
      KL8_1}, UNPROCESSED},
    {"mclachlan8", "McLachlan's symmetric composition of order 8, 15 stages",
     "McLachlan, SIAM J. Sci. Comput. 16 (1995) 151", 8, LF_COMPOSE_SYMMETRIC, 15,
     {ML8_1, ML8_2, ML8_3, ML8_4, ML8_5, ML8_6, ML8_7, ML8_8, ML8_7, ML8_6, ML8_5, ML8_4, ML8_3, ML8_2, ML8_1}, UNPROCESSED},
    {"processed6", "processed composition of effective order 6, 7 stages (processor: 5 stages)",
     "kernel and processor derived for lieflow after Blanes, Casas & Ros, SIAM J. Sci. Comput. 21 (1999) 711", 6,
     LF_COMPOSE_SYMMETRIC, 7, {PR6_A1, PR6_A2, PR6_A3, PR6_A4, PR6_A3, PR6_A2, PR6_A1}, 5,
     {PR6_P1, PR6_P2, PR6_P3, PR6_P4, PR6_P5}},
    {"processed8", "processed composition of effective order 8, 11 stages (processor: 10 stages)",
     "kernel and processor derived for lieflow after Blanes, Casas & Ros, SIAM J. Sci. Comput. 21 (1999) 711", 8,
     LF_COMPOSE_SYMMETRIC, 11, {PR8_A1, PR8_A2, PR8_A3, PR8_A4, PR8_A5, PR8_A6, PR8_A5, PR8_A4, PR8_A3, PR8_A2, PR8_A1},
     10, {PR8_P1, PR8_P2, PR8_P3, PR8_P4, PR8_P5, PR8_P6, PR8_P7, PR8_P8, PR8_P9, PR8_P10}},
    {"rkn6p", "processed Runge-Kutta-Nystrom splitting of effective order 6 (7 torques; processor: 31 sub-steps)",
     "kernel and processor derived for lieflow after Blanes, Casas & Ros, Appl. Numer. Math. 39 (2001) 245", 6,
     LF_COMPOSE_RKN, 15,
     {PRK_K1, PRK_K2, PRK_K3, PRK_K4, PRK_K5, PRK_K6, PRK_K7, PRK_K8, PRK_K7, PRK_K6, PRK_K5, PRK_K4, PRK_K3, PRK_K2,
      PRK_K1},
     31,
     {PRK_P1, PRK_P2, PRK_P3, PRK_P4, PRK_P5, PRK_P6, PRK_P7, PRK_P8, PRK_P9, PRK_P10,
      PRK_P11, PRK_P12, PRK_P13, PRK_P14, PRK_P15, PRK_P16, PRK_P17, PRK_P18, PRK_P19, PRK_P20,
      PRK_P21, PRK_P22, PRK_P23, PRK_P24, PRK_P25, PRK_P26, PRK_P27, PRK_P28, PRK_P29, PRK_P30,
      PRK_P31}},
};
/* the schemes by name, for the COMPOSED entries of methods.def */
enum { SCHEME_triple_jump4, SCHEME_suzuki4, SCHEME_blanes_moan4, SCHEME_rkn4, SCHEME_rkn6, SCHEME_blanes_moan6,
       SCHEME_rkn6a, SCHEME_kahan_li6, SCHEME_kahan_li8, SCHEME_mclachlan8,
       SCHEME_processed6, SCHEME_processed8, SCHEME_rkn6p };

int lf_compose_scheme_count(void) { return (int)(sizeof schemes / sizeof schemes[0]); }
const lf_compose_scheme *lf_compose_scheme_at(int i)
{
    return i >= 0 && i < lf_compose_scheme_count() ? &schemes[i] : NULL;
}
static const lf_compose_scheme *scheme_find(const char *name)
{
    for (int i = 0; name && i < lf_compose_scheme_count(); i++)
        if (strcmp(schemes[i].name, name) == 0) return &schemes[i];
    return NULL;
}

/* ---------------------------------------------------------------- the composite */
typedef struct {
    const lf_method *base;
    const lf_compose_scheme *scheme;
} compose_data;

/* the stepper as the base sees it (for its workspace and cache sizes) */
static lf_stepper as_base(const lf_stepper *s)
{
    lf_stepper b = *s;
    b.method = ((const compose_data *)s->method->cls->data)->base;
    return b;
}

static size_t compose_work(const lf_stepper *s)
{
    const lf_stepper b = as_base(s);
    return b.method->cls->work_doubles ? b.method->cls->work_doubles(&b) : 0;
}

static size_t compose_cache(const lf_stepper *s)
{
    const lf_stepper b = as_base(s);
    return b.method->cls->cache_doubles ? b.method->cls->cache_doubles(&b) : 3 * (size_t)s->nb;
}

static int compose_accepts(const lf_method *m, const lf_system *sys, lf_error *err)
{
    const compose_data *d = m->cls->data;
    const lf_form_rigid *rigid = lf_system_rigid(sys);
    if (d->scheme->np > 0 && rigid && rigid->forcing)
        return lf_error_set(err, LF_EINVAL,
                            "method %s is processed (its processor assumes an autonomous conservative system) "
                            "and does not take a forcing (the system has the forcing %s); the compositions "
                            "without a processor do",
                            m->info.name, rigid->forcing_name);
    if (d->scheme->form == LF_COMPOSE_RKN && rigid && (rigid->forcing_depends & LF_FORCING_VELOCITY))
        return lf_error_set(err, LF_EINVAL,
                            "method %s is a Runge-Kutta-Nystrom splitting, whose order conditions need kicks "
                            "that do not depend on the velocities; the forcing %s does (it would run at order "
                            "2): use dlm_s4, dlm_s6 or a symmetric composition of split_exact (triple_jump4, "
                            "suzuki4, kahan_li6, ...)",
                            m->info.name, rigid->forcing_name);
    return lf_method_accepts(d->base, sys, err);
}

/* The composition of d's base with coefficients c[0..n-1] in d's form over h (c[0] first). */
static int run(lf_stepper *s, const compose_data *d, const double *c, int n, double h)
{
    const lf_method *self = s->method;
    const lf_split_method *split = lf_split_of(d->base);
    if (split) return lf_split_run(s, split, c, n, d->scheme->form, h);
    const double t0 = s->t, tc0 = s->t_comp;
    double elapsed = 0;
    int rc = LF_OK;
    s->method = d->base;
    for (int i = 0; i < n && rc == LF_OK; i++) {
        if (i > 0) { /* the stepper's rule between two steps (lf_stepper_step) */
            s->cache_valid = s->cache_set;
            s->cache_set = 0;
        }
        const double hi = c[i] * h;
        s->t = t0 + elapsed;
        rc = d->base->cls->step(s, hi);
        elapsed += hi;
    }
    s->method = self;
    s->t = t0;
    s->t_comp = tc0;
    return rc;
}

static int compose_step(lf_stepper *s, double h)
{
    const compose_data *d = s->method->cls->data;
    return run(s, d, d->scheme->c, d->scheme->n, h);
}

/* The processor P_h of a processed scheme, or P_h^{-1}: its maps reversed, each inverted (a symmetric
 * base: S_{-c h} = S_{c h}^{-1}; the kicks and flows of the RKN form: exact flows). The time runs
 * through the stages from s->t and is restored: a processed method is for autonomous systems. */
static int compose_process(lf_stepper *s, double h, int inverse)
{
    const compose_data *d = s->method->cls->data;
    const lf_compose_scheme *sc = d->scheme;
    double c[32];
    for (int i = 0; i < sc->np; i++) c[i] = inverse ? -sc->p[sc->np - 1 - i] : sc->p[i];
    return run(s, d, c, sc->np, h);
}

const lf_method *lf_compose_base(const lf_method *m)
{
    return m && m->cls->step == compose_step ? ((const compose_data *)m->cls->data)->base : NULL;
}

const lf_compose_scheme *lf_compose_scheme_of(const lf_method *m)
{
    return m && m->cls->step == compose_step ? ((const compose_data *)m->cls->data)->scheme : NULL;
}

typedef struct {
    lf_method m; /* first: lf_method_free frees the whole block */
    lf_method_class cls;
    compose_data d;
    char name[96], title[192], reference[256];
} user_compose;

lf_method *lf_compose_method_new(const lf_method *base, const char *scheme, lf_error *err)
{
    if (!base) {
        lf_error_set(err, LF_EINVAL, "compose: a base method is required");
        return NULL;
    }
    const lf_method_info *b = &base->info;
    const lf_compose_scheme *sc = scheme_find(scheme);
    if (!sc) {
        char known[256] = "";
        for (int i = 0; i < lf_compose_scheme_count(); i++) {
            strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
            strncat(known, schemes[i].name, sizeof known - strlen(known) - 1);
        }
        lf_error_set(err, LF_EINVAL, "compose: unknown scheme '%s' (known: %s)", scheme ? scheme : "(null)", known);
        return NULL;
    }
    if (b->adaptive) {
        lf_error_set(err, LF_EINVAL, "compose: %s chooses its own step sizes (adaptive); a composition needs a "
                                     "fixed-step symmetric method", b->name);
        return NULL;
    }
    if (!b->symmetric) {
        lf_error_set(err, LF_EINVAL, "compose: %s is not symmetric (a step h then -h does not return to the start); "
                                     "composition schemes raise the order of symmetric methods only", b->name);
        return NULL;
    }
    if (sc->form == LF_COMPOSE_RKN && !lf_split_rkn_ok(lf_split_of(base))) {
        lf_error_set(err, LF_EINVAL, "compose: scheme %s is a Runge-Kutta-Nystrom splitting into kicks and exact "
                                     "free flows, which only split_exact is, not %s", sc->name, b->name);
        return NULL;
    }
    if (sc->form != LF_COMPOSE_SYMMETRIC && !lf_split_of(base)) {
        lf_error_set(err, LF_EINVAL, "compose: scheme %s composes a first-order method and its adjoint, which only "
                                     "the splitting methods (dlm, no_squish, split_exact) expose, not %s; "
                                     "for any symmetric method use triple_jump4, suzuki4, kahan_li6 or kahan_li8",
                     sc->name, b->name);
        return NULL;
    }
    user_compose *u = calloc(1, sizeof *u);
    if (!u) {
        lf_error_set(err, LF_ENOMEM, "compose: out of memory");
        return NULL;
    }
    snprintf(u->name, sizeof u->name, "%s_%s", b->name, sc->name);
    snprintf(u->title, sizeof u->title, "%s composed by %s", b->name, sc->title);
    snprintf(u->reference, sizeof u->reference, "%s; base: %s", sc->reference, b->reference ? b->reference : "");
    u->d = (compose_data){base, sc};
    u->m.info = *b;
    u->m.info.name = u->name;
    u->m.info.title = u->title;
    u->m.info.reference = u->reference;
    u->m.info.family = "composition";
    u->m.info.order = b->order > sc->order ? b->order : sc->order;
    u->m.rigid = base->rigid; /* the base's claims hold for its compositions */
    u->cls = (lf_method_class){.work_doubles = compose_work,
                               .cache_doubles = compose_cache,
                               .accepts = compose_accepts,
                               .step = compose_step,
                               .data = &u->d,
                               .process = sc->np > 0 ? compose_process : NULL};
    u->m.cls = &u->cls;
    u->m.allocated = 1;
    return &u->m;
}

/* ---------------------------------------------------------------- registered compositions */
/* The COMPOSED entries of methods.def (chosen by measurement: examples/work_precision.lua,
 * docs/work_precision.md): their base and scheme; test_compose.c checks their metadata against what
 * lf_compose_method_new derives. */
#define METHOD_ID(id) extern const lf_method lf_method_##id;
#include "method/methods.def"

/* a registered composition's process function: NULL unless its scheme is processed (np > 0; a constant
 * expression for the records below, which schemes[].np is not in C) */
#define PROCESS_triple_jump4 NULL
#define PROCESS_suzuki4 NULL
#define PROCESS_blanes_moan4 NULL
#define PROCESS_rkn4 NULL
#define PROCESS_rkn6 NULL
#define PROCESS_blanes_moan6 NULL
#define PROCESS_rkn6a NULL
#define PROCESS_kahan_li6 NULL
#define PROCESS_kahan_li8 NULL
#define PROCESS_mclachlan8 NULL
#define PROCESS_processed6 compose_process
#define PROCESS_processed8 compose_process
#define PROCESS_rkn6p compose_process
#define COMPOSED(id, title, ref, order, props, base, scheme)                                                           \
    const lf_method_class lf_class_##id = {.work_doubles = compose_work,                                               \
                                           .cache_doubles = compose_cache,                                             \
                                           .accepts = compose_accepts,                                                 \
                                           .step = compose_step,                                                       \
                                           .data =                                                                     \
                                               &(const compose_data){&lf_method_##base, &schemes[SCHEME_##scheme]},    \
                                           .process = PROCESS_##scheme};
#include "method/methods.def"
