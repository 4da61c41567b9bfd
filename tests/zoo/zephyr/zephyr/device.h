/* A stand-in for Zephyr's <zephyr/device.h>: one device, whichever node names it. */
#ifndef CMPROF_ZEPHYR_STANDIN_DEVICE_H
#define CMPROF_ZEPHYR_STANDIN_DEVICE_H

#include <stdbool.h>

struct device {
    const char *name;
};
extern const struct device standin_device;
#define DEVICE_DT_GET(node) (&standin_device)
bool device_is_ready(const struct device *dev);

#endif
