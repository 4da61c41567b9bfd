/* A stand-in for Zephyr's <zephyr/drivers/counter.h>: the alarm and top-value calls of the counter API, with
 * Zephyr 4.3's signatures (include/zephyr/drivers/counter.h). */
#ifndef CMPROF_ZEPHYR_STANDIN_COUNTER_H
#define CMPROF_ZEPHYR_STANDIN_COUNTER_H

#include <stdint.h>
#include <zephyr/device.h>

typedef void (*counter_alarm_callback_t)(const struct device *dev, uint8_t chan_id, uint32_t ticks,
                                         void *user_data);
struct counter_alarm_cfg {
    counter_alarm_callback_t callback;
    uint32_t ticks;
    void *user_data;
    uint32_t flags;
};
typedef void (*counter_top_callback_t)(const struct device *dev, void *user_data);
struct counter_top_cfg {
    uint32_t ticks;
    counter_top_callback_t callback;
    void *user_data;
    uint32_t flags;
};
int counter_start(const struct device *dev);
int counter_stop(const struct device *dev);
int counter_set_top_value(const struct device *dev, const struct counter_top_cfg *cfg);
uint8_t counter_get_num_of_channels(const struct device *dev);
uint32_t counter_get_max_top_value(const struct device *dev);
int counter_set_channel_alarm(const struct device *dev, uint8_t chan_id, const struct counter_alarm_cfg *alarm_cfg);
int counter_cancel_channel_alarm(const struct device *dev, uint8_t chan_id);
uint32_t counter_get_frequency(const struct device *dev);
uint32_t counter_get_top_value(const struct device *dev);

#endif
