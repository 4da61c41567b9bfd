# cmprof: sampling profiler for Cortex-M firmware.
#   make test       install missing Debian packages, then run every test
#   make demo       the main job (for now: run the QEMU reference scenarios and print their report)
#   make scenarios  run the scenarios and write scenarios/REPORT.md

CC ?= cc
CFLAGS ?= -std=c11 -Wall -Wextra -Wshadow -Wredundant-decls -Werror -g -O1
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
# The ASan/UBSan builds (test builds, never installed) with -g1: functions and line tables, all that a
# sanitizer's report shows (its frames, inlined ones too, name the same file:line as with -g), without
# the locations of local variables, which cost a third of those builds' compile CPU. SAN_DEBUG=-g
# gives a debugger the locals.
SAN_DEBUG ?= -g1
SAN_CFLAGS = $(filter-out -g,$(CFLAGS)) $(SAN_DEBUG)
B := build

.PHONY: all deps unit tool asan-tool scenarios report demo test bench fuzz replay fuzz-targets fuzz-replayed clean install uninstall

all: tool unit

# ---- the host tool --------------------------------------------------------------------------
HOST_CFLAGS := $(CFLAGS) -O2 -D_GNU_SOURCE
# each function and constant in its own section, so that the static tool's link can put what
# ordinary runs use together (app/hot_text.ld, below)
HOST_CFLAGS += -ffunction-sections -fdata-sections
NCURSES_CFLAGS := $(shell pkg-config --cflags ncursesw 2>/dev/null)
NCURSES_LIBS := $(or $(shell pkg-config --libs ncursesw 2>/dev/null),-lncursesw -ltinfo)
HOST_LIBS := -lelf -ldwarf -liberty -lserialport $(NCURSES_LIBS) -lm -pthread
# The tool takes these libraries from their archives when all are installed (Debian's -dev packages
# ship them): with no shared library to load but libc, a process starts sooner, which counts in
# `--resolve`'s time before its first lookup (make bench). STATIC_LIBS=no, or a missing archive,
# links the shared ones. With the C library's archives too (libc6-dev) the link is wholly static:
# no loader, no shared C library or libm mapped whole, so the resident set holds only the pages of
# the one file that the run touches (about 1 MB less in the live view; docs/performance.md).
# STATIC_LIBC=no keeps the C library shared. (glibc warns that getaddrinfo in a static program
# loads its name-service modules at run time: host names in tcp:/gdb: sources go through them.)
TOOL_ARCHIVES := libdwarf.a libelf.a libserialport.a libncursesw.a libtinfo.a libz.a
MISSING_ARCHIVES = $(foreach a,$(TOOL_ARCHIVES),$(if $(filter /%,$(shell $(CC) -print-file-name=$(a))),,$(a)))
HAVE_ARCHIVES = $(if $(filter no,$(STATIC_LIBS))$(strip $(MISSING_ARCHIVES)),,yes)
HAVE_LIBC_ARCHIVES = $(if $(filter no,$(STATIC_LIBC)),,$(and $(filter /%,$(shell $(CC) -print-file-name=libc.a)),$(filter /%,$(shell $(CC) -print-file-name=libm.a))))
STATIC_TOOL_LIBS = $(if $(HAVE_LIBC_ARCHIVES),-static -ldwarf -lelf -liberty -lserialport -lncursesw -ltinfo -lz -lm -pthread,-Wl,-Bstatic -ldwarf -lelf -liberty -lserialport -lncursesw -ltinfo -lz -Wl,-Bdynamic -lm -pthread)
TOOL_LIBS = $(if $(HAVE_ARCHIVES),$(STATIC_TOOL_LIBS),$(HOST_LIBS))
# The static tool's code and constants that ordinary runs use go first, together: the kernel maps
# 64 KB of a file around each page touched, so spread over the whole image they made nearly all of
# it resident (bench/hot_text.py writes the list; HOT_TEXT=no links in the default order).
HOT_TEXT_LD := app/hot_text.ld
TOOL_ORDER = $(if $(and $(HAVE_ARCHIVES),$(HAVE_LIBC_ARCHIVES)),$(if $(filter no,$(HOT_TEXT)),,-Wl,-T,$(HOT_TEXT_LD)))
SYM_SRC := symbols/table.c symbols/loader.c symbols/stage.c symbols/open.c symbols/elf.c symbols/code.c symbols/symtab.c symbols/frames.c symbols/exidx.c symbols/leaf.c symbols/dwarf.c symbols/rawdwarf.c symbols/rawscopes.c symbols/rawlines.c symbols/aranges.c symbols/isolate.c symbols/units.c symbols/merge.c symbols/lookup.c symbols/demangle.c symbols/samename.c symbols/codemap.c
HOST_SRC := app/main.c app/batch.c app/resolve.c app/live.c tui/view.c tui/keys.c tui/rows.c tui/table.c tui/budgets.c tui/drill.c tui/draw.c tui/history.c tui/screen_top.c tui/screen_source.c tui/screen_annotate.c tui/screen_sections.c tui/screen_pages.c tui/screen_calls.c tui/screen_graph.c tui/tui.c source/source.c source/streams.c source/probes.c source/net.c source/outq.c source/gdb.c source/rsp.c source/openocd.c \
            profile/profile.c profile/count.c profile/tasks.c profile/rows.c profile/calls.c profile/diagnose.c profile/loss.c profile/firmware.c profile/starved.c profile/stacks.c profile/pcindex.c profile/escape.c profile/ingest.c $(SYM_SRC) \
            decode/itm.c decode/text.c decode/stream.c decode/textline.c decode/dumptasks.c decode/tpiu.c decode/orbflow.c decode/detect.c
HOST_SRC += app/outfile.c app/stop.c app/elfwatch.c
HOST_SRC += source/rtt.c
REPORT_SRC := report/report.c report/emit.c report/table.c report/csv.c report/json.c report/folded.c report/speedscope.c report/baseline.c
HOST_SRC += $(REPORT_SRC)
# other tools' formats (-o pprof, callgrind, lcov, trace) and the samples' order they need; zlib
# gzips pprof's output (it was linked already, through libdwarf)
EXPORTS_SRC := report/exports.c report/pprof.c report/pbuf.c report/callgrind.c report/lcov.c report/trace.c \
               report/intern.c report/frames.c report/period.c
HOST_SRC += $(EXPORTS_SRC) profile/timeline.c
HOST_LIBS += -lz
HOST_HDR := $(wildcard base/*.h app/*.h report/*.h profile/*.h symbols/*.h decode/*.h source/*.h tui/*.h)
TOOL := $(B)/cmprof-top

# The host code but main() as one static library per build, each object compiled once: plain
# (the tool's -O2) for the tool, the unit tests and lookup-check, and ASan/UBSan for the tool's ASan
# build, the unit tests under ASan and the fuzz replays. A test links only the objects it uses.
# Each object's header dependencies come from the compiler (-MMD).
LIB_SRC := $(filter-out app/main.c,$(HOST_SRC))
PLAIN_OBJ := $(patsubst %.c,$(B)/obj/plain/%.o,$(HOST_SRC))
ASAN_OBJ := $(patsubst %.c,$(B)/obj/asan/%.o,$(HOST_SRC))
LIB := $(B)/obj/plain/libcmprof.a
ASAN_LIB := $(B)/obj/asan/libcmprof.a
# what a program linked with either library needs besides it (shared libraries; -lz: pprof's gzip)
LIB_LIBS := -lelf -ldwarf -liberty -lserialport $(NCURSES_LIBS) -lz -lm -pthread
$(B)/obj/plain/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(NCURSES_CFLAGS) -MMD -MP -c $< -o $@
$(B)/obj/asan/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) -O1 -D_GNU_SOURCE $(SAN) $(NCURSES_CFLAGS) -MMD -MP -c $< -o $@
-include $(PLAIN_OBJ:.o=.d) $(ASAN_OBJ:.o=.d)
$(LIB): $(filter-out %/app/main.o,$(PLAIN_OBJ))
	@rm -f $@
	ar rcs $@ $^
$(ASAN_LIB): $(filter-out %/app/main.o,$(ASAN_OBJ))
	@rm -f $@
	ar rcs $@ $^

tool: $(TOOL)

$(TOOL): $(B)/obj/plain/app/main.o $(LIB) $(HOT_TEXT_LD)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(filter %.o %.a,$^) $(TOOL_ORDER) $(TOOL_LIBS) -o $@

# for bench/hot_text.py: the tool in the default order with its link map, and lackey's filter
$(B)/hot/cmprof-top: $(B)/obj/plain/app/main.o $(LIB) $(B)/hot/lackey_touch
	$(CC) $(HOST_CFLAGS) $(filter %.o %.a,$^) -Wl,-Map=$@.map $(TOOL_LIBS) -o $@
# and linked with the list, with its map: the native pass runs it under perf for what valgrind misses
$(B)/hot/cmprof-top-ordered: $(B)/obj/plain/app/main.o $(LIB) $(HOT_TEXT_LD)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(filter %.o %.a,$^) $(TOOL_ORDER) -Wl,-Map=$@.map $(TOOL_LIBS) -o $@
$(B)/hot/lackey_touch: bench/lackey_touch.c
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $< -o $@

# the same tool under AddressSanitizer/UBSan (leak checking on), for the end-to-end tests
ASAN_TOOL := $(B)/asan/cmprof-top
asan-tool: $(ASAN_TOOL)
$(ASAN_TOOL): $(B)/obj/asan/app/main.o $(ASAN_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) -O1 $(SAN) $^ $(LIB_LIBS) -o $@

# batch lookups against lone ones, over every halfword of an ELF's code (tests/resolve_parity.py runs
# both builds on its ELFs)
LOOKUP_CHECK_SRC := tests/lookup_check.c $(SYM_SRC)
$(B)/lookup-check: tests/lookup_check.c $(HOST_HDR) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) tests/lookup_check.c $(LIB) $(LIB_LIBS) -o $@
$(B)/asan/lookup-check: tests/lookup_check.c $(HOST_HDR) $(ASAN_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) -O1 -D_GNU_SOURCE $(SAN) tests/lookup_check.c $(ASAN_LIB) $(LIB_LIBS) -o $@

deps:
	@scripts/deps.sh

# ---- host unit tests of the firmware library (fake register file) ----------------------------
# host builds have no interrupt handler (CMPROF_NO_ISR: the prologue is ARM assembly) but keep a
# timer port; each port gets the whole sampler suite
SYSTICK := -DCMPROF_PORT=CMPROF_PORT_SYSTICK
SAMPLER_CONFIGS := ring tag hist hist8_jitter jitter tim3 tim5_jitter cmsdk_jitter dualtimer_jitter nrf3_jitter \
                   user_jitter none
SAMPLER_ring := $(SYSTICK) -DCMPROF_RING_N=16
SAMPLER_tag := $(SYSTICK) -DCMPROF_RING_N=16 -DCMPROF_TAG=test_tag
SAMPLER_hist := $(SYSTICK) -DCMPROF_HIST=1 -DCMPROF_HIST_BASE=0x08000000u
SAMPLER_hist8_jitter := $(SYSTICK) -DCMPROF_HIST=1 -DCMPROF_HIST_SHIFT=3 -DCMPROF_HIST_BINS=100 -DCMPROF_HIST_BASE=0x08000000u -DCMPROF_JITTER=1023
SAMPLER_jitter := $(SYSTICK) -DCMPROF_JITTER=2047
SAMPLER_tim3 := -DCMPROF_TIMER_TIM3=1 -DCMPROF_RING_N=16
SAMPLER_tim5_jitter := -DCMPROF_PORT=CMPROF_PORT_STM32_TIM -DCMPROF_STM32_TIM=5 -DCMPROF_JITTER=255
SAMPLER_cmsdk_jitter := -DCMPROF_PORT=CMPROF_PORT_CMSDK_TIMER -DCMPROF_JITTER=255
SAMPLER_dualtimer_jitter := -DCMPROF_PORT=CMPROF_PORT_CMSDK_DUALTIMER -DCMPROF_JITTER=255
SAMPLER_nrf3_jitter := -DCMPROF_PORT=CMPROF_PORT_NRF_TIMER -DCMPROF_NRF_TIMER=3 -DCMPROF_JITTER=255
SAMPLER_user_jitter := -DCMPROF_PORT=CMPROF_PORT_USER -DCMPROF_JITTER=255
SAMPLER_none := -DCMPROF_RING_N=16
SAMPLER_CONFIGS += sp804_jitter
SAMPLER_sp804_jitter := -DCMPROF_PORT=CMPROF_PORT_SP804 -DCMPROF_JITTER=255
SAMPLER_CONFIGS += rp2040_jitter
# a dump's task table of 2 slots keeping 2 earlier names: full, and a block reused by another name
SAMPLER_CONFIGS += tag_full
SAMPLER_CONFIGS += zephyr_stream
# the Zephyr module's stream's sampler options (zephyr/CMakeLists.txt)
SAMPLER_zephyr_stream := -DCMPROF_PORT=CMPROF_PORT_CMSDK_TIMER -DCMPROF_JITTER=255 -DCMPROF_LIMIT=0 -DCMPROF_TAG=test_tag -DCMPROF_THREAD_ENTRY=1 -DCMPROF_RELOAD_KEPT=1u
SAMPLER_tag_full := $(SYSTICK) -DCMPROF_RING_N=16 -DCMPROF_TAG=test_tag -DCMPROF_STREAM_TASKS=2 -DCMPROF_DUMP_EARLIER=2
SAMPLER_rp2040_jitter := -DCMPROF_PORT=CMPROF_PORT_RP2040_ALARM -DCMPROF_RP2040_ALARM=2 -DCMPROF_JITTER=255

FAKE := -include tests/fake_regs.h tests/fake_regs.c
FW_DEPS := firmware/cmprof.h firmware/cmprof_tasks.h firmware/rtos/cmprof_freertos.h tests/zoo/freertos_hooks.c firmware/cmprof_port.h firmware/cmprof_regs.h tests/fake_regs.h tests/fake_regs.c
FW_DEPS += firmware/rtos/cmprof_zephyr.h firmware/rtos/cmprof_zephyr.c tests/zoo/zephyr/tracing_user.h tests/zoo/zephyr/zephyr/kernel.h
DEC_DEPS := $(wildcard base/*.h decode/*.h profile/*.h symbols/*.h app/*.h report/*.h) tests/evlog.h
DEC_DEPS += $(wildcard tui/*.h) tests/tpiu_gen.h tests/wire_names.h

# test name -> sources and flags
SRC_test_dwt := firmware/cmprof_dwt.c $(FAKE)
SRC_test_section := firmware/cmprof_section.c $(FAKE)
SRC_test_itm := decode/itm.c
SRC_test_text := decode/text.c decode/stream.c decode/textline.c decode/dumptasks.c
SRC_test_tpiu := decode/tpiu.c decode/itm.c
SRC_test_detect := decode/detect.c decode/orbflow.c decode/tpiu.c decode/itm.c
STREAM_BASE := firmware/cmprof_stream.c firmware/cmprof_tasks.c firmware/cmprof_sampler.c firmware/cmprof_section.c decode/text.c decode/stream.c decode/textline.c decode/dumptasks.c $(FAKE) \
                   -DCMPROF_NO_ISR=1 -DCMPROF_PORT=CMPROF_PORT_SYSTICK -DCMPROF_STREAM=1 -DCMPROF_RING_N=64 \
                   -DCMPROF_TAG=test_tag
# test_stream and its variants: a full ring drops and counts (no reservoir); _reservoir: the default
SRC_test_stream := $(STREAM_BASE) -DCMPROF_RESERVOIR_N=0
SRC_test_stream_reservoir := $(STREAM_BASE)
MAIN_test_stream_reservoir := tests/test_stream.c
SRC_test_stream_many := $(SRC_test_stream) -DCMPROF_STREAM_TASKS=300
SRC_test_stream_sums := $(SRC_test_stream) -DCMPROF_SUM_RUNNING=1
MAIN_test_stream_sums := tests/test_stream.c
SRC_test_stream_load := firmware/cmprof_stream.c firmware/cmprof_tasks.c firmware/cmprof_sampler.c firmware/cmprof_section.c decode/text.c decode/stream.c decode/textline.c decode/dumptasks.c $(FAKE) \
                        -DCMPROF_NO_ISR=1 -DCMPROF_PORT=CMPROF_PORT_SYSTICK -DCMPROF_STREAM=1 -DCMPROF_RING_N=256 \
                        -DCMPROF_TAG=test_tag -DCMPROF_RESERVOIR_N=0
SRC_test_freertos := $(patsubst -DCMPROF_TAG%,-DCMPROF_TAG=cmprof_current_task,$(STREAM_BASE)) -Ifirmware -Itests/zoo
# the Zephyr module's stream (zephyr/CMakeLists.txt: names read by the tick, 24 characters, 24 retired names, its
# 32-sample lines), with a 128-name table; _pool: the adapter's name pool, which the module keeps for a dump's task lines
# (the tag: the kernel's running thread, linked as the module links it: zephyr/CMakeLists.txt; the cache's key
# reads the name's first word at the stand-in k_thread's name, 24 bytes in on a 64-bit host, which
# rtos/cmprof_zephyr.c checks)
ZEPHYR_TAG := -DCMPROF_TAG=cmprof_current_task -Wl,--defsym=cmprof_current_task=_kernel+8
SRC_test_zephyr := $(patsubst -DCMPROF_TAG%,$(ZEPHYR_TAG),$(STREAM_BASE)) -Ifirmware -Itests/zoo/zephyr \
                   -DCMPROF_TAG_NAMES=1 -DCMPROF_TASK_NAME_LEN=24u -DCMPROF_STREAM_TASKS=128 -DCMPROF_STREAM_LINE=32 \
                   -DCMPROF_TASKS_RETIRED=24u -DCMPROF_TAG_NAME_OFFSET=24 -DCMPROF_TASK_COPY_WORDS=8u
SRC_test_zephyr_pool := $(patsubst -DCMPROF_TAG%,$(ZEPHYR_TAG),$(STREAM_BASE)) -Ifirmware -Itests/zoo/zephyr -DCMPROF_STREAM_NAMES_KEPT=1
MAIN_test_zephyr_pool := tests/test_zephyr.c
MAIN_test_stream_many := tests/test_stream.c
SRC_test_stream_churn := $(SRC_test_stream_load) -DSTREAM_CHURN=1
MAIN_test_stream_churn := tests/test_stream_load.c
# ... with names read from the tag's block by the tick (CMPROF_TAG_NAMES: the RTOS adapters' mode)
SRC_test_stream_load_tn := $(SRC_test_stream_load) -DCMPROF_TAG_NAMES=1
MAIN_test_stream_load_tn := tests/test_stream_load.c
SRC_test_stream_churn_tn := $(SRC_test_stream_load) -DSTREAM_CHURN=1 -DCMPROF_TAG_NAMES=1
MAIN_test_stream_churn_tn := tests/test_stream_load.c
# ... with the churn of FreeRTOS's full demo in the field (issue 44): 1,000 creations a second, 100 names or unique ones
# (the unique one is built, not run by make test: every new name is an entry, 44 % of the bytes against the 10 % asked)
SRC_test_stream_field_tn := $(SRC_test_stream_load) -DSTREAM_FIELD=1 -DFIELD_RATE=1000 -DFIELD_UNIQUE=0 -DCMPROF_TAG_NAMES=1
MAIN_test_stream_field_tn := tests/test_stream_load.c
SRC_test_tag_names := $(SRC_test_stream_load) -DCMPROF_TAG_NAMES=1
SRC_test_stream_field_unique_tn := $(SRC_test_stream_load) -DSTREAM_FIELD=1 -DFIELD_RATE=1000 -DFIELD_UNIQUE=1 -DCMPROF_TAG_NAMES=1
MAIN_test_stream_field_unique_tn := tests/test_stream_load.c
SRC_test_stream_order := $(SRC_test_freertos)
SRC_test_stream_order_small := $(SRC_test_freertos) -DCMPROF_STREAM_TASKS=6
MAIN_test_stream_order_small := tests/test_stream_order.c
SRC_test_stream_hist := firmware/cmprof_stream.c firmware/cmprof_tasks.c firmware/cmprof_sampler.c firmware/cmprof_section.c $(FAKE) \
                        -DCMPROF_NO_ISR=1 -DCMPROF_PORT=CMPROF_PORT_SYSTICK -DCMPROF_STREAM=1 -DCMPROF_HIST=1 \
                        -DCMPROF_HIST_BASE=0x08000000u
SRC_test_fuzz_decoders := decode/itm.c decode/text.c decode/stream.c decode/textline.c decode/dumptasks.c decode/tpiu.c decode/orbflow.c decode/detect.c
SRC_test_pcindex := profile/pcindex.c
SRC_test_hex :=
SRC_test_aranges := $(SYM_SRC) -D_GNU_SOURCE -pthread -lelf -ldwarf -liberty -lm
SRC_test_sort := $(SYM_SRC) -D_GNU_SOURCE -pthread -lelf -ldwarf -liberty -lm
SRC_test_unwind := $(SYM_SRC) -D_GNU_SOURCE -pthread -lelf -ldwarf -liberty -lm
SRC_test_ingest := tests/elf_writer.c profile/ingest.c profile/profile.c profile/count.c profile/tasks.c profile/rows.c profile/calls.c profile/diagnose.c profile/loss.c profile/firmware.c profile/starved.c profile/stacks.c profile/pcindex.c profile/escape.c decode/itm.c decode/text.c decode/stream.c decode/textline.c decode/dumptasks.c decode/tpiu.c decode/orbflow.c decode/detect.c $(SYM_SRC) -D_GNU_SOURCE -pthread -lelf -ldwarf -liberty -lm
SRC_test_rsp := source/rsp.c
SRC_test_orbflow := decode/orbflow.c decode/detect.c decode/tpiu.c decode/itm.c
SRC_test_baseline := report/baseline.c -D_DEFAULT_SOURCE -lm
SRC_test_codemap := tests/elf_writer.c profile/profile.c profile/count.c profile/tasks.c profile/rows.c profile/calls.c profile/diagnose.c profile/loss.c profile/firmware.c profile/starved.c profile/stacks.c profile/pcindex.c profile/escape.c $(SYM_SRC) -D_GNU_SOURCE -pthread -lelf -ldwarf -liberty -lm
SRC_test_profile := tests/elf_writer.c profile/profile.c profile/count.c profile/tasks.c profile/rows.c profile/calls.c profile/diagnose.c profile/loss.c profile/firmware.c profile/starved.c profile/stacks.c profile/pcindex.c profile/escape.c $(SYM_SRC) -D_GNU_SOURCE -pthread -lelf -ldwarf -liberty -lm
SRC_test_view := tui/view.c tui/keys.c tui/rows.c tui/table.c tui/budgets.c tui/drill.c tui/draw.c tui/history.c tui/screen_top.c tui/screen_source.c tui/screen_annotate.c tui/screen_sections.c tui/screen_pages.c tui/screen_calls.c tui/screen_graph.c report/baseline.c profile/profile.c profile/count.c profile/tasks.c profile/rows.c profile/calls.c profile/diagnose.c profile/loss.c profile/firmware.c profile/starved.c profile/stacks.c profile/pcindex.c profile/escape.c profile/ingest.c $(SYM_SRC) decode/itm.c decode/text.c decode/stream.c decode/textline.c decode/dumptasks.c \
                 decode/tpiu.c decode/orbflow.c decode/detect.c -D_GNU_SOURCE -pthread -lelf -ldwarf -liberty -lm
SRC_test_ingest += profile/timeline.c
SRC_test_view += profile/timeline.c
SRC_test_timeline := profile/timeline.c
$(foreach c,$(SAMPLER_CONFIGS),$(eval SRC_test_sampler_$(c) := firmware/cmprof_sampler.c firmware/cmprof_tasks.c $(FAKE) -DCMPROF_NO_ISR=1 $(SAMPLER_$(c))))
$(foreach c,$(SAMPLER_CONFIGS),$(eval MAIN_test_sampler_$(c) := tests/test_sampler.c))

UNIT_NAMES := test_dwt test_section test_itm test_text test_hex test_tpiu test_detect test_fuzz_decoders test_orbflow test_rsp test_baseline test_pcindex test_aranges test_sort test_ingest test_profile test_codemap test_view \
              test_stream test_stream_many test_stream_sums test_stream_hist test_freertos test_stream_load \
              $(addprefix test_sampler_,$(SAMPLER_CONFIGS))
UNIT_NAMES += test_unwind
UNIT_NAMES += test_zephyr test_zephyr_pool
UNIT_NAMES += test_stream_churn test_stream_load_tn test_stream_churn_tn
UNIT_NAMES += test_stream_field_tn test_tag_names
UNIT_NAMES += test_stream_order test_stream_order_small
UNIT_NAMES += test_stream_reservoir
# the stream over RTT: a 512-byte buffer wraps often and fills while the host is behind
SRC_test_rtt := $(STREAM_BASE) firmware/cmprof_rtt.c -DCMPROF_RTT_SIZE=512u -DCMPROF_RTT_ROOM=256u
UNIT_NAMES += test_rtt
# ... and into an RTT channel the application already has (SEGGER's code, through the port hook)
SRC_test_rtt_external := $(STREAM_BASE) firmware/cmprof_rtt.c -DCMPROF_RTT_ROOM=128u -DCMPROF_RTT_EXTERNAL=1 \
                         -Itests '-DCMPROF_RTT_INCLUDE="rtt_channel.h"' \
                         '-DCMPROF_RTT_WRITE(b,n)=test_channel_write(b,n)' '-DCMPROF_RTT_ROOM_NOW()=test_channel_room()'
MAIN_test_rtt_external := tests/test_rtt.c
UNIT_NAMES += test_rtt_external
UNIT_NAMES += test_source_spec
UNIT_NAMES += test_gdb_pace
UNIT := $(addprefix $(B)/tests/plain/,$(UNIT_NAMES)) $(addprefix $(B)/tests/asan/,$(UNIT_NAMES))

unit: $(UNIT) $(B)/lookup-check $(B)/asan/lookup-check

# The tests' own files (the test, the firmware library's files in the test's configuration, the fake
# registers) at -O0: about 80 of them, each compiled in one configuration only, where -O1 took twice
# the CPU for no check (what they assert is behaviour, the same at any level, and ASan/UBSan check
# at -O0 too; the firmware's warnings at its real -Os are tests/firmware_builds.py's, for every core
# and option set). The host code they link stays the libraries' build (-O2, ASan's -O1).
UNIT_CFLAGS := $(filter-out -O%,$(CFLAGS)) -O0
define unit_rule
$(B)/tests/plain/$(1): $$(or $$(MAIN_$(1)),tests/$(1).c) $$(filter %.c,$$(SRC_$(1))) $(FW_DEPS) $(DEC_DEPS) tests/check.h $(LIB)
	@mkdir -p $$(@D)
	$$(CC) $$(UNIT_CFLAGS) $$(or $$(MAIN_$(1)),tests/$(1).c) $$(filter-out $(LIB_SRC),$$(SRC_$(1))) $(LIB) $(LIB_LIBS) -o $$@
$(B)/tests/asan/$(1): $$(or $$(MAIN_$(1)),tests/$(1).c) $$(filter %.c,$$(SRC_$(1))) $(FW_DEPS) $(DEC_DEPS) tests/check.h $(ASAN_LIB)
	@mkdir -p $$(@D)
	$$(CC) $$(filter-out -g,$$(UNIT_CFLAGS)) $$(SAN_DEBUG) $$(SAN) $$(or $$(MAIN_$(1)),tests/$(1).c) $$(filter-out $(LIB_SRC),$$(SRC_$(1))) $(ASAN_LIB) $(LIB_LIBS) -o $$@
endef
$(foreach t,$(UNIT_NAMES),$(eval $(call unit_rule,$(t))))
$(eval $(call unit_rule,test_timeline))
$(eval $(call unit_rule,test_stream_field_unique_tn))
unit: $(B)/tests/plain/test_timeline $(B)/tests/asan/test_timeline

# ---- fuzzing: libFuzzer targets (clang), and their saved crashes replayed by make test ----------
FUZZ_SECONDS ?= 60
fuzz: tool
	@scripts/deps.sh fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

# A target NAME is fuzz/fuzz_NAME.c plus the one line REPLAY_NAME (the other sources and flags it
# links, for both libFuzzer and the replay); its seeds are fuzz/seeds/NAME/ (scripts/fuzz.sh adds
# generated ones), its saved crashes fuzz/crashes/NAME/, replayed by make test through
# build/tests/asan/replay_NAME. FUZZ_UNREPLAYED: elf's saved inputs are libdwarf's own crashes,
# which the tool contains in a child (scripts/fuzz.sh triages them).
FUZZ_TARGETS := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_UNREPLAYED := elf
FUZZ_REPLAYED := $(filter-out $(FUZZ_UNREPLAYED),$(FUZZ_TARGETS))
REPLAY_ingest := fuzz/fuzz_ingest.c app/batch.c app/stop.c app/outfile.c $(REPORT_SRC) profile/ingest.c profile/profile.c profile/count.c profile/tasks.c profile/rows.c profile/calls.c profile/diagnose.c profile/loss.c profile/firmware.c profile/starved.c profile/stacks.c profile/pcindex.c profile/escape.c $(SYM_SRC) \
                 decode/itm.c decode/text.c decode/stream.c decode/textline.c decode/dumptasks.c decode/tpiu.c decode/orbflow.c decode/detect.c \
                 $(filter source/%,$(HOST_SRC)) -D_GNU_SOURCE -pthread -lelf -ldwarf -liberty -lserialport -lm
REPLAY_text := fuzz/fuzz_text.c decode/text.c decode/stream.c decode/textline.c decode/dumptasks.c
REPLAY_elf := fuzz/fuzz_elf.c $(SYM_SRC) -D_GNU_SOURCE -pthread -lelf -ldwarf -liberty -lm
REPLAY_orbflow := fuzz/fuzz_orbflow.c decode/orbflow.c decode/detect.c decode/itm.c decode/tpiu.c
REPLAY_baseline := fuzz/fuzz_baseline.c report/baseline.c -D_GNU_SOURCE -lm
REPLAY_openocd := fuzz/fuzz_openocd.c source/openocd.c source/outq.c source/net.c decode/itm.c -D_GNU_SOURCE
REPLAY_gdb := fuzz/fuzz_gdb.c source/gdb.c source/rsp.c source/outq.c source/net.c -D_GNU_SOURCE
REPLAY_rtt := fuzz/fuzz_rtt.c source/rtt.c source/rsp.c source/net.c -D_GNU_SOURCE
REPLAY_exidx := fuzz/fuzz_exidx.c symbols/exidx.c
REPLAY_record := fuzz/fuzz_record.c $(filter-out fuzz/fuzz_ingest.c,$(REPLAY_ingest))
REPLAY_ingest += $(EXPORTS_SRC) profile/timeline.c -lz
REPLAY_record += $(EXPORTS_SRC) profile/timeline.c -lz
REPLAY_stream := fuzz/fuzz_stream.c $(filter-out fuzz/fuzz_ingest.c,$(REPLAY_ingest))
# (the unreplayed targets built too, so that their drivers keep compiling against the code they call)
replay: $(addprefix $(B)/tests/asan/replay_,$(FUZZ_TARGETS))
# for scripts/fuzz.sh and tests/run.sh: the target names, and one target's sources
fuzz-targets:
	@echo $(FUZZ_TARGETS)
fuzz-replayed:
	@echo $(FUZZ_REPLAYED)
fuzz-sources-%:
	@echo $(REPLAY_$*)
$(B)/tests/asan/replay_%: fuzz/replay.c fuzz/fuzz_%.c $(wildcard fuzz/*.h) $(HOST_HDR) $(ASAN_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) $(SAN) fuzz/replay.c $(filter-out $(LIB_SRC),$(REPLAY_$*)) $(ASAN_LIB) $(LIB_LIBS) -o $@

# ---- QEMU reference scenarios ----------------------------------------------------------------
scenarios: deps tool
	python3 scenarios/scen.py run
	python3 scenarios/scen_check.py report

demo: deps tool
	@TARGET=$(TARGET) scripts/demo.sh

test: deps
	@tests/run.sh

bench: deps tool
	@scripts/deps.sh bench
	python3 bench/run_bench.py

# ---- installing: the tool, its man page and its bash completion, under $(DESTDIR)$(PREFIX) --------
PREFIX ?= /usr/local
BINDIR := $(DESTDIR)$(PREFIX)/bin
MANDIR := $(DESTDIR)$(PREFIX)/share/man/man1
COMPDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
install: tool
	install -d $(BINDIR) $(MANDIR) $(COMPDIR)
	install -m 755 $(TOOL) $(BINDIR)/cmprof-top
	install -m 644 docs/cmprof-top.1 $(MANDIR)/cmprof-top.1
	install -m 644 scripts/cmprof-top.bash-completion $(COMPDIR)/cmprof-top

uninstall:
	rm -f $(BINDIR)/cmprof-top $(MANDIR)/cmprof-top.1 $(COMPDIR)/cmprof-top

clean:
	rm -rf $(B)
