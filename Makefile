# cmprof: sampling profiler for Cortex-M firmware.
#   make test       install missing Debian packages, then run every test
#   make demo       the main job (for now: run the QEMU reference scenarios and print their report)
#   make scenarios  run the scenarios and write scenarios/REPORT.md

CC ?= cc
CFLAGS ?= -std=c11 -Wall -Wextra -Werror -g -O1
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
B := build

.PHONY: all deps unit firmware-check scenarios report demo test clean

all: unit

deps:
	@scripts/deps.sh

# ---- host unit tests of the firmware library (fake register file) ----------------------------
SAMPLER_CONFIGS := ring tag hist hist8_jitter jitter tim3
SAMPLER_ring := -DCMPROF_RING_N=16
SAMPLER_tag := -DCMPROF_RING_N=16 -DCMPROF_TAG=test_tag
SAMPLER_hist := -DCMPROF_HIST=1 -DCMPROF_HIST_BASE=0x08000000u
SAMPLER_hist8_jitter := -DCMPROF_HIST=1 -DCMPROF_HIST_SHIFT=3 -DCMPROF_HIST_BINS=100 -DCMPROF_HIST_BASE=0x08000000u -DCMPROF_JITTER=1023
SAMPLER_jitter := -DCMPROF_JITTER=2047
SAMPLER_tim3 := -DCMPROF_TIMER_TIM3=1 -DCMPROF_RING_N=16

UNIT_NAMES := test_dwt test_section $(addprefix test_sampler_,$(SAMPLER_CONFIGS))
UNIT := $(addprefix $(B)/tests/plain/,$(UNIT_NAMES)) $(addprefix $(B)/tests/asan/,$(UNIT_NAMES))
FAKE := -include tests/fake_regs.h tests/fake_regs.c
FW_H := firmware/cmprof.h firmware/cmprof_regs.h tests/check.h tests/fake_regs.h tests/fake_regs.c

unit: $(UNIT)

$(B)/tests/plain/test_%: tests/test_%.c firmware/cmprof_%.c $(FW_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(FAKE) $< firmware/cmprof_$*.c -o $@

$(B)/tests/asan/test_%: tests/test_%.c firmware/cmprof_%.c $(FW_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN) $(FAKE) $< firmware/cmprof_$*.c -o $@

define sampler_rule
$(B)/tests/plain/test_sampler_$(1): tests/test_sampler.c firmware/cmprof_sampler.c $(FW_H)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) -DCMPROF_NO_ISR=1 $$(SAMPLER_$(1)) $$(FAKE) $$< firmware/cmprof_sampler.c -o $$@
$(B)/tests/asan/test_sampler_$(1): tests/test_sampler.c firmware/cmprof_sampler.c $(FW_H)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $$(SAN) -DCMPROF_NO_ISR=1 $$(SAMPLER_$(1)) $$(FAKE) $$< firmware/cmprof_sampler.c -o $$@
endef
$(foreach c,$(SAMPLER_CONFIGS),$(eval $(call sampler_rule,$(c))))

# ---- QEMU reference scenarios ----------------------------------------------------------------
scenarios: deps
	python3 scenarios/scen.py run
	python3 scenarios/scen.py report

demo: scenarios
	@cat scenarios/REPORT.md

test: deps
	@tests/run.sh

clean:
	rm -rf $(B)
