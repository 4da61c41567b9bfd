/* A line table whose one sequence lists its rows out of address order (as hand-written or
 * post-processed DWARF may): readers must sort them, as binutils does, before searching. */
    .syntax unified
    .thumb
    .text
    .global f
    .type f, %function
    .thumb_func
f:
code: /* (a plain label: its address has no Thumb bit) */
    nop
    nop
    nop
    nop
    nop
    nop
    nop
    nop
    .size f, . - f
    .global _start
    .type _start, %function
    .thumb_func
_start:
    b _start
    .size _start, . - _start

    .section .debug_abbrev, "", %progbits
abbrevs:
    .uleb128 1                  /* compile unit, with children */
    .uleb128 0x11
    .byte 1
    .uleb128 0x03, 0x08         /* DW_AT_name, DW_FORM_string */
    .uleb128 0x10, 0x17         /* DW_AT_stmt_list, DW_FORM_sec_offset */
    .uleb128 0x11, 0x01         /* DW_AT_low_pc, DW_FORM_addr */
    .uleb128 0x12, 0x06         /* DW_AT_high_pc, DW_FORM_data4 (a length) */
    .byte 0, 0
    .uleb128 2                  /* subprogram, no children */
    .uleb128 0x2e
    .byte 0
    .uleb128 0x03, 0x08
    .uleb128 0x11, 0x01
    .uleb128 0x12, 0x06
    .byte 0, 0
    .byte 0

    .section .debug_info, "", %progbits
    .4byte info_end - info_start
info_start:
    .2byte 4                    /* DWARF 4 */
    .4byte abbrevs
    .byte 4                     /* address size */
    .uleb128 1
    .asciz "unordered.c"
    .4byte lines
    .4byte code
    .4byte 16
    .uleb128 2
    .asciz "f"
    .4byte code
    .4byte 16
    .byte 0                     /* end of the unit's children */
info_end:

    .section .debug_line, "", %progbits
lines:
    .4byte lines_end - lines_start
lines_start:
    .2byte 4
    .4byte header_end - header_start
header_start:
    .byte 2                     /* minimum instruction length */
    .byte 1                     /* maximum operations per instruction */
    .byte 1                     /* default is_stmt */
    .byte -5                    /* line base */
    .byte 14                    /* line range */
    .byte 13                    /* opcode base */
    .byte 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 /* standard opcode lengths */
    .byte 0                     /* no include directories */
    .asciz "unordered.c"
    .uleb128 0, 0, 0
    .byte 0                     /* end of file names */
header_end:
    .macro row addr, line_delta
    .byte 0, 5, 2               /* DW_LNE_set_address */
    .4byte \addr
    .byte 3                     /* DW_LNS_advance_line */
    .sleb128 \line_delta
    .byte 1                     /* DW_LNS_copy */
    .endm
    row code + 8, 19               /* line 20 */
    row code, -10                  /* line 10 */
    row code + 4, 1                /* line 11 */
    row code + 12, 19              /* line 30 */
    .byte 0, 5, 2
    .4byte code + 16
    .byte 0, 1, 1               /* DW_LNE_end_sequence */
lines_end:
