# Two commands: `make lab` opens the book, `make test` runs every test and notebook.
# Everything is installed into .venv; nothing is registered outside it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.labkit-installed
# keep Jupyter's and matplotlib's per-user files inside .venv
export JUPYTER_CONFIG_DIR := $(CURDIR)/$(VENV)/etc/jupyter-user
export JUPYTER_DATA_DIR := $(CURDIR)/$(VENV)/share/jupyter-user
export JUPYTER_RUNTIME_DIR := $(CURDIR)/$(VENV)/share/jupyter-runtime
export IPYTHONDIR := $(CURDIR)/$(VENV)/ipython
export MPLCONFIGDIR := $(CURDIR)/$(VENV)/matplotlib
export PYTHONHASHSEED := 0
export HF_HUB_DISABLE_TELEMETRY := 1
# tests never reach the real Hub: a stray download fails at once on a closed local port
test: export HF_ENDPOINT := http://127.0.0.1:9

.PHONY: lab test install notebooks clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# root (a container, CI) needs --allow-root; LAB_ARGS passes anything else (--port, --no-browser)
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: $(STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $(ROOT_FLAG) $(LAB_ARGS)

# both cores: tests spread freely; a notebook's cells stay together on one worker (loadscope)
JOBS ?= 2
test: $(STAMP)
	$(PY) -m pytest tests -q -n $(JOBS) --dist worksteal
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg -p no:cacheprovider notebooks -q -n $(JOBS) --dist loadscope

# rebuild the stored notebooks from notebooks/src (executes each one)
notebooks: $(STAMP)
	$(PY) tools/make_notebook.py --all

clean:
	rm -rf $(VENV)
