/* The last line of a FreeRTOSConfig.h that uses cmprof. */
#include "rtos/cmprof_freertos.h"
