EXTENSION  = workload
EXTVERSION = $(shell sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" $(EXTENSION).control)
MODULE_big = workload
OBJS       = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c)))
DATA       = $(wildcard sql/$(EXTENSION)--*.sql)
PG_CPPFLAGS = -I$(srcdir)/src -DWL_EXTVERSION=\"$(EXTVERSION)\"
PG_CFLAGS  = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers -Wmissing-prototypes
# crypto.c calls OpenSSL (the library the server links) for SHA-256
SHLIB_LINK = -lcrypto

REGRESS        = $(patsubst test/sql/%.sql,%,$(sort $(wildcard test/sql/*.sql)))
REGRESS_OPTS   = --inputdir=test --load-extension=pgcrypto --load-extension=workload
ISOLATION      = $(patsubst test/specs/%.spec,%,$(sort $(wildcard test/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test --outputdir=.
# No TAP_TESTS: test/t/ holds bash scripts printing TAP, run by
# test/run-all.sh.  Declared with no *.pl file, `make installcheck` would fall
# back to `prove t/*.pl` and fail.
WORKER      = src/worker/workload-worker
EXTRA_CLEAN = results regression.diffs regression.out output_iso tmp_check log $(WORKER)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS does not track header dependencies: every object depends on every
# header, so a changed struct can never meet a stale object.
$(OBJS): $(wildcard src/*.h)

# Split targets so the test command can report each suite on its own.
installcheck-regress:
	$(pg_regress_installcheck) $(REGRESS_OPTS) $(REGRESS)

installcheck-isolation:
	$(pg_isolation_regress_installcheck) $(ISOLATION_OPTS) $(ISOLATION)

.PHONY: installcheck-regress installcheck-isolation

# The reference worker (a libpq client, not part of the module), installed
# beside pg_config --bindir.
all: $(WORKER)
$(WORKER): $(wildcard src/worker/*.c src/worker/*.h)
	$(CC) $(CFLAGS) -I$(libpq_srcdir) $(filter %.c,$^) -o $@ $(libpq)

install: install-worker
install-worker: $(WORKER)
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) $(WORKER) '$(DESTDIR)$(bindir)/workload-worker'

uninstall: uninstall-worker
uninstall-worker:
	rm -f '$(DESTDIR)$(bindir)/workload-worker'

.PHONY: install-worker uninstall-worker
