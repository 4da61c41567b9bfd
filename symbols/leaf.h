/* Leaf functions without call-frame information (hand-written assembly such as newlib's memcpy):
 * their Thumb code itself, decoded conservatively, may prove that they never move the stack pointer,
 * write LR, load PC or call. Then at every instruction of the function CFA = SP and the return
 * address is LR. Anything the decoder does not know proves nothing. */
#ifndef CMPROF_LEAF_H
#define CMPROF_LEAF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads n bytes of the image at addr; returns how many it could. */
typedef size_t (*leaf_reader)(void *ctx, uint32_t addr, uint8_t *buf, size_t n);

#define LEAF_MAX_BYTES 0x4000u /* a longer function is not analysed */

/* Whether every instruction of the Thumb function [lo, hi), decoded from lo to hi in order, is
 * known to leave SP and LR alone, to load no PC and to call nothing (BL, BLX, SVC). False for any
 * encoding outside the known list, a function longer than LEAF_MAX_BYTES, or unreadable bytes. */
bool leaf_keeps_frame(leaf_reader read, void *ctx, uint32_t lo, uint32_t hi);

/* Whether the Thumb function [lo, hi) has a branch (B, B.W, conditional or not) to target: a tail
 * call. False when its code cannot be read or decoded in step. */
bool leaf_branches_to(leaf_reader read, void *ctx, uint32_t lo, uint32_t hi, uint32_t target);

/* The target of the BL ending just before the return address next (even); false for anything else. */
bool leaf_bl_target(leaf_reader read, void *ctx, uint32_t next, uint32_t *target);

/* Whether the halfword before next is BLX Rm (a call through a register). */
bool leaf_blx_before(leaf_reader read, void *ctx, uint32_t next);

#endif
