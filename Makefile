# Curator: `make run` and `make test` are the whole set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-installed
DEV_STAMP := $(VENV)/.requirements-dev-installed
BENCH_STAMP := $(VENV)/.requirements-bench-installed
NATIVE := ingestion/formats/native/pdfium_pages.so \
  retrieval/search_backends/snapshots/native/bm25_top.so

.PHONY: messages run serve static test test-fast test-browser bench bench-quick bench-peers lint format venv venv-dev venv-bench migrate clean

# What the service runs (requirements.txt): `make run`, `make serve`.
venv: $(STAMP) $(NATIVE)

# And the tests, lint, browser and benchmark tools (requirements-dev.txt). A stamp
# of its own, so that `make run` after `make test` installs nothing.
venv-dev: $(DEV_STAMP) $(NATIVE)

# The compiled reader of PDF pages (ingestion/formats/pdf_native.py) and top-k of
# keyword search (retrieval/search_backends/snapshots/bm25_native.py), loaded with
# ctypes: no Python headers needed. Without a C compiler the same code in Python
# and numpy does the work, to the same results, slower; the tests want them built.
# -ffp-contract=off: no fused multiply-adds, so their numbers equal Python's.
%.so: %.c
	$(CC) -O2 -shared -fPIC -ffp-contract=off -Wall -o $@ $< -lm \
	  || echo "warning: $@ not built ($(CC) failed); Python does its work, slower"

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

$(DEV_STAMP): $(STAMP) requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(DEV_STAMP)

# And the peers `bench/peers.py` measures Curator against (requirements-bench.txt:
# markitdown, Tantivy); only `make bench-peers` needs them.
venv-bench: $(BENCH_STAMP)

$(BENCH_STAMP): $(DEV_STAMP) requirements-bench.txt
	$(PY) -m pip install --quiet -r requirements-bench.txt
	touch $(BENCH_STAMP)

migrate: venv
	mkdir -p -m 700 var
	DEBUG=$${DEBUG:-true} $(PY) manage.py migrate --noinput

# Serves the pages, the API and the admin on 127.0.0.1:8000 with a worker beside it;
# Ctrl-C stops both.
run: migrate
	DEBUG=$${DEBUG:-true} $(PY) manage.py seed_demo
	export DEBUG=$${DEBUG:-true}; \
	$(PY) manage.py run_ingestion_worker --loop --worker-id make-run & \
	worker=$$!; trap 'kill $$worker 2>/dev/null; wait $$worker' EXIT INT TERM; \
	echo; echo "Curator: ask at http://127.0.0.1:8000/ (sign in as alice, bob or carol;"; \
	echo "password: DEMO_PASSWORD, by default curator-demo). Library: /library/, review: /review/"; echo; \
	$(PY) manage.py runserver 127.0.0.1:8000

# The admin's CSS and JavaScript into STATIC_ROOT, served with DEBUG off.
static: venv
	DEBUG=$${DEBUG:-true} $(PY) manage.py collectstatic --noinput -v0

# The production web server (gunicorn, config/gunicorn.conf.py: WEB_BIND,
# WEB_WORKERS, WEB_THREADS, WEB_TIMEOUT from the environment). Needs the production
# settings (SECRET_KEY...) and workers of their own: docs/operations.md. With DEBUG
# off it first logs each warning of `manage.py check --deploy` (plain-HTTP settings).
serve: migrate static
	$(VENV)/bin/gunicorn -c config/gunicorn.conf.py

test: venv-dev
	$(PY) -m pytest $(PYTEST_ARGS)

# The edit-run loop: everything but the tests marked slow (other Curator processes)
# and the browser test. `make test` (CI) still runs them all.
test-fast: venv-dev
	$(PY) -m pytest -m "not slow and not browser" $(PYTEST_ARGS)

# The admin and the pages in headless Chromium (Debian's `chromium` at
# /usr/bin/chromium) with a real worker; screenshots in var/screenshots/. `make
# test` leaves it out.
test-browser: venv-dev
	$(PY) -m pytest -m browser tests/browser $(PYTEST_ARGS)

# Benchmarks (not tests): print tables and rewrite their sections of
# docs/benchmarks.md. Needs PostgreSQL on 127.0.0.1:5432 for the PostgreSQL rows.
bench: venv-dev
	$(PY) bench/claiming.py --database sqlite
	$(PY) bench/claiming.py --database postgresql
	$(PY) bench/submit_latency.py
	$(PY) bench/submit_latency.py --database-url postgres://postgres@127.0.0.1:5432/curator_bench
	$(PY) bench/submit_to_claim.py
	$(PY) bench/ingestion_throughput.py
	$(PY) bench/query_latency.py
	$(PY) bench/publish_stream.py
	$(PY) bench/script_normalisation.py
	$(PY) bench/passage_diff.py
	$(PY) bench/ocr_engines.py
	$(PY) bench/hostile_inputs.py

# The same measurements, smaller, in under two minutes (numbers are noisier).
bench-quick: venv-dev
	$(PY) bench/claiming.py --quick --workers 1 8 --database sqlite
	$(PY) bench/claiming.py --quick --workers 1 8 --database postgresql
	$(PY) bench/submit_latency.py --quick
	$(PY) bench/ingestion_throughput.py --quick --workers 1
	$(PY) bench/query_latency.py --quick

# Curator against markitdown and Tantivy, side by side (docs/benchmarks.md, "Curator
# and the tools people would pick instead"); about 15 minutes with QUICK=1.
bench-peers: venv-bench
	$(PY) bench/peers.py $(if $(QUICK),--quick) --json var/bench/peers.json

# The scale curve to a million published chunks and the approximate vector index
# (about 25 minutes and 6 GiB of disk under var/bench; --reuse keeps the chunks).
.PHONY: bench-million
bench-million: venv-dev
	$(PY) bench/million_chunks.py

# ruff, and the import contracts of pyproject.toml (docs/architecture.md, Layers).
lint: venv-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

format: venv-dev
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# The pages' strings and the error hints they show: update each app's
# locale/*/django.po, then compile the .mo files (committed, so an install needs
# no gettext). Needs GNU gettext (Debian: gettext).
messages: venv
	for app in web ingestion; do \
	  (cd $$app && DEBUG=true ../$(PY) ../manage.py makemessages -l zh_Hans --no-obsolete \
	   && DEBUG=true ../$(PY) ../manage.py compilemessages) || exit 1; \
	done

clean:
	rm -rf $(VENV) var $(NATIVE)
