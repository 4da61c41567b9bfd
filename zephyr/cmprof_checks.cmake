# Configure-time checks of the cmprof options that Kconfig cannot express, each with one line that
# names the option. Included by zephyr/CMakeLists.txt; runs alone too (tests/run.sh):
#   cmake -DCONFIG_CMPROF_JITTER=0x3fe -P zephyr/cmprof_checks.cmake
function(cmprof_check_options)
  math(EXPR jitter_gap "${CONFIG_CMPROF_JITTER} & (${CONFIG_CMPROF_JITTER} + 1)")
  if(NOT jitter_gap EQUAL 0)
    message(FATAL_ERROR "cmprof: CONFIG_CMPROF_JITTER=${CONFIG_CMPROF_JITTER} must be one less than a power "
      "of two (0x0, 0x1, 0x3, 0x7, ... 0xffff): the jitter is a random number masked with it")
  endif()
  if(DEFINED CONFIG_CMPROF_RING_SIZE)
    math(EXPR ring_gap "${CONFIG_CMPROF_RING_SIZE} & (${CONFIG_CMPROF_RING_SIZE} - 1)")
    if(NOT ring_gap EQUAL 0)
      message(FATAL_ERROR "cmprof: CONFIG_CMPROF_RING_SIZE=${CONFIG_CMPROF_RING_SIZE} must be a power of two")
    endif()
    if(CONFIG_CMPROF_TRANSPORT_STREAM AND CONFIG_CMPROF_RING_SIZE LESS 64)
      message(FATAL_ERROR "cmprof: CONFIG_CMPROF_RING_SIZE=${CONFIG_CMPROF_RING_SIZE} must be at least 64 with "
        "the stream: the drain sends whole lines of 32 samples and wakes when half the ring can be full (a "
        "smaller ring never sends a line)")
    endif()
  endif()
  if(DEFINED CONFIG_CMPROF_RESERVOIR AND DEFINED CONFIG_CMPROF_RING_SIZE)
    math(EXPR most "${CONFIG_CMPROF_RING_SIZE} / 2 - 2")
    if(CONFIG_CMPROF_RESERVOIR GREATER most)
      message(FATAL_ERROR "cmprof: CONFIG_CMPROF_RESERVOIR=${CONFIG_CMPROF_RESERVOIR} is more than half "
        "the ring less 2 (${most} for CONFIG_CMPROF_RING_SIZE=${CONFIG_CMPROF_RING_SIZE})")
    endif()
  endif()
  cmprof_check_timer()
endfunction()

# Your own timer needs its interrupt line: without one nothing connects the sampling vector, and the
# firmware announces a sampler that never sends a sample (an MPS3 AN547 took this default: Zephyr's
# devicetree there has neither a CMSDK timer nor a counter, only SysTick, the kernel's).
# CMPROF_CHOSEN_TIMER_IRQ: the node chosen as cmprof,timer has an interrupt (zephyr/CMakeLists.txt).
function(cmprof_check_timer)
  if(NOT CONFIG_CMPROF_TIMER_USER OR CONFIG_CMPROF_TIMER_USER_APP_CONNECTS OR CMPROF_CHOSEN_TIMER_IRQ)
    return()
  endif()
  if(DEFINED CONFIG_CMPROF_TIMER_USER_IRQ AND CONFIG_CMPROF_TIMER_USER_IRQ GREATER_EQUAL 0)
    return()
  endif()
  message(FATAL_ERROR "cmprof: CONFIG_CMPROF_TIMER_USER (your own timer: the default where the devicetree "
    "has no CMSDK timer and no enabled counter; SysTick is the kernel's) has no interrupt line, so no sample "
    "would ever be taken. Enable a counter the application does not use and choose it "
    "(chosen { cmprof,timer = &...; }), or write cmprof_user_timer_start/stop/period/ack for a timer of "
    "this chip and give its line, CONFIG_CMPROF_TIMER_USER_IRQ=N (or a chosen cmprof,timer node with "
    "interrupts; CONFIG_CMPROF_TIMER_USER_APP_CONNECTS=y if the application connects cmprof_zephyr_isr "
    "itself): docs/zephyr.md, \"The sampling timer\"")
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  cmprof_check_options()
endif()
