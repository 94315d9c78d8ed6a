# Two commands: `make lab` opens the book, `make test` runs every test and notebook.
# Everything is installed into .venv; nothing is registered outside it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.labkit-installed
BROWSER_STAMP := $(VENV)/.labkit-browser-installed
# keep Jupyter's and matplotlib's per-user files inside .venv
export JUPYTER_CONFIG_DIR := $(CURDIR)/$(VENV)/etc/jupyter-user
export JUPYTER_DATA_DIR := $(CURDIR)/$(VENV)/share/jupyter-user
export JUPYTER_RUNTIME_DIR := $(CURDIR)/$(VENV)/share/jupyter-runtime
export IPYTHONDIR := $(CURDIR)/$(VENV)/ipython
export MPLCONFIGDIR := $(CURDIR)/$(VENV)/matplotlib
export PYTHONHASHSEED := 0
export HF_HUB_DISABLE_TELEMETRY := 1
# tests never reach the real Hub: a stray download fails at once on a closed local port
test test-browser check: export HF_ENDPOINT := http://127.0.0.1:9

.PHONY: lab test test-browser book check install notebooks clean

install: $(STAMP)

# uv (from PyPI, into .venv) installs the same packages as pip in a fraction of the time
# (24 s against 61 s here, downloads and bytecode included: with PYTHONDONTWRITEBYTECODE set,
# as on these machines, nothing else would compile it); pip does it if uv cannot. setuptools' note on
# editable installs (a folder named like the package may shadow it) is about this very layout,
# where the folder is the package: that note is silenced, the installer's own output is not
INSTALL = PYTHONWARNINGS="ignore:::setuptools.command.editable_wheel" $(PY) -m uv pip install --compile-bytecode --python $(PY) -e
PIP_INSTALL = $(PY) -m pip install --progress-bar on -e

$(STAMP): pyproject.toml
	@echo "labkit: installing into $(VENV) (the first time takes under a minute) ..."
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet uv || echo "labkit: uv could not be installed; pip installs instead"
	$(INSTALL) '.[test]' || $(PIP_INSTALL) '.[test]'
	$(PY) -c "import labkit, tokenizers, jupyterlab" # fails loudly if the install did not complete
	$(PY) tools/lab_settings.py
	touch $(STAMP)

# root (a container, CI) needs --allow-root; LAB_ARGS passes anything else (--port, --no-browser)
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: $(STAMP)
	$(VENV)/bin/jupyter trust $(wildcard notebooks/*.ipynb notebooks/solutions/*.ipynb) > /dev/null
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $(ROOT_FLAG) $(LAB_ARGS)

# both cores: tests spread freely; a notebook's cells stay together on one worker (loadscope).
# The first run needs no nbval: loading it (nbformat, jsonschema) costs every pytest process ~2 s CPU
JOBS ?= 2
test: $(STAMP)
	$(PY) -m pytest tests labkit --doctest-modules -q -n $(JOBS) --dist worksteal -p no:nbval
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg -p no:cacheprovider notebooks -q -n $(JOBS) --dist loadscope

# one notebook, checked as `make test` checks it: make check NB=04_wordpiece
check: $(STAMP)
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg -p no:cacheprovider notebooks/$(NB).ipynb -q

# the static edition: build/book/index.html and one page per notebook, readable offline
book: $(STAMP)
	$(PY) tools/make_book.py

# the book in a real browser (Debian's chromium, installed if missing; Playwright never downloads one)
$(BROWSER_STAMP): $(STAMP)
	$(INSTALL) '.[test,browser]' || $(PIP_INSTALL) '.[test,browser]'
	touch $(BROWSER_STAMP)

test-browser: $(BROWSER_STAMP) book
	$(PY) tools/browser_check.py

# rebuild the stored notebooks from notebooks/src (executes each one)
notebooks: $(STAMP)
	$(PY) tools/make_notebook.py --all

clean:
	rm -rf $(VENV) build
