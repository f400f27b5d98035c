# exitscope — build the command, the runtime and the tests.
#   make            build/exitscope, build/lib/libexitscope.so, test targets
#   make test       build and run the whole test suite (ends with "N passed, N failed")
#   make demo       run the bundled demo under exitscope
#   make asan       unit tests and torture targets under ASan/UBSan (CLI + unit tests)
#   make valgrind   unit tests under valgrind
#   make bench      benchmarks (see bench/)
#   make install PREFIX=/usr/local [DESTDIR=/staging]   (uninstall: the same with make uninstall)

CC      ?= cc
PREFIX  ?= /usr/local
O       ?= build
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
CFLAGS  ?= -O2 -g
override CFLAGS += $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -Isrc -I$(O)/gen -MMD -MP
# The runtime is a guest inside someone else's process: no stack protector
# (it runs before and beside the program's TLS set-up), hidden symbols.
# -Wstack-usage: no runtime function may take more than 8 KiB of stack (a
# frame that large would overflow the service thread or a program stack;
# the deep paths run on the boundary stack, see windows.c).
RT_CFLAGS := -mgeneral-regs-only -fPIC -fvisibility=hidden -fno-stack-protector -fno-builtin -ftls-model=initial-exec \
             -fno-omit-frame-pointer -Wstack-usage=8192
# No C library: the runtime imports nothing (-z defs makes an import a link
# error), since the loader of static programs links the same objects.
# libgcc (static) for the 128-bit divisions and popcount gcc calls out to.
RT_LDFLAGS := -shared -nostdlib -Wl,-z,defs -Wl,--version-script=src/runtime/exports.map -Wl,-z,now \
              -Wl,-z,noexecstack
RT_LIBS    := -lgcc

COMMON_SRC  := $(wildcard src/common/*.c)
RUNTIME_SRC := $(wildcard src/runtime/*.c src/runtime/*/*.c src/runtime/*.S src/runtime/*/*.S)
CLI_SRC     := $(wildcard src/cli/*.c)
TARGET_SRC  := $(wildcard tests/targets/*.c)
UNIT_SRC    := $(wildcard tests/unit/*.c)

RUNTIME_OBJ := $(patsubst %,$(O)/rt/%.o,$(RUNTIME_SRC) $(COMMON_SRC))
# exitscope-ld: the loader for static programs, with the same runtime objects
LOADER_SRC  := $(wildcard src/loader/*.c src/loader/*.S)
LOADER_OBJ  := $(patsubst %,$(O)/rt/%.o,$(LOADER_SRC))
CLI_OBJ     := $(patsubst %,$(O)/cli/%.o,$(CLI_SRC) $(COMMON_SRC))
TARGETS     := $(patsubst tests/targets/%.c,$(O)/targets/%,$(TARGET_SRC))
TF_LIBS     := $(O)/targets/tf_dl_a.so $(O)/targets/tf_dl_b.so
UNITS       := $(patsubst tests/unit/%.c,$(O)/unit/%,$(UNIT_SRC))
GEN         := $(O)/gen/syscall_table.h
ASSETS      := $(wildcard src/cli/assets/*)

all: $(O)/exitscope $(O)/lib/libexitscope.so $(O)/lib/exitscope-ld $(O)/demo/demo $(TARGETS) $(TF_LIBS) $(UNITS)

$(GEN): scripts/gen-syscall-table.sh
	@mkdir -p $(dir $@)
	sh scripts/gen-syscall-table.sh > $@.tmp && mv $@.tmp $@

$(O)/gen/assets.h: scripts/embed-assets.sh $(ASSETS)
	@mkdir -p $(dir $@)
	sh scripts/embed-assets.sh $(ASSETS) > $@.tmp && mv $@.tmp $@

$(O)/rt/%.c.o: %.c $(GEN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(RT_CFLAGS) -DXS_RUNTIME -c $< -o $@
# the string functions' own loops must not become calls to themselves
$(O)/rt/src/runtime/freestanding.c.o: RT_CFLAGS += -fno-tree-loop-distribute-patterns
$(O)/rt/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(RT_CFLAGS) -DXS_RUNTIME -c $< -o $@
$(O)/cli/%.c.o: %.c $(GEN) $(O)/gen/assets.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(O)/lib/libexitscope.so: $(RUNTIME_OBJ) src/runtime/exports.map
	@mkdir -p $(dir $@)
	$(CC) $(RT_LDFLAGS) -o $@ $(RUNTIME_OBJ) $(RT_LIBS)

# A static-pie that relocates itself (src/loader/loader.c) and needs no libc.
$(O)/lib/exitscope-ld: $(LOADER_OBJ) $(RUNTIME_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -static-pie -nostdlib -Wl,-z,now -Wl,-z,noexecstack -o $@ $(LOADER_OBJ) $(RUNTIME_OBJ) -lgcc

$(O)/exitscope: $(CLI_OBJ)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) -lm

# Test targets: small programs that do one thing each. Built with frame
# pointers so later profiler tests can use them too.
# th_hostile without debug info or local symbols: perf names a frame by
# what addr2line finds (DWARF, else the local h_title) when that differs
# from the symbol, and the hostile global names are what the test is about.
$(O)/targets/th_hostile: tests/targets/th_hostile.c tests/targets/tt_common.h
	@mkdir -p $(dir $@)
	$(CC) -O1 -fno-omit-frame-pointer -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -Iinclude -Wl,--discard-all -o $@ $< -lpthread

$(O)/targets/%: tests/targets/%.c tests/targets/tt_common.h
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -Iinclude -o $@ $< -lpthread

# The fast-path torture targets share tf_common.h; tf_dlopen loads two small
# libraries built alike (same size and layout, one system call number differs).
$(filter $(O)/targets/tf_%,$(TARGETS)): tests/targets/tf_common.h
$(O)/targets/tf_dl_%.so: tests/targets/tf_dl_%.S tests/targets/tf_dl.inc
	@mkdir -p $(dir $@)
	$(CC) -shared -nostdlib -Wl,-z,noexecstack -o $@ $<

$(O)/demo/demo: demo/demo.c include/exitscope.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -Wextra -Iinclude -o $@ $< -lpthread

$(O)/unit/%: tests/unit/%.c tests/unit/unit.h $(COMMON_SRC) $(wildcard src/common/*.h) $(GEN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(UNIT_CFLAGS) -o $@ $< $(COMMON_SRC)

# the runtime's own C library, compiled into its test as into the runtime
$(O)/unit/test_freestanding: src/runtime/freestanding.c src/runtime/procenv.c src/runtime/freestanding.h
$(O)/unit/test_freestanding: UNIT_CFLAGS += -fno-tree-loop-distribute-patterns

test: all
	tests/run

demo: all
	tests/demo.sh

asan:
	$(MAKE) O=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	    LDFLAGS="-fsanitize=address,undefined" build-asan/exitscope $(patsubst $(O)/%,build-asan/%,$(UNITS))
	XS_BUILD=build-asan tests/run-unit

valgrind: all
	XS_UNIT_WRAPPER="valgrind -q --error-exitcode=99 --leak-check=full" tests/run-unit

bench: all
	bench/run

# The binary finds the runtime at ../lib/exitscope/ from its own directory.
MANDIR    ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALLED := $(PREFIX)/bin/exitscope $(PREFIX)/lib/exitscope/libexitscope.so $(PREFIX)/lib/exitscope/exitscope-ld \
             $(PREFIX)/include/exitscope.h \
             $(MANDIR)/man1/exitscope.1 $(BASHCOMPDIR)/exitscope

install: $(O)/exitscope $(O)/lib/libexitscope.so $(O)/lib/exitscope-ld
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/exitscope $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	install -m 755 $(O)/exitscope $(DESTDIR)$(PREFIX)/bin/exitscope
	install -m 755 $(O)/lib/libexitscope.so $(DESTDIR)$(PREFIX)/lib/exitscope/libexitscope.so
	install -m 755 $(O)/lib/exitscope-ld $(DESTDIR)$(PREFIX)/lib/exitscope/exitscope-ld
	install -m 644 include/exitscope.h $(DESTDIR)$(PREFIX)/include/exitscope.h
	install -m 644 docs/exitscope.1 $(DESTDIR)$(MANDIR)/man1/exitscope.1
	install -m 644 completions/exitscope.bash $(DESTDIR)$(BASHCOMPDIR)/exitscope

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(PREFIX)/lib/exitscope

clean:
	rm -rf build build-asan

.PHONY: all test demo asan valgrind bench install uninstall clean
-include $(shell find $(O) -name '*.d' 2>/dev/null)
