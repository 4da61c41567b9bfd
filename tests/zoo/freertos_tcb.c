/* A task control block named and laid out as FreeRTOS's (the kernel's own names, our own small
 * code): cmprof-top --task-var pxCurrentTCB finds pcTaskName through the variable's DWARF type. */
#include <stdint.h>

typedef struct xLIST_ITEM {
    uint32_t xItemValue;
    struct xLIST_ITEM *pxNext, *pxPrevious;
    void *pvOwner, *pvContainer;
} ListItem_t;

typedef struct tskTaskControlBlock {
    volatile uint32_t *pxTopOfStack;
    ListItem_t xStateListItem, xEventListItem;
    uint32_t uxPriority;
    uint32_t *pxStack;
    char pcTaskName[16];
} tskTCB;
typedef tskTCB TCB_t;

TCB_t *volatile pxCurrentTCB;
static TCB_t motor = {.pcTaskName = "motor"}, link = {.pcTaskName = "link"};

__attribute__((noinline)) void hot_a(void)
{
    for (volatile int i = 0; i < 100; i++)
        pxCurrentTCB = &motor;
}

__attribute__((noinline)) void hot_b(void)
{
    for (volatile int i = 0; i < 100; i++)
        pxCurrentTCB = &link;
}

void Reset_Handler(void)
{
    for (;;) {
        hot_a();
        hot_b();
    }
}
