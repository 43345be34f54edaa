# ---
# jupyter:
#   course:
#     accelerator: GPU
#     duration:
#       cpu: 15
#       t4: 15
#     level: 1
#     profiles:
#     - CPU
#     - Colab T4
#     - Kaggle T4 x2
#     - Colab TPU
#     - Kaggle TPU
#     - NVIDIA
#     - MPS
#     title:
#       de: Welche Hardware habe ich?
#       en: What hardware do I have?
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Before we measure anything we need to know what we are measuring on. In this lesson you
#
# - run the course's **pre-flight check** and read its OK / WARN / FAIL lines,
# - learn what a CPU, a GPU and a TPU are good at, and where you can get each for free,
# - switch the runtime on Colab and Kaggle,
# - ask the machine itself: `nvidia-smi`, `torch.accelerator`, `jax.devices()`,
# - and replace the classic `"cuda" if ... else "cpu"` line with one that knows today's devices.
#
# The course starts from the claims a typical glossary page makes about GPUs and TPUs ("10 to
# 1000 times faster", "TPUs are mainly for training", ...). Section 8 lists them, each with the
# lesson that tests it.
#
# Run the setup cell below first. It prints where you are (platform), what will compute
# (accelerator) and the language of the messages.

# %% [markdown] lang="de"
# Bevor wir etwas messen, müssen wir wissen, worauf wir messen. In dieser Lektion
#
# - führst du den **Pre-Flight-Check** des Kurses aus und liest seine OK-, WARN- und FAIL-Zeilen,
# - lernst du, wofür CPU, GPU und TPU gut sind und wo du sie jeweils kostenlos bekommst,
# - wechselst du die Laufzeitumgebung auf Colab und Kaggle,
# - fragst du die Maschine selbst: `nvidia-smi`, `torch.accelerator`, `jax.devices()`,
# - und ersetzt die klassische Zeile `"cuda" if ... else "cpu"` durch eine, die auch heutige Geräte
#   kennt.
#
# Der Kurs geht von den Behauptungen aus, die eine typische Glossarseite über GPUs und TPUs
# aufstellt („10- bis 1000-mal schneller“, „TPUs sind vor allem fürs Training da“, …). Abschnitt 8
# listet sie auf, jede mit der Lektion, die sie prüft.
#
# Führe zuerst die Setup-Zelle unten aus. Sie zeigt, wo du bist (Plattform), womit gerechnet wird
# (Beschleuniger) und in welcher Sprache die Meldungen erscheinen.

# %% [markdown] lang="en"
# ## 1. The pre-flight check
#
# Workshop participants run this the day before (`python -m utils.preflight` in a terminal,
# or the cell below). Every line is one item; every WARN or FAIL says how to fix it.

# %% [markdown] lang="de"
# ## 1. Der Pre-Flight-Check
#
# Wenn du an einem Workshop teilnimmst, führ ihn am Vortag aus: im Terminal mit
# `python -m utils.preflight --lang de` oder mit der Zelle unten. Jede Zeile prüft einen Punkt; bei
# jedem WARN oder FAIL steht dabei, wie du es behebst.

# %%
from utils.preflight import command as preflight

checks = preflight.preflight()

# %% [markdown] lang="en"
# ## 2. CPU, GPU, TPU: three kinds of processor
#
# Modern models are mostly **matrix multiplications**: billions of multiply-adds that do not
# depend on each other and can all run at once.
#
# - A **CPU** has a few strong cores (a free Colab machine has 2 vCPUs, which on Google Cloud are
#   two hardware threads, about one physical core; a laptop has 8–24 cores). Each core is
#   fast at branchy, general-purpose code and also has vector units that work on several numbers at once.
# - A **GPU** has thousands of simple lanes and, since 2017 (NVIDIA Volta), *tensor cores*:
#   units that multiply small matrix tiles in one step. Beside them sits a large, fast memory.
# - A **TPU** (Tensor Processing Unit, Google) is built around *systolic arrays*: a grid of
#   multiply-add cells through which matrix tiles flow. Of the three, it is the most specialised.
#
# A typical glossary page compares GPU and TPU in a table like the one below, and says TPUs are
# mainly for training (claims C3 and C4). Here is that table, corrected and brought up to date:
#
# | | GPU | TPU |
# |---|---|---|
# | made by | NVIDIA, AMD, Intel | Google |
# | used for | training and inference | training **and inference** (Cloud TPU sells both; Google serves its own models on TPUs) |
# | available | cloud, local machines, free on Colab (T4) and Kaggle (T4 x2) | Google Cloud; **free** on Colab (TPU v5e-1, one device) and Kaggle (TPU v5e-8, eight devices) |
# | frameworks | PyTorch, JAX, TensorFlow | **JAX**, PyTorch (through PyTorch/XLA), TensorFlow |
#
# *As of November 2026. Sources: Google Cloud TPU documentation; Colab's runtime list
# (googlecolab/colabtools#5566: the TPU v2-8 was replaced by v5e-1 in September 2025);
# JAX AI stack (jax-ml/jax-ai-stack#242: Kaggle offers v5e-8). Free offers change often:
# lesson 09 (Costs and alternatives) lists each with the date it was read and its source, so you
# can check them again.*

# %% [markdown] lang="de"
# ## 2. CPU, GPU, TPU: drei Arten von Prozessoren
#
# Moderne Modelle sind vor allem **Matrixmultiplikationen**: Milliarden von Multiplikationen und
# Additionen, die nicht voneinander abhängen und deshalb alle gleichzeitig laufen können.
#
# - Eine **CPU** hat wenige starke Kerne (eine kostenlose Colab-Maschine hat 2 vCPUs, auf Google
#   Cloud zwei Hardware-Threads, also etwa ein physischer Kern; ein Laptop hat 8–24 Kerne).
#   Jeder Kern ist schnell bei verzweigtem, allgemeinem Code und hat zusätzlich Vektoreinheiten,
#   die mehrere Zahlen auf einmal verarbeiten.
# - Eine **GPU** hat Tausende einfacher Rechenwerke und seit 2017 (NVIDIA Volta) *Tensor Cores*:
#   Einheiten, die kleine Matrixkacheln in einem Schritt multiplizieren. Direkt daneben sitzt ein
#   großer, schneller Speicher.
# - Eine **TPU** (Tensor Processing Unit, Google) ist um *systolische Arrays* herum gebaut: ein
#   Gitter aus Multiplikations-Additions-Zellen, durch das die Matrixkacheln hindurchfließen. Von
#   den dreien ist sie am stärksten spezialisiert.
#
# Eine typische Glossarseite vergleicht GPU und TPU in einer Tabelle wie der unten und sagt, TPUs
# seien vor allem fürs Training da (Behauptungen C3 und C4). Hier ist diese Tabelle, korrigiert und
# auf den heutigen Stand gebracht:
#
# | | GPU | TPU |
# |---|---|---|
# | Hersteller | NVIDIA, AMD, Intel | Google |
# | Einsatz | Training und Inferenz | Training **und Inferenz** (Cloud TPU bietet beides an; Google betreibt seine eigenen Modelle auf TPUs) |
# | Verfügbarkeit | Cloud, lokale Rechner, kostenlos auf Colab (T4) und Kaggle (T4 x2) | Google Cloud; **kostenlos** auf Colab (TPU v5e-1, ein Gerät) und Kaggle (TPU v5e-8, acht Geräte) |
# | Frameworks | PyTorch, JAX, TensorFlow | **JAX**, PyTorch (über PyTorch/XLA), TensorFlow |
#
# *Stand: November 2026. Quellen: Google-Cloud-TPU-Dokumentation; Colabs Laufzeitliste
# (googlecolab/colabtools#5566: Die TPU v2-8 wurde im September 2025 durch v5e-1 ersetzt); JAX AI
# Stack (jax-ml/jax-ai-stack#242: Kaggle bietet v5e-8 an). Kostenlose Angebote ändern sich oft:
# Lektion 09 (Kosten und Alternativen) führt jedes mit dem Datum, an dem es abgerufen wurde, und
# seiner Quelle auf, damit du sie nachprüfen kannst.*

# %% [markdown] lang="en"
# A GPU and a TPU side by side (not to scale), drawn from the course's chip table. A T4 has 40
# streaming multiprocessors (SMs), and its 320 tensor cores sit inside them, 8 per SM. Below them
# is the memory hierarchy: the smaller a level, the closer to the arithmetic and the faster. A TPU
# v5e chip has one TensorCore with **four** matrix units (MXUs), each a 128×128 systolic array,
# beside a vector unit and a scalar unit; its chips talk to their neighbours directly over the
# inter-chip interconnect (ICI), not through the host. The sources are printed under the picture.

# %% [markdown] lang="de"
# Eine GPU und eine TPU nebeneinander (nicht maßstäblich), gezeichnet aus der Chip-Tabelle des
# Kurses. Eine T4 hat 40 Streaming Multiprocessors (SMs), und ihre 320 Tensor Cores sitzen darin,
# 8 pro SM. Darunter liegt die Speicherhierarchie: Je kleiner eine Ebene, desto näher liegt sie am
# Rechenwerk und desto schneller ist sie. Ein TPU-v5e-Chip hat einen TensorCore mit **vier**
# Matrixeinheiten (MXUs), jede ein systolisches Array aus 128×128 Zellen, daneben eine Vektor- und
# eine Skalareinheit; seine Chips sprechen über die Chip-zu-Chip-Verbindung (ICI) direkt mit ihren
# Nachbarn, nicht über den Host. Die Quellen stehen unter dem Bild.

# %%
import matplotlib.pyplot as plt

from utils import diagrams

diagrams.chip_diagram("T4", "TPU v5e")
plt.show()

# %% [markdown] lang="en"
# ## 3. What is in *this* machine?
#
# `utils.platform.hardware.detect()` asks PyTorch (and JAX, once it is imported) and reads the CPU's
# model and instruction-set flags. The course turns the answer into a **hardware profile**;
# later lessons use it to choose problem sizes, so the same notebook is quick on a laptop CPU
# and still meaningful on a GPU.

# %% [markdown] lang="de"
# ## 3. Was steckt in *dieser* Maschine?
#
# `utils.platform.hardware.detect()` fragt PyTorch (und JAX, sobald es importiert ist) und liest
# Modell und Befehlssatz-Flags der CPU aus. Der Kurs macht daraus ein **Hardware-Profil**; spätere
# Lektionen wählen danach ihre Problemgrößen, sodass dasselbe Notebook auf einer Laptop-CPU schnell
# durchläuft und auf einer GPU trotzdem aussagekräftig ist.

# %%
# en: JAX is imported here, not in the setup cell: lesson 04 sets up its devices first.
# de: JAX kommt erst hier, nicht in der Setup-Zelle: Lektion 04 richtet vorher die Geräte ein.
import jax

from utils.i18n import say, text
from utils.platform import hardware, profiles, runtime

platform = runtime.detect_platform()
hw = hardware.detect()
profile = profiles.hardware_profile(platform, hw)

say("CPU:         {model}", "CPU:         {model}", model=hw.cpu.model)
say("cores:       {cores}", "Kerne:       {cores}", cores=hw.cpu.cores)
say(
    "bf16 in CPU: {bf16}",
    "bf16-Befehle: {bf16}",
    bf16=text("yes", "ja") if hw.cpu.has_fast_bf16 else text("no", "nein"),
)
for blas in hardware.blas_info():
    say("BLAS:        {blas}", "BLAS:        {blas}", blas=blas)
for gpu in hw.gpus:
    say(
        "GPU {i}:       {name}, {gib:.1f} GiB, compute capability {cc}, fast dtype: {dtype}",
        "GPU {i}:       {name}, {gib:.1f} GiB, Compute Capability {cc}, "
        "schneller Datentyp: {dtype}",
        i=gpu.index,
        name=gpu.name,
        gib=gpu.memory_gib,
        cc=".".join(map(str, gpu.compute_capability)),
        dtype=gpu.fast_dtype,
    )
if hw.tpu:
    say(
        "TPU:         {count} × {kind}",
        "TPU:         {count} × {kind}",
        count=hw.tpu.count,
        kind=hw.tpu.kind,
    )
for problem in hw.problems:
    say("problem:     {p}", "Problem:     {p}", p=problem)
say(
    "profile:     {name} - {label}",
    "Profil:      {name} – {label}",
    name=profile.name,
    label=profile.label,
)

# %% [markdown] lang="en"
# A profile also chooses sizes. Later lessons ask for, say, the side of a square matrix:

# %% [markdown] lang="de"
# Ein Profil wählt auch Größen. Spätere Lektionen fragen zum Beispiel nach der Seitenlänge einer
# quadratischen Matrix:

# %%
n = profile.pick(cpu=1024, cuda=8192, tpu=8192, mps=4096)
say("matrix side for this profile: {n}", "Seitenlänge der Matrix für dieses Profil: {n}", n=n)

# %% [markdown] lang="en"
# ### What you should see
#
# | profile | `hw.accelerator` | GPUs / TPU devices | notes |
# |---|---|---|---|
# | CPU only (laptop, CI) | `cpu` | 0 | lessons pick small sizes |
# | Colab T4 | `cuda` | 1 × Tesla T4, compute capability 7.5, ~15 GiB | fast dtype is **fp16**, not bf16 |
# | Kaggle T4 x2 | `cuda` | 2 × Tesla T4 | two devices: `cuda:0`, `cuda:1` |
# | Colab TPU v5e-1 | `tpu` | 1 TPU device | sharding needs more than one device (lesson 04) |
# | Kaggle TPU v5e-8 | `tpu` | 8 TPU devices | |
# | Mac with Apple silicon | `mps` | – | the GPU shares memory with the CPU |

# %% [markdown] lang="de"
# ### Was du sehen solltest
#
# | Profil | `hw.accelerator` | GPUs / TPU-Geräte | Hinweise |
# |---|---|---|---|
# | nur CPU (Laptop, CI) | `cpu` | 0 | Lektionen wählen kleine Größen |
# | Colab T4 | `cuda` | 1 × Tesla T4, Compute Capability 7.5, ca. 15 GiB | schneller Datentyp ist **fp16**, nicht bf16 |
# | Kaggle T4 x2 | `cuda` | 2 × Tesla T4 | zwei Geräte: `cuda:0`, `cuda:1` |
# | Colab TPU v5e-1 | `tpu` | 1 TPU-Gerät | Sharding braucht mehr als ein Gerät (Lektion 04) |
# | Kaggle TPU v5e-8 | `tpu` | 8 TPU-Geräte | |
# | Mac mit Apple Silicon | `mps` | – | die GPU teilt sich den Speicher mit der CPU |

# %% [markdown] lang="en"
# ## 4. Switching the runtime
#
# A fresh notebook on Colab or Kaggle runs on a CPU. To get an accelerator (as of November 2026):
#
# - **Colab:** *Runtime → Change runtime type → T4 GPU* (or *v5e-1 TPU*) → *Save*. The runtime
#   restarts: everything in memory is gone, so run the setup cell again. The course's notebooks
#   already ask for a T4 in their metadata, so Colab usually offers it by itself.
# - **Kaggle:** in the right-hand panel, *Session options → Accelerator → GPU T4 x2* (or
#   *TPU v5e-8*). Avoid *GPU P100*: the PyTorch in Kaggle's image has no kernels for it.
#   Kaggle notebooks start with the internet **off**; the setup cell needs it on (or the course
#   attached as a dataset), and turning it on needs a phone-verified account.
# - **Local:** nothing to switch; `nvidia-smi` (NVIDIA) or *About This Mac* (Apple) tells you what you have.
#
# Free GPU time is limited: Kaggle gives about 30 GPU hours a week; Colab's limits are not
# published and change with demand.

# %% [markdown] lang="de"
# ## 4. Die Laufzeitumgebung wechseln
#
# Ein neues Notebook auf Colab oder Kaggle läuft auf einer CPU. So bekommst du einen Beschleuniger
# (Stand: November 2026):
#
# - **Colab:** *Laufzeit → Laufzeittyp ändern → T4-GPU* (oder *v5e-1-TPU*) → *Speichern*. Die
#   Laufzeit (so nennt Colab die Laufzeitumgebung) startet neu: Alles im Arbeitsspeicher ist weg,
#   führe die Setup-Zelle also noch einmal aus. Die Notebooks des Kurses verlangen in ihren
#   Metadaten bereits eine T4, deshalb bietet Colab sie meist von selbst an.
# - **Kaggle:** im rechten Seitenbereich unter *Session options → Accelerator → GPU T4 x2* (oder
#   *TPU v5e-8*). Meide *GPU P100*: Das PyTorch in Kaggles Image bringt dafür keine Kernel mit.
#   Kaggle-Notebooks starten **ohne** Internetzugang; die Setup-Zelle braucht ihn (oder den Kurs als
#   angehängtes Dataset), und einschalten lässt er sich nur mit einem per Telefon verifizierten
#   Konto.
# - **Lokal:** Hier gibt es nichts umzuschalten; `nvidia-smi` (NVIDIA) oder *Über diesen Mac*
#   (Apple) zeigt dir, was du hast.
#
# Kostenlose GPU-Zeit ist begrenzt: Kaggle gewährt etwa 30 GPU-Stunden pro Woche; Colab
# veröffentlicht seine Grenzen nicht, und sie ändern sich mit der Nachfrage.

# %% [markdown] lang="en"
# ## 5. `nvidia-smi`
#
# A typical glossary page checks the GPU with `subprocess.run(["nvidia-smi"])` (claim C6). On a machine without
# an NVIDIA driver that line does not print "no GPU": it raises an exception. Try it safely:

# %% [markdown] lang="de"
# ## 5. `nvidia-smi`
#
# Eine typische Glossarseite prüft die GPU mit `subprocess.run(["nvidia-smi"])` (Behauptung C6). Auf
# einer Maschine ohne NVIDIA-Treiber gibt diese Zeile nicht „keine GPU“ aus, sondern wirft eine
# Ausnahme. Probier es gefahrlos aus:

# %%
import subprocess

try:
    subprocess.run(["nvidia-smi"], check=True, timeout=30)
    seed_snippet = "ran"
except FileNotFoundError as err:
    seed_snippet = "no driver"
    say(
        "C6: the glossary line raises an exception here: {kind}",
        "C6: Die Zeile der Glossarseite wirft hier eine Ausnahme: {kind}",
        kind=type(err).__name__,
    )
except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as err:
    seed_snippet = "failed"
    say(
        "nvidia-smi exists but failed: {err}",
        "nvidia-smi ist vorhanden, ist aber gescheitert: {err}",
        err=err,
    )

# %% [markdown] lang="en"
# Its table is made for human eyes and is hard to parse in code. The query mode gives one CSV line
# per GPU; `utils.platform.nvsmi.query()` runs it, never raises an exception, and explains what is missing:

# %% [markdown] lang="de"
# Die Tabelle von `nvidia-smi` ist für Menschen gemacht und lässt sich in Code schlecht auswerten.
# Der Abfragemodus liefert eine CSV-Zeile pro GPU; `utils.platform.nvsmi.query()` führt ihn aus,
# wirft nie eine Ausnahme und erklärt, was fehlt:

# %%
from utils.platform import nvsmi

smi = nvsmi.query()
if smi.ok:
    print(nvsmi.table(smi.rows))
else:
    print(smi.error)

# %% [markdown] lang="en"
# On a T4 the columns read like `0, Tesla T4, 15360, 0, 0, 45, 9.8, 550.54.15`: memory in MiB,
# utilisation in %, temperature in °C, power draw in W. Keep `watch -n 1 nvidia-smi` open in a
# terminal while a lesson trains, and you see memory and utilisation change live.

# %% [markdown] lang="de"
# Auf einer T4 sieht eine Zeile etwa so aus: `0, Tesla T4, 15360, 0, 0, 45, 9.8, 550.54.15`
# (Speicher in MiB, Auslastung in %, Temperatur in °C, Leistungsaufnahme in W). Lass
# `watch -n 1 nvidia-smi` in einem Terminal laufen, während eine Lektion trainiert, dann siehst du
# live, wie sich Speicher und Auslastung ändern.

# %% [markdown] lang="en"
# ## 6. Ask the frameworks: `torch.accelerator` and `jax.devices()`
#
# Since PyTorch 2.6 `torch.accelerator` answers one question for every kind of device (CUDA,
# Apple MPS, Intel XPU, …): is there an accelerator, and which? It does not cover TPUs: PyTorch
# reaches those through the separate `torch_xla` package. JAX lists every device of its
# backend, TPUs included.

# %% [markdown] lang="de"
# ## 6. Frag die Frameworks: `torch.accelerator` und `jax.devices()`
#
# Seit PyTorch 2.6 beantwortet `torch.accelerator` eine Frage für jede Geräteart (CUDA, Apple MPS,
# Intel XPU, …): Gibt es einen Beschleuniger, und welchen? TPUs gehören nicht dazu: PyTorch erreicht
# sie über das separate Paket `torch_xla`. JAX listet alle Geräte seines Backends auf, TPUs
# eingeschlossen.

# %%
import torch

print("torch", torch.__version__, "| jax", jax.__version__)
if hasattr(torch, "accelerator"):
    current = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else None
    say(
        "torch.accelerator: {current}, devices: {count}",
        "torch.accelerator: {current}, Geräte: {count}",
        current=current,
        count=torch.accelerator.device_count(),
    )
else:  # en: torch older than 2.6 | de: torch älter als 2.6
    current = None
    say(
        "this torch version has no torch.accelerator",
        "diese torch-Version hat kein torch.accelerator",
    )

devices = jax.devices()
print("jax.devices():", devices)
say(
    "JAX backend: {backend} | {kind}",
    "JAX-Backend: {backend} | {kind}",
    backend=jax.default_backend(),
    kind=devices[0].device_kind,
)

# %% [markdown] lang="en"
# Compare devices by their attributes (`d.platform`, `d.id`, `d.device_kind`), never by their
# printed name: JAX renamed CPU devices from `TFRT_CPU_0` to `cpu:0` in version 0.10, and Colab
# still runs 0.7.2.

# %% [markdown] lang="de"
# Vergleiche Geräte über ihre Attribute (`d.platform`, `d.id`, `d.device_kind`), nie über den
# ausgegebenen Namen: JAX hat die CPU-Geräte in Version 0.10 von `TFRT_CPU_0` in `cpu:0` umbenannt,
# und auf Colab läuft noch 0.7.2.

# %% [markdown] lang="en"
# ## 7. Choosing a device in PyTorch
#
# A typical glossary page chooses a device like this (claim C5):
#
# ```python
# device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
# ```
#
# It was the standard line for years, but it falls short on today's machines: a Mac's GPU (MPS) and
# Intel GPUs (XPU) end up on the CPU, and it says nothing about *which* GPU it found or which number
# format suits it. A better version asks `torch.accelerator` first and, on older PyTorch versions,
# falls back to asking CUDA and MPS directly:

# %% [markdown] lang="de"
# ## 7. Ein Gerät in PyTorch wählen
#
# Eine typische Glossarseite wählt das Gerät so (Behauptung C5):
#
# ```python
# device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
# ```
#
# Jahrelang war das die übliche Zeile, doch heutigen Maschinen wird sie nicht gerecht: Mit der GPU
# eines Macs (MPS) oder einer Intel-GPU (XPU) landest du auf der CPU, und sie verrät nicht, *welche*
# GPU sie gefunden hat und welches Zahlenformat zu ihr passt. Besser ist eine Funktion, die zuerst
# `torch.accelerator` fragt und bei älteren PyTorch-Versionen direkt bei CUDA und MPS nachsieht:


# %%
def pick_device() -> torch.device:
    # en: The best device PyTorch can use here: any accelerator, else the CPU.
    # de: Das beste Gerät, das PyTorch hier nutzen kann: irgendein Beschleuniger, sonst die CPU.
    if hasattr(torch, "accelerator") and torch.accelerator.is_available():
        return torch.accelerator.current_accelerator()
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


device = pick_device()
# en: A module moves in place; a tensor is copied: keep the one `.to()` returns.
# de: Ein Modul zieht selbst um; ein Tensor wird kopiert: Behalte den, den `.to()` zurückgibt.
model = torch.nn.Linear(8, 2).to(device)
inputs = torch.randn(4, 8).to(device)
outputs = model(inputs)
say("computed on {device}", "gerechnet auf {device}", device=outputs.device)
classic = torch.device("cuda" if torch.cuda.is_available() else "cpu")
say(
    "C5: the classic line picks {classic}, pick_device() picks {best}: {verdict}",
    "C5: Die klassische Zeile wählt {classic}, pick_device() wählt {best}: {verdict}",
    classic=classic,
    best=device,
    verdict=text("the same here", "hier dasselbe")
    if classic.type == device.type
    else text("the classic line misses this device", "die klassische Zeile übersieht dieses Gerät"),
)

# %% [markdown] lang="en"
# On a TPU this still says `cpu`: PyTorch on TPUs goes through `torch_xla` (`torch_xla.device()`),
# and this course uses JAX there (lesson 04). Which number format is fast is a matter of the
# device, too: lesson 03 (Precision and memory) picks bf16 only where the hardware supports it
# natively.

# %% [markdown] lang="de"
# Auf einer TPU steht hier trotzdem `cpu`: PyTorch erreicht TPUs über `torch_xla`
# (`torch_xla.device()`), und dieser Kurs nutzt dort JAX (Lektion 04). Welches Zahlenformat schnell
# ist, hängt ebenfalls vom Gerät ab: Lektion 03 (Zahlenformate und Speicher) wählt bf16 nur dort,
# wo die Hardware es nativ unterstützt.

# %% [markdown] lang="en"
# ## 8. The claims this course tests
#
# A typical glossary page about GPUs and TPUs makes a handful of claims. Here they are in our own
# words, each with the lesson and section that tests or qualifies it. The list lives in one place,
# `docs/claims.md`; the cell below reads it. A verdict that can be measured is computed in its
# lesson, on your machine (lesson 01 prints C1's, this lesson C5's and C6's above); the column here
# says what the lessons find in general.

# %% [markdown] lang="de"
# ## 8. Die Behauptungen, die dieser Kurs prüft
#
# Eine typische Glossarseite über GPUs und TPUs stellt eine Handvoll Behauptungen auf. Hier stehen
# sie in unseren eigenen Worten, jede mit der Lektion und dem Abschnitt, die sie prüfen oder
# einordnen. Die Liste steht an einer Stelle, `docs/claims.md`; die Zelle unten liest sie. Ein
# Urteil, das sich messen lässt, wird in seiner Lektion berechnet, auf deiner Maschine (Lektion 01
# gibt das zu C1 aus, diese Lektion oben die zu C5 und C6); die Spalte hier sagt, was die Lektionen
# im Allgemeinen finden.

# %%
from pathlib import Path

import utils
from utils.i18n import get_language

claims_file = Path(utils.__file__).resolve().parent.parent / "docs" / "claims.md"
claims = []
for line in claims_file.read_text(encoding="utf-8").splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) == 6 and cells[0][:1] == "C" and cells[0][1:].isdigit():
        claims.append(cells)
german = get_language() == "de"
for cid, claim_en, claim_de, where, verdict_en, verdict_de in claims:
    if german:
        where = where.replace("lesson", "Lektion").replace("in preparation", "in Vorbereitung")
    say(
        "{cid:>4}  {claim}\n      tested in: {where}\n      verdict: {verdict}",
        "{cid:>4}  {claim}\n      geprüft in: {where}\n      Urteil: {verdict}",
        cid=cid,
        claim=claim_de if german else claim_en,
        where=where,
        verdict=verdict_de if german else verdict_en,
    )

# %% [markdown] lang="en"
# ## Check yourself
#
# <details><summary>1. On Kaggle you chose "GPU P100". Why might the lesson still fail on that GPU, and what do you choose instead?</summary>
#
# Kaggle's PyTorch has no kernels for the P100's architecture (sm_60): choose **GPU T4 x2**.
# </details>
#
# <details><summary>2. <code>torch.cuda.is_available()</code> is False on a Mac with an M3 chip. Does that Mac have no GPU?</summary>
#
# It has one, but not a CUDA one: PyTorch reaches it as `mps`, which `torch.accelerator` finds.
# </details>
#
# <details><summary>3. Why does the setup cell not import JAX?</summary>
#
# JAX fixes its list of devices when it first starts a backend. Lessons 04 and 08 ask for
# simulated devices (two and eight), which only works before that moment.
# </details>
#
# ## Summary
#
# - The pre-flight check says in one line per item what is missing and how to fix it.
# - CPU: few strong cores; GPU: thousands of lanes and tensor cores; TPU: systolic arrays. Both
#   accelerators serve training and inference, and both are free in small doses.
# - Ask the machine, don't assume: `nvidia-smi --query-gpu=... --format=csv`, `torch.accelerator`,
#   `jax.devices()`.
#
# **Glossary:** CPU, GPU, TPU, tensor core, systolic array, compute capability, CUDA, MPS, XLA, runtime.
#
# **Next:** lab 00 (warm-up exercises) and lesson 01, where we time a matrix multiplication on
# this hardware – and do it correctly.

# %% [markdown] lang="de"
# ## Prüf dich selbst
#
# <details><summary>1. Du hast auf Kaggle „GPU P100“ gewählt. Warum kann die Lektion auf dieser GPU trotzdem scheitern, und was wählst du stattdessen?</summary>
#
# Kaggles PyTorch hat keine Kernel für die Architektur der P100 (sm_60): Wähle **GPU T4 x2**.
# </details>
#
# <details><summary>2. Auf einem Mac mit M3-Chip gibt <code>torch.cuda.is_available()</code> <code>False</code> zurück. Hat dieser Mac keine GPU?</summary>
#
# Doch, aber keine CUDA-GPU: PyTorch erreicht sie als `mps`, und `torch.accelerator` findet sie.
# </details>
#
# <details><summary>3. Warum importiert die Setup-Zelle JAX nicht?</summary>
#
# JAX legt seine Geräteliste fest, sobald es zum ersten Mal ein Backend startet. Die Lektionen 04
# und 08 fordern simulierte Geräte an (zwei bzw. acht), und das geht nur vor diesem Zeitpunkt.
# </details>
#
# ## Zusammenfassung
#
# - Der Pre-Flight-Check sagt in einer Zeile pro Punkt, was fehlt und wie du es behebst.
# - CPU: wenige starke Kerne; GPU: Tausende Rechenwerke und Tensor Cores; TPU: systolische Arrays.
#   Beide Beschleuniger taugen für Training und Inferenz, und beide gibt es in kleinen Mengen
#   kostenlos.
# - Frag die Maschine, statt zu raten: `nvidia-smi --query-gpu=... --format=csv`,
#   `torch.accelerator`, `jax.devices()`.
#
# **Glossar:** CPU, GPU, TPU, Tensor Core, systolisches Array, Compute Capability, CUDA, MPS, XLA,
# Laufzeitumgebung.
#
# **Weiter:** Lab 00 (Aufwärmübungen) und Lektion 01, in der wir die Zeit einer
# Matrixmultiplikation auf dieser Hardware messen – und zwar richtig.

# %% tags=["guard"] jupyter={"source_hidden": true}
# en: Checks of the course itself (not part of the lesson): the cells above did what they show.
# de: Prüfungen des Kurses selbst (nicht Teil der Lektion): Die Zellen oben taten, was sie zeigen.
assert {c.item for c in checks} >= set(preflight.PACKAGES)
assert all(c.fix for c in checks if c.status != "OK"), text(
    "a WARN/FAIL line without a fix", "eine WARN/FAIL-Zeile ohne Abhilfe"
)
assert profile.name in profiles.PROFILES
assert profile.device == hw.accelerator
assert n == {"cpu": 1024, "cuda": 8192, "tpu": 8192, "mps": 4096}[profile.device]
# en: nvidia-smi also lists GPUs that torch was told to ignore
# de: nvidia-smi listet auch GPUs, die torch ignorieren soll
assert len(smi.rows) >= len(hw.gpus) if smi.ok else not hw.gpus or seed_snippet != "ran"
assert (current.type if current is not None else "cpu") in {"cuda": {"cuda"}, "mps": {"mps"}}.get(
    hw.accelerator, {"cpu", "xpu"}
)
assert jax.default_backend() in ("cpu", "gpu", "tpu") and len(devices) >= 1
assert [c[0] for c in claims] == [f"C{i}" for i in range(1, len(claims) + 1)] and len(claims) >= 10
assert (
    outputs.device.type == device.type == {"cuda": "cuda", "mps": "mps"}.get(hw.accelerator, "cpu")
)
