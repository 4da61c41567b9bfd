/* A stand-in for the part of Zephyr's <zephyr/devicetree.h> that zephyr/cmprof_zephyr_port.h and
 * zephyr/cmprof_counter.c use, over the same generated names Zephyr's devicetree_generated.h has
 * (DT_N_NODELABEL_x, <node>_EXISTS, <node>_STATUS_okay, <node>_IRQ_IDX_0_VAL_irq ...). A board's
 * excerpt of its real generated header (tests/zoo/zephyr/boards/<board>.h, from tests/zoo/zephyr/
 * dt_excerpt.py) is given with -include first. Zephyr itself is not in this repository. */
#ifndef CMPROF_ZEPHYR_STANDIN_DEVICETREE_H
#define CMPROF_ZEPHYR_STANDIN_DEVICETREE_H

#define DT_STANDIN_CAT(a, b) DT_STANDIN_CAT_(a, b)
#define DT_STANDIN_CAT_(a, b) a##b
#define DT_STANDIN_CAT3(a, b, c) DT_STANDIN_CAT3_(a, b, c)
#define DT_STANDIN_CAT3_(a, b, c) a##b##c
/* 1 when the argument is a macro defined as 1, else 0 (Zephyr's IS_ENABLED trick) */
#define DT_STANDIN_ON(x) DT_STANDIN_ON_(x)
#define DT_STANDIN_ON_(x) DT_STANDIN_ON__(DT_STANDIN_PROBE_##x)
#define DT_STANDIN_PROBE_1 0,
#define DT_STANDIN_ON__(arg) DT_STANDIN_SECOND(arg 1, 0, 0)
#define DT_STANDIN_SECOND(a, b, ...) b

#define DT_NODELABEL(label) DT_N_NODELABEL_##label
#define DT_CHOSEN(prop) DT_CHOSEN_##prop
#define DT_HAS_CHOSEN(prop) DT_STANDIN_ON(DT_CHOSEN_##prop##_EXISTS)
#define DT_NODE_EXISTS(node) DT_STANDIN_ON(DT_STANDIN_CAT(node, _EXISTS))
#define DT_NODE_HAS_STATUS_OKAY(node) DT_STANDIN_ON(DT_STANDIN_CAT(node, _STATUS_okay))
#define DT_NODE_HAS_COMPAT(node, compat) DT_STANDIN_ON(DT_STANDIN_CAT3(node, _COMPAT_MATCHES_, compat))
#define DT_HAS_COMPAT_STATUS_OKAY(compat) DT_STANDIN_ON(DT_COMPAT_HAS_OKAY_##compat)
#define DT_COMPAT_GET_ANY_STATUS_OKAY(compat) DT_N_INST_0_##compat
#define DT_IRQ_HAS_IDX(node, idx) DT_STANDIN_ON(DT_STANDIN_CAT3(node, _IRQ_IDX_, idx##_EXISTS))
#define DT_IRQN(node) DT_STANDIN_CAT(node, _IRQ_IDX_0_VAL_irq)
#define DT_REG_ADDR(node) DT_STANDIN_CAT(node, _REG_IDX_0_VAL_ADDRESS)
#define DT_PARENT(node) DT_STANDIN_CAT(node, _PARENT)
#define DT_NODE_FULL_NAME(node) DT_STANDIN_CAT(node, _FULL_NAME)
#define DT_SAME_NODE(a, b) (DT_STANDIN_CAT(a, _ORD) == DT_STANDIN_CAT(b, _ORD))

#endif
