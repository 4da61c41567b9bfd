/* Host tests of the DWT/ITM register arithmetic (the hardware path cannot run in QEMU). */
#include "../firmware/cmprof.h"
#include "../firmware/cmprof_regs.h"
#include "check.h"
#include "fake_regs.h"

static void test_pcsample_ctrl_sets_fields(void)
{
    uint32_t v = cmprof_dwt_pcsample_ctrl(0x40000000u, CMPROF_PCS_TAP_1024, 15u);
    CHECK((v & CMPROF_DWT_CTRL_PCSAMPLENA) != 0u);
    CHECK((v & CMPROF_DWT_CTRL_CYCCNTENA) != 0u);
    CHECK((v & CMPROF_DWT_CTRL_CYCTAP) != 0u);
    CHECK(((v >> 1) & 0xFu) == 15u);
    CHECK(((v >> 5) & 0xFu) == 15u);
    CHECK((v & 0x40000000u) != 0u); /* NUMCOMP-style read-only bits kept */
    CHECK(v == (0x40000000u | 0x1000u | 0x200u | 0x1Eu | 0x1E0u | 1u));
}

static void test_pcsample_ctrl_clears_old_fields(void)
{
    uint32_t old = CMPROF_DWT_CTRL_CYCTAP | CMPROF_DWT_CTRL_POSTPRESET | CMPROF_DWT_CTRL_POSTINIT |
                   CMPROF_DWT_CTRL_CYCEVTENA | CMPROF_DWT_CTRL_EXCTRCENA;
    uint32_t v = cmprof_dwt_pcsample_ctrl(old, CMPROF_PCS_TAP_64, 3u);
    CHECK((v & CMPROF_DWT_CTRL_CYCTAP) == 0u);
    CHECK(((v >> 1) & 0xFu) == 3u);
    CHECK(((v >> 5) & 0xFu) == 3u);
    CHECK((v & CMPROF_DWT_CTRL_CYCEVTENA) == 0u); /* cycle events would flood the stream */
    CHECK((v & CMPROF_DWT_CTRL_EXCTRCENA) != 0u); /* unrelated fields survive */
}

static void test_pcsample_ctrl_masks_arguments(void)
{
    uint32_t v = cmprof_dwt_pcsample_ctrl(0u, 3u, 0x1Fu); /* out of range: only the low bits count */
    CHECK(((v >> 1) & 0xFu) == 0xFu);
    CHECK((v & ~(CMPROF_DWT_CTRL_CYCTAP | CMPROF_DWT_CTRL_POSTPRESET | CMPROF_DWT_CTRL_POSTINIT |
                 CMPROF_DWT_CTRL_CYCCNTENA | CMPROF_DWT_CTRL_PCSAMPLENA)) == 0u);
}

static void test_pcsample_period(void)
{
    CHECK(cmprof_dwt_pcsample_period(CMPROF_PCS_TAP_64, 0u) == 64u);
    CHECK(cmprof_dwt_pcsample_period(CMPROF_PCS_TAP_64, 15u) == 1024u);
    CHECK(cmprof_dwt_pcsample_period(CMPROF_PCS_TAP_1024, 15u) == 16384u); /* the slowest: 16 x 1024 */
    CHECK(cmprof_dwt_pcsample_period(CMPROF_PCS_TAP_1024, 0u) == 1024u);
}

static void test_swo_prescaler(void)
{
    CHECK(cmprof_swo_prescaler(72000000u, 2000000u) == 35u);
    CHECK(cmprof_swo_prescaler(168000000u, 2000000u) == 83u);
    CHECK(cmprof_swo_prescaler(16000000u, 16000000u) == 0u);
    CHECK(cmprof_swo_prescaler(100000000u, 3000000u) == 32u); /* 33.3 rounds to 33 */
    CHECK(cmprof_swo_prescaler(1000u, 0u) == 0u);
    CHECK(cmprof_swo_prescaler(1000u, 2000u) == 0u);
}

static void test_register_addresses(void)
{
    CHECK(CMPROF_DWT_CTRL == 0xE0001000u);
    CHECK(CMPROF_DWT_CYCCNT == 0xE0001004u);
    CHECK(CMPROF_DWT_PCSR == 0xE000101Cu);
    CHECK(CMPROF_DEMCR == 0xE000EDFCu);
    CHECK(CMPROF_ITM_TCR == 0xE0000E80u);
    CHECK(CMPROF_ITM_TER == 0xE0000E00u);
    CHECK(CMPROF_ITM_LAR == 0xE0000FB0u);
    CHECK(CMPROF_TPIU_ACPR == 0xE0040010u);
    CHECK(CMPROF_TPIU_SPPR == 0xE00400F0u);
    CHECK(CMPROF_SYST_CSR == 0xE000E010u);
    CHECK(CMPROF_SCB_SHPR3 == 0xE000ED20u);
    CHECK(CMPROF_NVIC_IPR_WORD(29) == 0xE000E41Cu && CMPROF_NVIC_IPR_SHIFT(29) == 8u);
}

static void test_pcsample_start_without_dwt(void)
{
    fake_regs_clear(); /* DWT_CTRL reads 0: no DWT, as on ARMv6-M or in QEMU */
    CHECK(cmprof_pcsample_start(CMPROF_PCS_TAP_1024, 15u) == -1);
    CHECK((CMPROF_REG(CMPROF_DWT_CTRL) & CMPROF_DWT_CTRL_PCSAMPLENA) == 0u);
}

static void test_pcsample_start_and_stop(void)
{
    fake_regs_clear();
    CMPROF_REG(CMPROF_DWT_CTRL) = 0x40000000u | CMPROF_DWT_CTRL_CYCEVTENA; /* four comparators */
    CHECK(cmprof_pcsample_start(CMPROF_PCS_TAP_64, 7u) == 0);
    CHECK(CMPROF_REG(CMPROF_DWT_CTRL) == cmprof_dwt_pcsample_ctrl(0x40000000u, CMPROF_PCS_TAP_64, 7u));
    CHECK((CMPROF_REG(CMPROF_DEMCR) & CMPROF_DEMCR_TRCENA) != 0u);
    CHECK((CMPROF_REG(CMPROF_ITM_TCR) & CMPROF_ITM_TCR_DWTENA) != 0u);
    cmprof_pcsample_stop();
    CHECK((CMPROF_REG(CMPROF_DWT_CTRL) & CMPROF_DWT_CTRL_PCSAMPLENA) == 0u);
    CHECK((CMPROF_REG(CMPROF_DWT_CTRL) & CMPROF_DWT_CTRL_CYCCNTENA) != 0u);
}

static void test_swo_init(void)
{
    fake_regs_clear();
    cmprof_swo_init(72000000u, 2000000u);
    CHECK(CMPROF_REG(CMPROF_TPIU_ACPR) == 35u);
    CHECK(CMPROF_REG(CMPROF_TPIU_SPPR) == CMPROF_TPIU_SPPR_NRZ);
    CHECK(CMPROF_REG(CMPROF_ITM_LAR) == CMPROF_CORESIGHT_UNLOCK);
    CHECK((CMPROF_REG(CMPROF_ITM_TCR) & (CMPROF_ITM_TCR_ITMENA | CMPROF_ITM_TCR_DWTENA)) ==
          (CMPROF_ITM_TCR_ITMENA | CMPROF_ITM_TCR_DWTENA));
    CHECK((CMPROF_REG(CMPROF_ITM_TER) & 1u) == 1u);
}

static void test_itm_write_respects_enables(void)
{
    fake_regs_clear();
    CMPROF_REG(CMPROF_ITM_STIM(0)) = 1u; /* FIFO ready */
    cmprof_itm_write(0u, 0xABCDu);       /* ITM disabled: nothing written */
    CHECK(CMPROF_REG(CMPROF_ITM_STIM(0)) == 1u);
    CMPROF_REG(CMPROF_ITM_TCR) = CMPROF_ITM_TCR_ITMENA;
    CMPROF_REG(CMPROF_ITM_TER) = 1u;
    cmprof_itm_write(0u, 0xABCDu);
    CHECK(CMPROF_REG(CMPROF_ITM_STIM(0)) == 0xABCDu);
    CMPROF_REG(CMPROF_ITM_STIM(3)) = 1u;
    cmprof_itm_write(3u, 7u); /* port 3 not enabled in TER */
    CHECK(CMPROF_REG(CMPROF_ITM_STIM(3)) == 1u);
}

int main(void)
{
    RUN_TEST(test_pcsample_start_without_dwt);
    RUN_TEST(test_pcsample_start_and_stop);
    RUN_TEST(test_swo_init);
    RUN_TEST(test_itm_write_respects_enables);
    RUN_TEST(test_pcsample_ctrl_sets_fields);
    RUN_TEST(test_pcsample_ctrl_clears_old_fields);
    RUN_TEST(test_pcsample_ctrl_masks_arguments);
    RUN_TEST(test_pcsample_period);
    RUN_TEST(test_swo_prescaler);
    RUN_TEST(test_register_addresses);
    return check_summary();
}
