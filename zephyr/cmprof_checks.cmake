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
  endif()
  if(DEFINED CONFIG_CMPROF_RESERVOIR AND DEFINED CONFIG_CMPROF_RING_SIZE)
    math(EXPR most "${CONFIG_CMPROF_RING_SIZE} / 2 - 2")
    if(CONFIG_CMPROF_RESERVOIR GREATER most)
      message(FATAL_ERROR "cmprof: CONFIG_CMPROF_RESERVOIR=${CONFIG_CMPROF_RESERVOIR} is more than half "
        "the ring less 2 (${most} for CONFIG_CMPROF_RING_SIZE=${CONFIG_CMPROF_RING_SIZE})")
    endif()
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  cmprof_check_options()
endif()
