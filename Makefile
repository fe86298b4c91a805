# SPDX-License-Identifier: GPL-2.0
# Makefile: the one build of ctxprof-go; `make help` lists the targets.
OUTPUT ?= .output
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
PKG_CONFIG ?= pkg-config
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)

LIBS := libbpf libelf libdw jansson zlib
CFLAGS ?= -g -O2
WARNINGS := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
ALL_CFLAGS = $(CFLAGS) $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -DCTXPROF_VERSION='"$(VERSION)"' \
	-iquote . -I$(OUTPUT) $(shell $(PKG_CONFIG) --cflags $(LIBS) 2>/dev/null)
LDLIBS := $(shell $(PKG_CONFIG) --libs $(LIBS) 2>/dev/null || echo -lbpf -lelf -ldw -ljansson -lz)

# ASan+UBSan build of the same sources, in its own directory
SAN_OUTPUT := $(OUTPUT)/san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# cmd/: the entry and its subcommands (front ends); everything below them is
# a library, which the unit tests link from an archive: each takes only what it uses
CMD_SRCS := cmd/ctxprof-go.c cmd/profile.c cmd/check.c cmd/addr2line.c cmd/convert.c
LIB_SRCS := $(wildcard offsets/*.c) golayout/golayout.c \
	$(wildcard cmd/record/*.c cmd/symbols/*.c cmd/output/*.c cmd/util/*.c)
LIB_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(LIB_SRCS))
CMD_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(CMD_SRCS))
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
SAN_LIB_OBJS := $(patsubst %.c,$(SAN_OUTPUT)/%.o,$(LIB_SRCS))
SAN_CMD_OBJS := $(patsubst %.c,$(SAN_OUTPUT)/%.o,$(CMD_SRCS))
SAN_UNIT_BINS := $(patsubst tests/unit/%.c,$(SAN_OUTPUT)/tests/%,$(UNIT_SRCS))

GOLAYOUT_INC := $(OUTPUT)/golayout_rows.inc $(OUTPUT)/golayout_members.inc
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))
BPF_HDRS := $(wildcard bpf/*.h)
HDRS := $(wildcard offsets/*.h golayout/*.h cmd/*.h cmd/*/*.h bpf/*.h)

# make install: PREFIX, DESTDIR (a staging root, for packages) and each directory
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
# systemd looks in /lib/systemd/system for units of /usr, and in
# $(PREFIX)/lib/systemd/system for /usr/local's
ifeq ($(PREFIX),/usr)
UNITDIR ?= /lib/systemd/system
else
UNITDIR ?= $(PREFIX)/lib/systemd/system
endif
# the unit and the man page name the installed paths; the sources say /usr/local's
INSTALL_PATHS := sed -e 's|/usr/local/bin/|$(BINDIR)/|g' -e 's|/usr/local/lib/systemd/system/|$(UNITDIR)/|g'

Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
ifeq ($(V),1)
Q =
msg =
endif

.PHONY: all deps test test-only demo golayout bench soak fuzz clean help san unit install uninstall
.DELETE_ON_ERROR:
# keep the BPF object beside its skeleton
.SECONDARY:

all: ctxprof-go

help:
	@echo 'make            build ./ctxprof-go'
	@echo 'make deps       install Debian packages and Go toolchains (root)'
	@echo 'make test       deps, build, then every test (end-to-end ones need root)'
	@echo 'make demo       deps, build, then record the bundled demo service for 5 s'
	@echo 'make golayout   regenerate golayout/golayout.tsv from every installed Go'
	@echo 'make bench      ctxprof-go against pahole, go tool addr2line, bpftrace and perf'
	@echo 'make soak       ctxprof-go --all for 10 min of Go processes coming and going'
	@echo 'make fuzz       run the libFuzzer targets FUZZ_TIME seconds each (default 60)'
	@echo 'make install    install the binary, ctxprof-go(8) and ctxprof-go.service'
	@echo '                (PREFIX=/usr/local, DESTDIR, BINDIR, MANDIR, UNITDIR)'
	@echo 'make uninstall  remove what make install put there (not /var/log/ctxprof-go)'
	@echo 'make clean      remove ./ctxprof-go and .output/'
	@echo 'V=1             show the commands'

$(OUTPUT) $(OUTPUT)/tests $(SAN_OUTPUT)/tests:
	$(Q)mkdir -p $@

$(OUTPUT)/golayout_members.inc: golayout/modules.tsv golayout/modules2c.awk | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)awk -f golayout/modules2c.awk $< > $@

$(OUTPUT)/golayout_rows.inc: golayout/golayout.tsv golayout/tsv2c.awk | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)awk -f golayout/tsv2c.awk $< > $@

$(OUTPUT)/vmlinux.h: | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) $(OUTPUT)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -Wall -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I$(OUTPUT) -Ibpf -c $< -o $@

# the object is embedded in the binary; the skeleton's name is fixed so that code can rely on it
$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name ctxprof_bpf > $@

# make bench only: every g of a target read three ways (tests/bench/)
$(OUTPUT)/bench/wall_iter.bpf.o: tests/bench/wall_iter.bpf.c $(OUTPUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -Wall -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I$(OUTPUT) -c $< -o $@

$(OUTPUT)/bench/wall_iter.skel.h: $(OUTPUT)/bench/wall_iter.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name wall_iter_bpf > $@

$(OUTPUT)/bench/wall-read: tests/bench/wall_read.c $(OUTPUT)/bench/wall_iter.skel.h
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OUTPUT)/bench $< $(LDLIBS) -o $@

$(OUTPUT)/%.o: %.c $(GOLAYOUT_INC) $(BPF_SKELS) $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

ctxprof-go: $(CMD_OBJS) $(LIB_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/libctxprof.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUTPUT)/tests/%: tests/unit/%.c tests/unit/tap.h $(OUTPUT)/libctxprof.a | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Ioffsets $< $(OUTPUT)/libctxprof.a $(LDLIBS) -o $@

$(SAN_OUTPUT)/%.o: %.c $(GOLAYOUT_INC) $(BPF_SKELS) $(HDRS)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(ALL_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(SAN_OUTPUT)/ctxprof-go: $(SAN_CMD_OBJS) $(SAN_LIB_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CLANG) $(CFLAGS) $(SAN_FLAGS) $^ $(LDLIBS) -o $@

$(SAN_OUTPUT)/libctxprof.a: $(SAN_LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(SAN_OUTPUT)/tests/%: tests/unit/%.c tests/unit/tap.h $(SAN_OUTPUT)/libctxprof.a | $(SAN_OUTPUT)/tests
	$(call msg,TEST-SAN,$@)
	$(Q)$(CLANG) $(ALL_CFLAGS) $(SAN_FLAGS) -Ioffsets $< $(SAN_OUTPUT)/libctxprof.a $(LDLIBS) -o $@

unit: $(UNIT_BINS)
san: $(SAN_OUTPUT)/ctxprof-go $(SAN_UNIT_BINS)

# libFuzzer targets: the readers built with the fuzzer's coverage and ASan+UBSan
FUZZ_OUTPUT := $(OUTPUT)/fuzz
FUZZ_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ_OUTPUT)/%.o,$(wildcard offsets/*.c))

$(FUZZ_OUTPUT)/%.o: %.c $(wildcard offsets/*.h) $(GOLAYOUT_INC)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(ALL_CFLAGS) $(FUZZ_FLAGS) -c $< -o $@

$(FUZZ_OUTPUT)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS) $(FUZZ_OUTPUT)/golayout/golayout.o
	$(call msg,FUZZER,$@)
	$(Q)$(CLANG) $(ALL_CFLAGS) -fsanitize=fuzzer,address,undefined -Ioffsets $^ $(LDLIBS) -o $@

fuzz: $(patsubst tests/fuzz/fuzz_%.c,$(FUZZ_OUTPUT)/fuzz_%,$(wildcard tests/fuzz/fuzz_*.c))
	$(Q)bash tests/fuzz/run.sh

deps:
	$(Q)bash tests/deps.sh

# `make test` is what CI runs: it installs what is missing, then tests everything
test: deps
	$(Q)$(MAKE) --no-print-directory test-only

test-only: ctxprof-go unit san
	$(Q)bash tests/run.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory ctxprof-go
	$(Q)bash tests/demo.sh

golayout: ctxprof-go
	$(Q)bash golayout/generate.sh golayout/golayout.tsv golayout/modules.tsv

bench: ctxprof-go $(OUTPUT)/bench/wall-read
	$(Q)bash tests/bench.sh

# not part of `make test`: ten minutes of processes coming and going under --all
soak: ctxprof-go
	$(Q)bash tests/soak.sh

install: ctxprof-go | $(OUTPUT)
	$(call msg,INSTALL,$(DESTDIR)$(BINDIR)/ctxprof-go)
	$(Q)install -D -m 0755 ctxprof-go $(DESTDIR)$(BINDIR)/ctxprof-go
	$(call msg,INSTALL,$(DESTDIR)$(MANDIR)/man8/ctxprof-go.8)
	$(Q)$(INSTALL_PATHS) cmd/ctxprof-go.8 > $(OUTPUT)/ctxprof-go.8
	$(Q)install -D -m 0644 $(OUTPUT)/ctxprof-go.8 $(DESTDIR)$(MANDIR)/man8/ctxprof-go.8
	$(call msg,INSTALL,$(DESTDIR)$(UNITDIR)/ctxprof-go.service)
	$(Q)$(INSTALL_PATHS) cmd/ctxprof-go.service > $(OUTPUT)/ctxprof-go.service
	$(Q)install -D -m 0644 $(OUTPUT)/ctxprof-go.service $(DESTDIR)$(UNITDIR)/ctxprof-go.service

uninstall:
	$(call msg,RM,$(DESTDIR)$(BINDIR)/ctxprof-go)
	$(Q)rm -f $(DESTDIR)$(BINDIR)/ctxprof-go
	$(call msg,RM,$(DESTDIR)$(MANDIR)/man8/ctxprof-go.8)
	$(Q)rm -f $(DESTDIR)$(MANDIR)/man8/ctxprof-go.8
	$(call msg,RM,$(DESTDIR)$(UNITDIR)/ctxprof-go.service)
	$(Q)rm -f $(DESTDIR)$(UNITDIR)/ctxprof-go.service

clean:
	$(call msg,CLEAN,ctxprof-go $(OUTPUT))
	$(Q)rm -rf ctxprof-go $(OUTPUT)
