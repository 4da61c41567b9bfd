/* DWT/ITM hardware PC sampling and ITM stimulus writes (ARMv7-M).
 * Untested on silicon: QEMU models neither unit. The register arithmetic is host-tested. */
#include "cmprof.h"
#include "cmprof_regs.h"

/* Field positions as in CMSIS core_cm3.h / core_cm4.h / core_cm7.h and the ARMv7-M ARM. */
_Static_assert(CMPROF_DWT_CTRL_CYCCNTENA == 0x00000001u, "DWT_CTRL.CYCCNTENA is bit 0");
_Static_assert(CMPROF_DWT_CTRL_POSTPRESET == 0x0000001Eu, "DWT_CTRL.POSTPRESET is bits 4:1");
_Static_assert(CMPROF_DWT_CTRL_POSTINIT == 0x000001E0u, "DWT_CTRL.POSTINIT is bits 8:5");
_Static_assert(CMPROF_DWT_CTRL_CYCTAP == 0x00000200u, "DWT_CTRL.CYCTAP is bit 9");
_Static_assert(CMPROF_DWT_CTRL_SYNCTAP == 0x00000C00u, "DWT_CTRL.SYNCTAP is bits 11:10");
_Static_assert(CMPROF_DWT_CTRL_PCSAMPLENA == 0x00001000u, "DWT_CTRL.PCSAMPLENA is bit 12");
_Static_assert(CMPROF_DWT_CTRL_EXCTRCENA == 0x00010000u, "DWT_CTRL.EXCTRCENA is bit 16");
_Static_assert(CMPROF_DWT_CTRL_CYCEVTENA == 0x00400000u, "DWT_CTRL.CYCEVTENA is bit 22");
_Static_assert(CMPROF_DWT_CTRL_NOCYCCNT == 0x02000000u, "DWT_CTRL.NOCYCCNT is bit 25");
_Static_assert(CMPROF_DEMCR_TRCENA == 0x01000000u, "DEMCR.TRCENA is bit 24");
_Static_assert(CMPROF_ITM_TCR_DWTENA == 0x00000008u, "ITM_TCR.DWTENA is bit 3");
_Static_assert(CMPROF_ITM_TCR_SYNCENA == 0x00000004u, "ITM_TCR.SYNCENA is bit 2");
_Static_assert(CMPROF_ITM_TCR_ITMENA == 0x00000001u, "ITM_TCR.ITMENA is bit 0");
_Static_assert(CMPROF_DWT_PCSR == CMPROF_DWT_CTRL + 0x1Cu, "DWT_PCSR is at offset 0x1C");
_Static_assert(CMPROF_ITM_STIM(31) == 0xE000007Cu, "ITM stimulus port 31");

uint32_t cmprof_dwt_pcsample_ctrl(uint32_t ctrl, uint32_t tap, uint32_t reload)
{
    ctrl &= ~(CMPROF_DWT_CTRL_CYCTAP | CMPROF_DWT_CTRL_POSTPRESET | CMPROF_DWT_CTRL_POSTINIT |
              CMPROF_DWT_CTRL_CYCEVTENA);
    ctrl |= ((tap & 1u) << CMPROF_DWT_CTRL_CYCTAP_POS) | ((reload & 0xFu) << CMPROF_DWT_CTRL_POSTPRESET_POS) |
            ((reload & 0xFu) << CMPROF_DWT_CTRL_POSTINIT_POS) | CMPROF_DWT_CTRL_CYCCNTENA |
            CMPROF_DWT_CTRL_PCSAMPLENA;
    return ctrl;
}

uint32_t cmprof_dwt_pcsample_period(uint32_t tap, uint32_t reload)
{
    /* POSTCNT counts down from the reload once per tap event and emits a sample at zero. */
    return ((reload & 0xFu) + 1u) * ((tap & 1u) ? 1024u : 64u);
}

uint32_t cmprof_swo_prescaler(uint32_t cpu_hz, uint32_t swo_hz)
{
    if (swo_hz == 0u || swo_hz > cpu_hz)
        return 0u;
    return (cpu_hz + swo_hz / 2u) / swo_hz - 1u; /* rounded: SWO = cpu / (ACPR + 1) */
}

void cmprof_swo_init(uint32_t cpu_hz, uint32_t swo_hz)
{
    CMPROF_REG(CMPROF_DEMCR) |= CMPROF_DEMCR_TRCENA;
    CMPROF_REG(CMPROF_TPIU_SPPR) = CMPROF_TPIU_SPPR_NRZ;
    CMPROF_REG(CMPROF_TPIU_ACPR) = cmprof_swo_prescaler(cpu_hz, swo_hz);
    CMPROF_REG(CMPROF_TPIU_FFCR) = CMPROF_TPIU_FFCR_TRIGIN; /* formatter off: raw ITM on the pin */
    CMPROF_REG(CMPROF_ITM_LAR) = CMPROF_CORESIGHT_UNLOCK;
    CMPROF_REG(CMPROF_ITM_TCR) = CMPROF_ITM_TCR_ITMENA | CMPROF_ITM_TCR_SYNCENA | CMPROF_ITM_TCR_DWTENA |
                                 (1u << CMPROF_ITM_TCR_TRACEBUSID_POS);
    CMPROF_REG(CMPROF_ITM_TER) |= 1u;
}

int cmprof_pcsample_start(uint32_t tap, uint32_t reload)
{
    CMPROF_REG(CMPROF_DEMCR) |= CMPROF_DEMCR_TRCENA;
    uint32_t ctrl = CMPROF_REG(CMPROF_DWT_CTRL);
    if (ctrl == 0u || (ctrl & CMPROF_DWT_CTRL_NOCYCCNT) != 0u)
        return -1;
    CMPROF_REG(CMPROF_ITM_TCR) |= CMPROF_ITM_TCR_DWTENA;
    /* POSTINIT is writable only while sampling and CYCEVTENA are off. */
    CMPROF_REG(CMPROF_DWT_CTRL) = ctrl & ~(CMPROF_DWT_CTRL_PCSAMPLENA | CMPROF_DWT_CTRL_CYCEVTENA);
    CMPROF_REG(CMPROF_DWT_CTRL) =
        cmprof_dwt_pcsample_ctrl(ctrl, tap, reload) & ~CMPROF_DWT_CTRL_PCSAMPLENA;
    CMPROF_REG(CMPROF_DWT_CTRL) |= CMPROF_DWT_CTRL_PCSAMPLENA;
    return 0;
}

void cmprof_pcsample_stop(void)
{
    CMPROF_REG(CMPROF_DWT_CTRL) &= ~CMPROF_DWT_CTRL_PCSAMPLENA;
}

void cmprof_itm_write(uint32_t port, uint32_t value)
{
    port &= 31u;
    if ((CMPROF_REG(CMPROF_ITM_TCR) & CMPROF_ITM_TCR_ITMENA) == 0u ||
        (CMPROF_REG(CMPROF_ITM_TER) & (1u << port)) == 0u)
        return;
    while (CMPROF_REG(CMPROF_ITM_STIM(port)) == 0u) { /* bit 0 reads 1 when the FIFO has room */
    }
    CMPROF_REG(CMPROF_ITM_STIM(port)) = value;
}
