# ---
# jupyter:
#   course:
#     accelerator: GPU
#     duration:
#       cpu: 50
#       t4: 50
#     level: 2
#     profiles:
#     - CPU
#     - Colab T4
#     - Kaggle T4 x2
#     - Colab TPU
#     - Kaggle TPU
#     - NVIDIA
#     - MPS
#     title:
#       de: Training auf dem Beschleuniger
#       en: Training on an accelerator
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# The glossary page lists "fine-tuning" and "training" as what GPUs are for. This lesson trains a
# small GPT-style language model from scratch, end to end, on the device this notebook found, and
# asks the questions that decide whether an hour on a free GPU is well spent. You will
#
# - write a small transformer and train it on text that ships with the course, with a progress
#   bar and a loss curve that updates while it trains,
# - measure throughput in tokens/s and MFU (the share of the device's peak the model's arithmetic
#   uses), against the peak of *this* device and dtype,
# - find out where a step's time goes (data, forward, backward, optimizer) with `torch.profiler`,
# - compare batch sizes, mixed precision and `torch.compile` side by side,
# - reach a batch that does not fit with gradient accumulation, and trade speed for memory with
#   activation checkpointing,
# - checkpoint and resume after a disconnect so that the resumed run is bit for bit the run that
#   was never interrupted, and see what goes wrong when you save only model and optimizer.
#
# Everything runs on a CPU too: the model is then tiny, and each cell says what a T4 shows.

# %% [markdown] lang="de"
# Auf der Glossarseite stehen „Feintuning“ und „Training“ als das, wofür man GPUs braucht. In dieser
# Lektion trainierst du ein kleines Sprachmodell im GPT-Stil von Grund auf und vollständig, auf dem
# Gerät, das dieses Notebook gefunden hat, und stellst die Fragen, an denen sich entscheidet, ob
# eine Stunde auf einer kostenlosen GPU gut genutzt ist. Du wirst
#
# - einen kleinen Transformer schreiben und ihn auf Text trainieren, den der Kurs mitbringt, mit
#   Fortschrittsbalken und einer Verlustkurve, die sich während des Trainings aktualisiert,
# - den Durchsatz in Tokens/s und die MFU messen (den Anteil an der Spitzenleistung, den die
#   Rechnung des Modells nutzt), gemessen an der Spitzenleistung *dieses* Geräts und Zahlenformats,
# - mit `torch.profiler` herausfinden, wohin die Zeit eines Schritts geht (Daten,
#   Vorwärtsdurchlauf, Rückwärtsdurchlauf, Optimierer),
# - Batchgrößen, Mixed Precision und `torch.compile` nebeneinander vergleichen,
# - mit Gradientenakkumulation einen Batch erreichen, der nicht in den Speicher passt, und mit
#   Activation Checkpointing Geschwindigkeit gegen Speicher tauschen,
# - Checkpoints speichern und nach einem Verbindungsabbruch so weitermachen, dass der fortgesetzte
#   Lauf Bit für Bit dem nie unterbrochenen gleicht, und sehen, was schiefgeht, wenn du nur Modell
#   und Optimierer speicherst.
#
# Alles läuft auch auf einer CPU: Das Modell ist dann winzig, und jede Zelle sagt, was eine T4
# zeigt.

# %%
import math
import random
import re
import tempfile
import time
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from IPython.display import display
from torch import nn
from tqdm.auto import tqdm

import utils
from utils import units
from utils.i18n import get_language, say, text
from utils.models import checkpoint
from utils.platform import hardware, placement, profiles, runtime
from utils.predict import reveal
from utils.timing import throughput
from utils.timing.sync import synchronizer

hw = hardware.detect()
platform = runtime.detect_platform()
profile = profiles.hardware_profile(platform, hw)
device = placement.pick_device()
sync = synchronizer(device.type if device.type in ("cuda", "mps") else "cpu")
print(profile.label, "|", hw.summary(), "|", device)

# %% [markdown] lang="en"
# ## 1. A text that ships with the course
#
# A language model needs text, and downloading one is not an option (Kaggle starts offline, CI
# has no network). The course has text of its own: the markdown of every lesson, in English and
# German. The cell collects it and turns it into numbers one character at a time, the simplest
# tokenizer there is (nanoGPT's "shakespeare_char" does the same).

# %% [markdown] lang="de"
# ## 1. Ein Text, den der Kurs mitbringt
#
# Ein Sprachmodell braucht Text, und herunterladen können wir keinen (Kaggle startet ohne Internet,
# die CI hat kein Netz). Der Kurs hat eigenen Text: das Markdown jeder Lektion, auf Englisch und
# Deutsch. Die Zelle sammelt es und macht daraus Zahlen, Zeichen für Zeichen – der einfachste
# Tokenizer, den es gibt (nanoGPTs „shakespeare_char“ macht es genauso).


# %%
def course_text() -> str:
    # en: the markdown cells of every lesson source, both languages
    # de: die Markdown-Zellen aller Lektionsquellen, beide Sprachen
    root = Path(utils.__file__).resolve().parents[1]
    parts = []
    for source in sorted((root / "notebooks" / "src").glob("*.py")):
        for cell in re.split(r"^# %%", source.read_text(encoding="utf-8"), flags=re.M):
            if cell.startswith(" [markdown]"):
                lines = cell.splitlines()[1:]
                parts.append("\n".join(line[2:] for line in lines if line.startswith("#")))
    if not parts:  # en: no lesson sources here | de: hier keine Lektionsquellen
        parts = [
            m.__doc__ or ""
            for m in (utils.timing.bench, utils.platform.chips, checkpoint, throughput)
        ]
    return "\n\n".join(parts)


corpus = course_text()
chars = sorted(set(corpus))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in corpus], dtype=torch.long)
split = int(0.9 * len(data))
train_data, val_data = data[:split], data[split:]
say(
    "{n:,} characters, {v} different ones; {t:,} for training, {e:,} held out",
    "{n:,} Zeichen, davon {v} verschiedene; {t:,} zum Trainieren, {e:,} zur Validierung",
    n=len(data),
    v=len(chars),
    t=len(train_data),
    e=len(val_data),
)
print(repr(corpus[2000:2160]))

# %% [markdown] lang="en"
# The training examples are windows of `block` characters; the target is the same window shifted
# by one. A `Dataset` cuts the text into windows, and a *sampler* decides their order: a fresh
# shuffle each epoch, drawn from a generator seeded with the epoch. Because the order depends only
# on (seed, epoch), "where am I in the data?" is two numbers, epoch and batch, which is what a
# checkpoint will need in section 8. The `DataLoader` gets a random generator of its own, so that
# it never draws from the global one that dropout uses (section 8 shows why that matters).

# %% [markdown] lang="de"
# Die Trainingsbeispiele sind Fenster aus `block` Zeichen; das Ziel ist dasselbe Fenster, um ein
# Zeichen verschoben. Ein `Dataset` schneidet den Text in Fenster, und ein *Sampler* bestimmt ihre
# Reihenfolge: in jeder Epoche neu gemischt, gezogen aus einem Generator, dessen Seed die Epoche
# enthält. Weil die Reihenfolge nur von (Seed, Epoche) abhängt, beantworten zwei Zahlen die Frage
# „Wo bin ich in den Daten?“: Epoche und Batch. Genau das braucht ein Checkpoint in Abschnitt 8. Der
# `DataLoader` bekommt einen eigenen Zufallsgenerator, damit er nie aus dem globalen zieht, den
# Dropout nutzt (warum das wichtig ist, zeigt Abschnitt 8).


# %%
class Windows(torch.utils.data.Dataset):
    def __init__(self, tokens, block):
        self.tokens, self.block = tokens, block

    def __len__(self):
        return (len(self.tokens) - 1) // self.block

    def __getitem__(self, i):
        chunk = self.tokens[i * self.block : (i + 1) * self.block + 1]
        return chunk[:-1], chunk[1:]


class EpochSampler(torch.utils.data.Sampler):
    # en: batches of indices in an order fixed by (seed, epoch); can start mid-epoch
    # de: Index-Batches in einer Reihenfolge aus (Seed, Epoche); Start mitten in der Epoche möglich

    def __init__(self, n, batch_size, seed=0):
        self.n, self.batch_size, self.seed = n, batch_size, seed
        self.epoch, self.start = 0, 0  # en: the data position | de: die Position in den Daten

    def __len__(self):
        return self.n // self.batch_size

    def epoch_seed(self):
        return self.seed * 100_003 + self.epoch

    def __iter__(self):
        order = torch.randperm(self.n, generator=torch.Generator().manual_seed(self.epoch_seed()))
        for b in range(self.start, len(self)):
            yield order[b * self.batch_size : (b + 1) * self.batch_size].tolist()

    def state_dict(self):  # en: the data position, for a checkpoint | de: die Datenposition
        return {"seed": self.seed, "epoch": self.epoch, "start": self.start}

    def load_state_dict(self, state):
        self.seed, self.epoch, self.start = state["seed"], state["epoch"], state["start"]


size = profile.pick(
    cpu=dict(block=64, d=64, layers=2, heads=4, batch=16, steps=150),
    cuda=dict(block=256, d=384, layers=6, heads=6, batch=64, steps=600),
)
BLOCK = size["block"]
train_set = Windows(train_data, BLOCK)
PIN = device.type == "cuda"
WORKERS = profile.pick(cpu=0, cuda=2)


def loader(batch_size, seed=0, workers=WORKERS, dataset=None, own_generator=True):
    dataset = train_set if dataset is None else dataset
    sampler = EpochSampler(len(dataset), batch_size, seed)
    # en: without a generator of its own, every iter(DataLoader) draws a seed from the global
    # en: torch RNG, the one dropout uses: section 8 shows what that does to a resumed run
    # de: ohne eigenen Generator zieht jedes iter(DataLoader) einen Seed aus dem globalen
    # de: torch-RNG, aus dem auch Dropout zieht: Abschnitt 8 zeigt, was das beim Fortsetzen
    # de: anrichtet
    dl = torch.utils.data.DataLoader(
        dataset,
        batch_sampler=sampler,
        num_workers=workers,
        pin_memory=PIN,
        generator=torch.Generator() if own_generator else None,
    )
    return dl, sampler


dl, sampler = loader(size["batch"])
x, y = next(iter(dl))
say(
    "{n:,} windows of {b} characters; a batch is {shape}; workers {w}, pinned memory {p}",
    "{n:,} Fenster aus {b} Zeichen; ein Batch hat die Form {shape}; "
    "{w} Worker, gepinnter Speicher: {pd}",
    n=len(train_set),
    b=BLOCK,
    shape=tuple(x.shape),
    w=WORKERS,
    p=PIN,
    pd=text("yes", "ja") if PIN else text("no", "nein"),
)

# %% [markdown] lang="en"
# `num_workers > 0` loads batches in background processes while the GPU computes;
# `pin_memory=True` puts them in page-locked memory, so that `.to(device, non_blocking=True)` can
# copy while the GPU keeps working (lesson 02). On the CPU profile there is nothing to overlap
# with, so the notebook uses no workers there.
#
# ## 2. A small GPT
#
# The model is the decoder of a GPT: token and position embeddings, `layers` blocks of causal
# self-attention and an MLP with layer norms and residual connections, and a head that gives a
# score per character. Attention uses `F.scaled_dot_product_attention`, which picks a fused kernel
# (FlashAttention where the GPU has it).

# %% [markdown] lang="de"
# `num_workers > 0` lädt Batches in Hintergrundprozessen, während die GPU rechnet; `pin_memory=True`
# legt sie in gepinnten Speicher, sodass `.to(device, non_blocking=True)` kopieren kann, während die
# GPU weiterarbeitet (Lektion 02). Im CPU-Profil gibt es nichts, womit sich das überlappen ließe;
# deshalb nutzt das Notebook dort keine Worker.
#
# ## 2. Ein kleines GPT
#
# Das Modell ist der Decoder eines GPT: Token- und Positions-Embeddings, `layers` Blöcke aus
# kausaler Self-Attention und einem MLP mit Layer-Norms und Residualverbindungen sowie ein Kopf, der
# für jedes Zeichen einen Score liefert. Die Attention nutzt `F.scaled_dot_product_attention`, das
# einen fusionierten Kernel wählt (FlashAttention, wo die GPU ihn hat).


# %%
class Block(nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        p = self.dropout if self.training else 0.0
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p)
        x = x + self.drop(self.proj(a.transpose(1, 2).reshape(b, t, d)))
        return x + self.drop(self.mlp(self.ln2(x)))


class GPT(nn.Module):
    def __init__(self, vocab, block, d, layers, heads, dropout=0.1, checkpointing=False):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block, d)
        self.blocks = nn.ModuleList(Block(d, heads, dropout) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
        self.checkpointing = checkpointing  # en: section 5 | de: Abschnitt 5

    def forward(self, idx, targets=None):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            if self.checkpointing and self.training:
                x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        logits = self.head(self.ln(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())


def make_model(seed=0, **changes):
    torch.manual_seed(seed)
    cfg = {k: size[k] for k in ("block", "d", "layers", "heads")} | changes
    return GPT(len(chars), **cfg).to(device)


model = make_model()
n_params = throughput.count_params(model, exclude=(model.pos,))
fpt = throughput.flops_per_token(
    n_params, n_layers=size["layers"], d_model=size["d"], seq_len=BLOCK
)
say(
    "{n:,} parameters (without the position table); {f:,.0f} FLOPs per trained token",
    "{n:,} Parameter (ohne Positionstabelle); {f:,.0f} FLOPs pro trainiertem Token",
    n=n_params,
    f=fpt,
)

# %% [markdown] lang="en"
# The FLOPs per token follow nanoGPT and the PaLM paper's appendix B: each weight takes part in one
# multiply-add forward (2 FLOPs) and two backward (4 FLOPs), so 6·N; attention's scores and
# weighted sum add 12·L·d·T, which grows with the context T.
#
# ## 3. The training loop
#
# A step: take a batch, copy it to the device, forward, loss, backward, clip the gradient, let the
# optimizer (AdamW) step and the scheduler set the next learning rate (warm-up, then cosine). The
# loop shows a `tqdm` progress bar and redraws the loss curve every few steps in place.
#
# Every 25 steps it saves a checkpoint into one folder that stays the same when you run the cell
# again (the cell prints it: beside the notebook, in `/kaggle/working` on Kaggle, on Drive once
# mounted on Colab). Interrupt it (■) and run it again: it resumes where the last checkpoint
# left off, and the curve and the losses cover the whole run. Section 8 shows what a checkpoint
# must hold for that. To start over, remove the `#` before `checkpoint.start_fresh(folder)`.
#
# **Predict, then measure.** Training with AdamW in fp32 keeps, for every parameter, the weight,
# its gradient and Adam's two moments (a running mean of the gradient and of its square). How many
# bytes per parameter does the training hold, before any activation? Write it into the next cell;
# the cell after the training measures it.

# %% [markdown] lang="de"
# Die FLOPs pro Token folgen nanoGPT und Anhang B des PaLM-Papers: Jedes Gewicht ist im
# Vorwärtsdurchlauf an einer Multiplikation mit Addition beteiligt (2 FLOPs) und im
# Rückwärtsdurchlauf an zweien (4 FLOPs), also 6·N; die Scores und die gewichtete Summe der
# Attention kommen mit 12·L·d·T dazu, und das wächst mit dem Kontext T.
#
# ## 3. Die Trainingsschleife
#
# Ein Schritt: einen Batch nehmen, aufs Gerät kopieren, Vorwärtsdurchlauf, Verlust,
# Rückwärtsdurchlauf, den Gradienten begrenzen (Clipping), den Optimierer (AdamW) einen Schritt
# machen und den Scheduler die nächste Lernrate setzen lassen (Aufwärmen, dann Kosinus). Die
# Schleife zeigt einen `tqdm`-Fortschrittsbalken und zeichnet die Verlustkurve alle paar Schritte an
# derselben Stelle neu.
#
# Alle 25 Schritte speichert sie einen Checkpoint in einen Ordner, der beim erneuten Ausführen der
# Zelle derselbe bleibt (die Zelle nennt ihn: neben dem Notebook, auf Kaggle in `/kaggle/working`,
# auf Colab auf Drive, sobald es eingebunden ist). Unterbrich sie (■) und führ sie noch einmal aus:
# Sie macht beim letzten Checkpoint weiter, und Kurve und Verluste umfassen den ganzen Lauf.
# Abschnitt 8 zeigt, was ein Checkpoint dafür enthalten muss. Um neu zu beginnen, entfern das `#`
# vor `checkpoint.start_fresh(folder)`.
#
# **Erst schätzen, dann messen.** Training mit AdamW in fp32 hält für jeden Parameter das Gewicht,
# seinen Gradienten und die zwei Momente von Adam (einen gleitenden Mittelwert des Gradienten und
# einen seines Quadrats). Wie viele Bytes pro Parameter hält das Training, noch ohne Aktivierungen?
# Schreib die Zahl in die nächste Zelle; die Zelle nach dem Training misst sie.


# %%
my_bytes_per_parameter = None  # en: your prediction | de: deine Vorhersage


# %%
def make_training(model, steps, lr=3e-3, scaler_on=False):
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)),
    )
    on = next(model.parameters()).device.type  # en: the model's device | de: das Gerät des Modells
    scaler = torch.amp.GradScaler(on if on == "cuda" else "cpu", enabled=scaler_on)
    return opt, sched, scaler


def train_step(model, opt, sched, scaler, x, y, amp_dtype=None, accumulate=1):
    # en: one optimizer step over `accumulate` micro-batches of (x, y)
    # de: ein Optimiererschritt über `accumulate` Micro-Batches von (x, y)
    opt.zero_grad(set_to_none=True)
    total = 0.0
    for xs, ys in zip(x.chunk(accumulate), y.chunk(accumulate), strict=True):
        with torch.autocast(
            xs.device.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None
        ):
            loss = model(xs, ys) / accumulate
        scaler.scale(loss).backward()
        total += loss.detach()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    sched.step()
    return total


def batches(dl, sampler, to=None):
    # en: endless batches, epoch after epoch, moved to the device (or `to`)
    # de: endlos Batches, Epoche für Epoche, aufs Gerät kopiert (oder nach `to`)
    to = device if to is None else to
    while True:
        if dl.generator is not None:
            # en: the loader's draws (its workers' seeds) follow from (seed, epoch) as well
            # de: auch die Ziehungen des Loaders (die Seeds seiner Worker) folgen aus (Seed, Epoche)
            dl.generator.manual_seed(sampler.epoch_seed())
        for x, y in dl:
            sampler.start += 1
            yield x.to(to, non_blocking=True), y.to(to, non_blocking=True)
        sampler.epoch, sampler.start = sampler.epoch + 1, 0


@torch.no_grad()
def val_loss(model, n=8):
    model.eval()
    xs = torch.stack([val_data[i : i + BLOCK] for i in range(0, n * BLOCK, BLOCK)]).to(device)
    ys = torch.stack([val_data[i + 1 : i + BLOCK + 1] for i in range(0, n * BLOCK, BLOCK)]).to(
        device
    )
    loss = model(xs, ys).item()
    model.train()
    return loss


def train(folder, steps, draw=None, every=25):
    # en: train a fresh model for `steps` steps; resume from the newest checkpoint in `folder`;
    # en: the history (losses, throughput) covers the whole run, across re-runs
    # de: ein frisches Modell `steps` Schritte trainieren; beim neuesten Checkpoint in `folder`
    # de: fortsetzen; der Verlauf (Verluste, Durchsatz) umfasst den ganzen Lauf, über Neustarts
    model = make_model()
    opt, sched, scaler = make_training(model, steps)
    dl, sampler = loader(size["batch"])
    meter = throughput.Meter(fpt, throughput.peak_tflops(device, "float32"))
    parts = dict(model=model, optimizer=opt, scheduler=sched, scaler=scaler)
    parts["objects"] = {"data": sampler}
    history = {
        "before": val_loss(model),
        "losses": [],
        "meter": {},
    }  # en: untrained | de: untrainiert
    found, start = checkpoint.latest(folder), 0
    if found is not None:
        state = checkpoint.load(found, **parts)
        start, history = state["step"], state["extra"]
    for key, value in history["meter"].items():
        setattr(meter, key, value)
    checkpoint.report_start(start, steps, folder)
    data_iter, step = batches(dl, sampler), start
    try:
        for step in tqdm(
            range(start, steps), initial=start, total=steps, desc=text("training", "Training")
        ):
            x, y = next(data_iter)
            t0 = time.perf_counter()
            loss = train_step(model, opt, sched, scaler, x, y)
            history["losses"].append(
                loss.item()
            )  # en: waits for the device | de: wartet aufs Gerät
            meter.add(x.numel(), time.perf_counter() - t0)
            if (step + 1) % every == 0 or step + 1 == steps:
                history["meter"] = {k: getattr(meter, k) for k in ("tokens", "seconds", "steps")}
                history["meter"]["history"] = list(meter.history)
                checkpoint.save(folder, step + 1, keep=2, extra=history, **parts)
            if draw is not None and (step % 25 == 0 or step == steps - 1):
                draw(history["losses"])
    except KeyboardInterrupt:
        raise checkpoint.interrupted(folder, step, steps) from None
    return model, opt, meter, history


fig, ax = plt.subplots(figsize=(7, 3))
handle = display(fig, display_id=True)
plt.close(fig)


def draw(losses):
    ax.clear()
    ax.plot(range(1, len(losses) + 1), losses, lw=1)
    ax.set(
        xlabel=text("training step", "Trainingsschritt"),
        ylabel=text("loss", "Verlust"),
        title=text("Training loss", "Verlust im Training"),
    )
    handle.update(fig)


folder = checkpoint.run_dir(platform, f"lesson05_{get_language()}")
# checkpoint.start_fresh(folder)  # en: remove the # to start over | de: # weg: neu beginnen
model, opt, meter, history = train(folder, size["steps"], draw)
draw(
    history["losses"]
)  # en: also when the run was already finished | de: auch, wenn der Lauf schon fertig war
start_loss, end_loss = history["before"], val_loss(model)
say(
    "{n} steps; held-out loss {a:.2f} → {b:.2f} "
    "(a uniform guess over {v} characters gives {u:.2f})",
    "{n} Schritte; Validierungsverlust {a:.2f} → {b:.2f} "
    "(gleichverteiltes Raten über {v} Zeichen ergibt {u:.2f})",
    n=len(history["losses"]),
    a=start_loss,
    b=end_loss,
    v=len(chars),
    u=math.log(len(chars)),
)
print(meter)


# %%
def bytes_held(model, opt):
    # en: weights, gradients and optimizer state, as the tensors hold them
    # de: Gewichte, Gradienten und Optimiererzustand, so wie die Tensoren sie halten
    tensors = [*model.parameters()] + [p.grad for p in model.parameters()]
    tensors += [t for state in opt.state.values() for t in state.values()]
    return sum(t.numel() * t.element_size() for t in tensors if torch.is_tensor(t))


if any(p.grad is None for p in model.parameters()):  # en: a run resumed complete | de: fertig
    model(x.to(device), y.to(device)).backward()  # en: a gradient | de: ein Gradient
n_all = sum(p.numel() for p in model.parameters())
reveal(my_bytes_per_parameter, bytes_held(model, opt) / n_all, unit=text("bytes", "Bytes"))

# %% [markdown] lang="en"
# The held-out loss falls well below uniform guessing: the model has learnt which characters
# follow which. A few characters generated from it show how far it got (on the CPU: word-like
# shapes and spaces; after a T4's 600 steps of the larger model, recognisable words in both
# languages).

# %% [markdown] lang="de"
# Der Validierungsverlust (auf Text, den das Training nie gesehen hat) fällt deutlich unter den von
# gleichverteiltem Raten: Das Modell hat gelernt, welche Zeichen auf welche folgen. Ein paar
# Zeichen, die es erzeugt, zeigen, wie weit es gekommen ist (auf der CPU: wortähnliche Formen und
# Leerzeichen; nach 600 Schritten des größeren Modells auf einer T4 erkennbare Wörter in beiden
# Sprachen).


# %%
@torch.no_grad()
def generate(model, prompt, n=120, temperature=0.8):
    model.eval()
    idx = torch.tensor([[stoi.get(c, 0) for c in prompt]], device=device)
    for _ in range(n):
        logits = model(idx[:, -BLOCK:])[:, -1] / temperature
        idx = torch.cat([idx, torch.multinomial(F.softmax(logits, -1), 1)], dim=1)
    model.train()
    return "".join(chars[i] for i in idx[0].tolist())


torch.manual_seed(1)
print(generate(model, text("The GPU ", "Die GPU ")))

# %% [markdown] lang="en"
# ## 4. Throughput and MFU, per dtype
#
# Tokens/s is what you pay for; MFU says how much of the device that is. nanoGPT's `estimate_mfu`
# divides by an A100's 312 TFLOP/s on any device, so on a T4 it reports a share of a chip you do
# not have. Here the peak is the detected device's, for the dtype the matmuls run in
# (`utils.timing.throughput.peak_tflops`, from the data-sheet table in `utils/platform/chips.py`; for a CPU an
# estimate from its cores, clock and vector width). Mixed precision runs the matmuls in bf16 or
# fp16 under `torch.autocast` while the weights stay fp32; fp16 needs a `GradScaler` (its range is
# small, lesson 03), bf16 does not. bf16 is fast from compute capability 8.0 (A100, L4, H100) and
# on CPUs with AVX512-BF16; on a T4 it is emulated and slow, and on a CPU fp16 is very slow
# (docs/facts.md §2).

# %% [markdown] lang="de"
# ## 4. Durchsatz und MFU je Zahlenformat
#
# Bezahlen tust du für Tokens/s; die MFU sagt, wie viel vom Gerät du dabei nutzt. nanoGPTs
# `estimate_mfu` teilt auf jedem Gerät durch die 312 TFLOP/s einer A100, auf einer T4 meldet es also
# einen Anteil an einem Chip, den du gar nicht hast. Hier ist die Spitzenleistung die des erkannten
# Geräts, im Zahlenformat, in dem die Matmuls laufen (`utils.timing.throughput.peak_tflops`, aus der
# Datenblatt-Tabelle in `utils/platform/chips.py`; für eine CPU eine Schätzung aus Kernen, Takt und
# Vektorbreite). Mixed Precision rechnet die Matmuls unter `torch.autocast` in bf16 oder fp16, die
# Gewichte bleiben fp32; fp16 braucht einen `GradScaler` (sein Wertebereich ist klein, Lektion 03),
# bf16 nicht. bf16 ist schnell ab Compute Capability 8.0 (A100, L4, H100) und auf CPUs mit
# AVX512-BF16; auf einer T4 wird es emuliert und ist langsam, und auf einer CPU ist fp16 sehr
# langsam (docs/facts.md §2).


# %%
def dtypes_here():
    # en: (name, autocast dtype or None, needs a GradScaler) for the formats worth trying here
    # de: (Name, Autocast-Datentyp oder None, GradScaler nötig) für die Formate, die sich hier
    # de: lohnen
    found = [("float32", None, False)]
    if device.type == "cuda":
        found.append(("float16", torch.float16, True))
        if hw.gpus and hw.gpus[0].has_fast_bf16:
            found.append(("bfloat16", torch.bfloat16, False))
    elif device.type == "cpu" and hw.cpu.has_fast_bf16:
        found.append(("bfloat16", torch.bfloat16, False))
    return found


def run_steps(model, n, batch, amp_dtype=None, scaler_on=False, accumulate=1):
    # en: train n steps; a Meter over them (the first ones are warm-up, not counted)
    # de: n Schritte trainieren und messen (die ersten wärmen nur auf und werden nicht gezählt)
    opt, sched, scaler = make_training(model, 1000, scaler_on=scaler_on)
    dl, sampler = loader(batch, workers=0)
    it = batches(dl, sampler)
    name = str(amp_dtype or torch.float32).replace("torch.", "")
    m = throughput.Meter(fpt, throughput.peak_tflops(device, name), skip=2)
    for _ in range(n):
        x, y = next(it)
        sync(None)
        t0 = time.perf_counter()
        train_step(model, opt, sched, scaler, x, y, amp_dtype, accumulate)
        sync(None)
        m.add(x.numel(), time.perf_counter() - t0)
    return m


N_MEASURE = profile.pick(cpu=12, cuda=30)
by_dtype = {}
for name, amp, needs_scaler in dtypes_here():
    m = run_steps(make_model(), N_MEASURE, size["batch"], amp, needs_scaler)
    by_dtype[name] = m
    say("{name:>9}: {m}", "{name:>9}: {m}", name=name, m=m)
if device.type == "cpu" and not hw.cpu.has_fast_bf16:
    say(
        "This CPU has no fast bf16 (no AVX512-BF16/AMX): only float32 is measured.",
        "Diese CPU hat kein schnelles bf16 (kein AVX512-BF16/AMX): Gemessen wird nur float32.",
    )
if device.type == "cpu":
    say(
        "float16 is skipped on the CPU: it runs about 80× slower than float32 there.",
        "float16 wird auf der CPU übersprungen: Es läuft dort etwa 80-mal langsamer als float32.",
    )

# %% [markdown] lang="en"
# A small model has a low MFU on any device: its matmuls are small (d = 64 on the CPU), and
# layer norms, softmax, dropout and the optimizer move memory rather than compute. The larger the
# model and the batch, the closer MFU gets to a good matmul's share (lesson 01).
#
# ## 5. Where the time goes
#
# `torch.profiler` records every operation; `record_function` puts a named range around each
# phase of the step. On a GPU the work is asynchronous, so the profiled step synchronises at the
# end of each phase: otherwise the time of a kernel shows up in whichever phase happens to wait
# for it. The table and the bar give each phase's time per step, the mean over the profiled steps.
#
# **Predict, then measure.** Counted in FLOPs, the backward pass costs twice the forward (2·N
# forward, 4·N backward, see above). How many times as long as the forward will the backward take
# for this lesson's model on your device? Write it into the next cell.

# %% [markdown] lang="de"
# Ein kleines Modell hat auf jedem Gerät eine niedrige MFU: Seine Matmuls sind klein (d = 64 auf der
# CPU), und Layer-Norms, Softmax, Dropout und der Optimierer bewegen Speicher, statt zu rechnen. Je
# größer Modell und Batch, desto näher kommt die MFU dem Anteil einer guten Matmul (Lektion 01).
#
# ## 5. Wohin die Zeit geht
#
# `torch.profiler` zeichnet jede Operation auf; `record_function` legt einen benannten Bereich um
# jede Phase des Schritts. Auf einer GPU läuft die Arbeit asynchron, deshalb synchronisiert der
# profilierte Schritt am Ende jeder Phase: Sonst landet die Zeit eines Kernels in der Phase, die
# gerade zufällig auf ihn wartet. Tabelle und Balken zeigen die Zeit jeder Phase pro Schritt, das
# Mittel über die profilierten Schritte.
#
# **Erst schätzen, dann messen.** In FLOPs gezählt kostet der Rückwärtsdurchlauf doppelt so viel wie
# der Vorwärtsdurchlauf (2·N vorwärts, 4·N rückwärts, siehe oben). Wie viel Mal so lange wie der
# Vorwärtsdurchlauf wird der Rückwärtsdurchlauf für das Modell dieser Lektion auf deinem Gerät
# brauchen? Schreib es in die nächste Zelle.

# %%
my_backward_ratio = None  # en: backward ÷ forward | de: rückwärts ÷ vorwärts

# %%
from torch.profiler import ProfilerActivity, record_function
from torch.profiler import profile as torch_profile

PHASES = ("data", "forward", "backward", "optimizer")
# en: the phases as the learner reads them
# de: die Phasen, wie die Lernenden sie lesen
PHASE_NAMES = dict(
    zip(
        PHASES,
        text(
            "data|forward|backward|optimizer",
            "Daten|Vorwärtsdurchlauf|Rückwärtsdurchlauf|Optimierer",
        ).split("|"),
        strict=True,
    )
)
model = make_model()
opt, sched, scaler = make_training(model, 1000)
dl, sampler = loader(size["batch"])
it = iter(dl)
activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
PROFILED = profile.pick(cpu=8, cuda=20)  # en: steps profiled | de: profilierte Schritte
with torch_profile(activities=activities) as prof:
    for _ in range(PROFILED):
        with record_function("data"):
            x, y = next(it)
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            sync(None)
        with record_function("forward"):
            loss = model(x, y)
            sync(None)
        with record_function("backward"):
            loss.backward()
            sync(None)
        with record_function("optimizer"):
            opt.step()
            opt.zero_grad(set_to_none=True)
            sync(None)
rows = {e.key: e for e in prof.key_averages() if e.key in PHASES}
# en: per step: the total over the profiled steps divided by their number
# de: pro Schritt: die Summe über die profilierten Schritte geteilt durch ihre Anzahl
phase_ms = {p: rows[p].cpu_time_total / 1e3 / PROFILED for p in PHASES}
total = sum(phase_ms.values())
say("{a:>18} {b:>9} {c:>6}", a="", b=text("ms/step", "ms/Schritt"), c="%")
for p in PHASES:
    say("{p:>18} {ms:9.2f} {s:6.1f}", p=PHASE_NAMES[p], ms=phase_ms[p], s=100 * phase_ms[p] / total)
bottleneck = max(phase_ms, key=phase_ms.get)
say(
    "The largest share: {p} ({s:.0f}% of the step).",
    "Der größte Anteil: {p} ({s:.0f} % des Schritts).",
    p=PHASE_NAMES[bottleneck],
    s=100 * phase_ms[bottleneck] / total,
)
fig, ax = plt.subplots(figsize=(10, 2.6))
left = 0.0
for p, colour in zip(PHASES, ("#8c8c8c", "#4c72b0", "#dd8452", "#55a868"), strict=True):
    ax.barh([0], [phase_ms[p]], left=left, color=colour, edgecolor="white", label=PHASE_NAMES[p])
    share = phase_ms[p] / total
    if share >= 0.2:  # en: a name that fits inside its bar | de: ein Name, der in den Balken passt
        label = text("{p}\n{s:.0f}%", "{p}\n{s:.0f} %", p=PHASE_NAMES[p], s=100 * share)
        ax.text(left + phase_ms[p] / 2, 0, label, ha="center", va="center", color="white")
    left += phase_ms[p]
ax.set(
    yticks=[],
    xlim=(0, total),
    xlabel=text(
        "milliseconds per training step (mean of {n} profiled steps)",
        "Millisekunden pro Trainingsschritt (Mittel aus {n} profilierten Schritten)",
        n=PROFILED,
    ),
)
ax.set_title(
    text("Where a training step's time goes", "Wohin die Zeit eines Trainingsschritts geht")
)
ax.legend(ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.32), frameon=False)
plt.show()
reveal(my_backward_ratio, phase_ms["backward"] / phase_ms["forward"], unit="×")

# %% [markdown] lang="en"
# How much does backward cost against forward? Counting FLOPs, twice: every matmul of the forward
# pass has two in backward, one for the gradient of its input and one for that of its weight (the
# 2·N forward and 4·N backward of the 6·N above). Whether the clock shows that depends on what a
# phase's time is spent on. The cell times forward and backward side by side, alternating, for
# this lesson's model, for the same without dropout, and for a wider one (4× on the CPU, 2× on a
# GPU) whose time goes into larger matmuls.

# %% [markdown] lang="de"
# Was kostet der Rückwärtsdurchlauf im Vergleich zum Vorwärtsdurchlauf? Nach FLOPs das Doppelte: Zu
# jeder Matmul im Vorwärtsdurchlauf gehören zwei im Rückwärtsdurchlauf, eine für den Gradienten
# ihrer Eingabe und eine für den ihres Gewichts (die 2·N vorwärts und 4·N rückwärts der 6·N von
# oben). Ob die Uhr das zeigt, hängt davon ab, womit eine Phase ihre Zeit verbringt. Die Zelle misst
# beide Durchläufe abwechselnd, für das Modell dieser Lektion, für dasselbe ohne Dropout und für ein
# breiteres (4-mal so breit auf der CPU, 2-mal auf einer GPU), das seine Zeit in größeren Matmuls
# verbringt.


# %%
def forward_backward_ms(model, x, y, rounds=7):
    # en: forward and backward of the same step, alternating, synchronised; medians in ms
    # de: Vorwärts- und Rückwärtsdurchlauf desselben Schritts, abwechselnd, synchronisiert;
    # de: Mediane in ms
    fwd, bwd = [], []
    for _ in range(rounds + 1):  # en: the first round is warm-up | de: die erste Runde wärmt auf
        sync(None)
        t0 = time.perf_counter()
        loss = model(x, y)
        sync(None)
        t1 = time.perf_counter()
        loss.backward()
        sync(None)
        fwd.append(t1 - t0)
        bwd.append(time.perf_counter() - t1)
        model.zero_grad(set_to_none=True)
    return 1e3 * float(np.median(fwd[1:])), 1e3 * float(np.median(bwd[1:]))


x, y = next(iter(loader(size["batch"], workers=0)[0]))
x, y = x.to(device), y.to(device)
WIDE = profile.pick(
    cpu=4, cuda=2
)  # en: a T4 holds 2× the GPU model | de: eine T4 fasst 2× so breit
variants = {
    text("this model", "dieses Modell"): {},
    text("no dropout", "ohne Dropout"): {"dropout": 0.0},
    text("{w} × d, no dropout", "{w} × d, ohne Dropout", w=WIDE): {
        "dropout": 0.0,
        "d": WIDE * size["d"],
    },
}
fb = {}
for label, changes in variants.items():
    fb[label] = forward_backward_ms(make_model(**changes), x, y)
    say(
        "{m:>22}: forward {f:7.2f} ms, backward {b:7.2f} ms, backward/forward {r:.2f}",
        "{m:>22}: vorwärts {f:7.2f} ms, rückwärts {b:7.2f} ms, rückwärts/vorwärts {r:.2f}",
        m=label,
        f=fb[label][0],
        b=fb[label][1],
        r=fb[label][1] / fb[label][0],
    )
(f_this, b_this), (f_plain, b_plain), (f_wide, b_wide) = fb.values()
ratio = b_this / f_this
dropout_share = max(0.0, 1 - f_plain / f_this)  # en: of this forward's time | de: der Vorwärtszeit
if 1.5 <= ratio <= 2.5:
    say(
        "Verdict: backward took about twice the forward here ({r:.1f}×), as the FLOP count says.",
        "Ergebnis: Der Rückwärtsdurchlauf brauchte hier etwa doppelt so lange wie der "
        "Vorwärtsdurchlauf ({r:.1f}-mal so lange), wie es die FLOP-Zählung sagt.",
        r=ratio,
    )
elif ratio < 1.5 and dropout_share >= 0.25:
    say(
        "Verdict: backward took only {r:.1f}× the forward here, not 2×. {p:.0f}% of this "
        "forward's time is dropout: it draws a random number for every element of every mask, "
        "work the FLOP count does not see, and backward only multiplies by the saved masks. "
        "Without dropout: {r0:.1f}×; {w}× as wide, where the matmuls dominate: {rw:.1f}×.",
        "Ergebnis: Der Rückwärtsdurchlauf brauchte hier nur {r:.1f}-mal so lange wie der "
        "Vorwärtsdurchlauf, nicht doppelt so lange. {p:.0f} % der Vorwärtszeit entfallen auf "
        "Dropout: Es zieht für jedes Element jeder Maske eine Zufallszahl – Arbeit, die die "
        "FLOP-Zählung nicht sieht –, und rückwärts wird nur mit den gespeicherten Masken "
        "multipliziert. Ohne Dropout: {r0:.1f}-mal; {w}-mal so breit, wo die Matmuls "
        "überwiegen: {rw:.1f}-mal.",
        r=ratio,
        p=100 * dropout_share,
        r0=b_plain / f_plain,
        w=WIDE,
        rw=b_wide / f_wide,
    )
elif ratio < 1.5:
    say(
        "Verdict: backward took only {r:.1f}× the forward here, not 2×: in a model this small the "
        "forward's operations besides the matmuls (embeddings, layer norms, softmax, the loss) "
        "take most of its time, and the FLOP count does not see them. {w}× as wide, where the "
        "matmuls dominate: {rw:.1f}×.",
        "Ergebnis: Der Rückwärtsdurchlauf brauchte hier nur {r:.1f}-mal so lange wie der "
        "Vorwärtsdurchlauf, nicht doppelt so lange: In einem so kleinen Modell brauchen die "
        "Operationen neben den Matmuls (Embeddings, Layer-Norms, Softmax, der Verlust) den "
        "Großteil der Vorwärtszeit, und die FLOP-Zählung sieht sie nicht. {w}-mal so breit, wo "
        "die Matmuls überwiegen: {rw:.1f}-mal.",
        r=ratio,
        w=WIDE,
        rw=b_wide / f_wide,
    )
else:
    say(
        "Verdict: backward took {r:.1f}× the forward here, more than the FLOP count's 2×: besides "
        "its matmuls, backward sums gradients over the batch (biases, layer norms) and writes a "
        "gradient for every weight, memory traffic the FLOPs don't count. {w}× as wide: {rw:.1f}×.",
        "Ergebnis: Der Rückwärtsdurchlauf brauchte hier {r:.1f}-mal so lange wie der "
        "Vorwärtsdurchlauf, länger als die doppelten FLOPs erwarten lassen: Neben seinen Matmuls "
        "summiert er Gradienten über den Batch (Biases, Layer-Norms) und schreibt einen "
        "Gradienten für jedes Gewicht – Speicherverkehr, den die FLOPs nicht zählen. {w}-mal so "
        "breit: {rw:.1f}-mal.",
        r=ratio,
        w=WIDE,
        rw=b_wide / f_wide,
    )

# %% [markdown] lang="en"
# On a GPU a model large enough to keep it busy shows the 2× of the FLOP count (EleutherAI,
# "Transformer Math 101", 2023: backward ≈ 2 × forward; Kaplan et al., "Scaling Laws for Neural
# Language Models", 2020, §2.1). A model as small as the CPU one above would not: on a GPU each
# operation costs a kernel launch of several microseconds whatever its size (lesson 01), and
# then the ratio follows the number of kernels, not the FLOPs. Dropout's random numbers cost a
# GPU far less than a CPU: it generates them in parallel inside the kernel that applies the mask.
#
# If "data" were the largest share in the profile, the GPU would be waiting for the loader: that is
# when `num_workers`, `pin_memory` and `non_blocking` pay off. On a T4 with two workers the data
# phase of this text shrinks to copying a few kilobytes; the optimizer's share grows with the
# number of parameters, not with the batch.
#
# ## 6. Batch size, mixed precision and `torch.compile` side by side

# %% [markdown] lang="de"
# Auf einer GPU zeigt ein Modell, das groß genug ist, um sie auszulasten, das Doppelte der
# FLOP-Zählung (EleutherAI, „Transformer Math 101“, 2023: rückwärts ≈ 2 × vorwärts; Kaplan u. a.,
# „Scaling Laws for Neural Language Models“, 2020, Abschnitt 2.1). Ein so kleines Modell wie das
# auf der CPU oben nicht: Auf einer GPU kostet jede Operation einen Kernel-Start von einigen
# Mikrosekunden, egal wie groß sie ist (Lektion 01), und dann folgt das Verhältnis der Zahl der
# Kernel, nicht den FLOPs. Die Zufallszahlen für Dropout kosten eine GPU weit weniger als eine CPU:
# Sie erzeugt sie parallel im selben Kernel, der die Maske anwendet.
#
# Wären „Daten“ im Profil der größte Anteil, würde die GPU auf den Loader warten: Dann lohnen sich
# `num_workers`, `pin_memory` und `non_blocking`. Auf einer T4 mit zwei Workern schrumpft die
# Datenphase bei diesem Text auf das Kopieren weniger Kilobytes; der Anteil des Optimierers wächst
# mit der Zahl der Parameter, nicht mit dem Batch.
#
# ## 6. Batchgröße, Mixed Precision und `torch.compile` nebeneinander

# %%
results = []  # en: (label, tokens/s, MFU or None) | de: (Bezeichnung, Tokens/s, MFU oder None)
for batch in profile.pick(cpu=(8, 16, 32), cuda=(16, 64, 128)):
    for name, amp, needs_scaler in dtypes_here():
        m = run_steps(make_model(), N_MEASURE, batch, amp, needs_scaler)
        results.append((f"B={batch} {name}", m.tokens_per_s, m.mfu))

if device.type == "cuda":
    compiled = torch.compile(make_model())
    t0 = time.perf_counter()
    run_steps(compiled, 2, size["batch"])  # en: compiles | de: kompiliert
    compile_s = time.perf_counter() - t0
    m = run_steps(compiled, N_MEASURE, size["batch"])
    results.append((f"B={size['batch']} float32 compile", m.tokens_per_s, m.mfu))
    say(
        "torch.compile took {s:.1f} s to compile.",
        "torch.compile brauchte {s:.1f} s zum Kompilieren.",
        s=compile_s,
    )
else:
    say(
        "torch.compile is left out here: on this CPU compiling takes longer than the whole "
        "lesson's budget in CI. benchmarks/bench_training.py measures it on the CPU; "
        "on a GPU this cell runs it.",
        "torch.compile fehlt hier: Auf dieser CPU dauert das Kompilieren länger, als die "
        "ganze Lektion in der CI brauchen darf. benchmarks/bench_training.py misst es auf der "
        "CPU; auf einer GPU führt diese Zelle es aus.",
    )
for label, tps, u in results:
    if u is None:
        say(
            "{label:>24}: {t:>10,.0f} tokens/s",
            "{label:>24}: {t:>10,.0f} Tokens/s",
            label=label,
            t=tps,
        )
    else:
        say(
            "{label:>24}: {t:>10,.0f} tokens/s, MFU {u:.2f}%",
            "{label:>24}: {t:>10,.0f} Tokens/s, MFU {u:.2f} %",
            label=label,
            t=tps,
            u=100 * u,
        )
fp32 = {int(label.split()[0][2:]): tps for label, tps, _ in results if label.endswith("float32")}
fastest = max(fp32, key=fp32.get)
if fastest == max(fp32):
    say(
        "float32: the largest batch ({b}) was the fastest, as on a GPU.",
        "float32: Der größte Batch ({b}) war der schnellste, wie auf einer GPU.",
        b=fastest,
    )
else:
    say(
        "float32: B = {b} was the fastest here, not the largest batch ({big}): section 7 "
        "measures why a smaller batch can win on a CPU.",
        "float32: Hier war B = {b} am schnellsten, nicht der größte Batch ({big}): Abschnitt 7 "
        "misst, warum ein kleinerer Batch auf einer CPU gewinnen kann.",
        b=fastest,
        big=max(fp32),
    )
fig, ax = plt.subplots(figsize=(7, 0.35 * len(results) + 1))
ax.barh([r[0] for r in results], [r[1] for r in results])
ax.set(
    xlabel=text("tokens per second", "Tokens pro Sekunde"),
    title=text("Throughput side by side", "Durchsatz nebeneinander"),
)
plt.show()

# %% [markdown] lang="en"
# A larger batch raises tokens/s until the device is busy, then it levels off (and at some point
# the batch no longer fits). On a T4, fp16 with autocast is usually much faster than fp32 (its
# tensor cores have 65 TFLOP/s fp16 against 8.1 fp32 on the data sheet), and `torch.compile` adds
# a further gain for a small model by fusing the many small elementwise kernels, after a compile
# that takes tens of seconds.
#
# ## 7. A batch that does not fit: gradient accumulation
#
# The loss is a mean over the batch, so the gradient of a batch of B equals the mean of the
# gradients of k micro-batches of B/k: run backward k times with `loss / k`, step once. The cell
# checks the equality, then measures the memory the step keeps for backward (the activations: the
# bytes autograd saves, counted with `saved_tensors_hooks`, on any device) and the time.

# %% [markdown] lang="de"
# Ein größerer Batch erhöht die Tokens/s, bis das Gerät ausgelastet ist; danach steigen sie kaum
# noch (und irgendwann passt der Batch nicht mehr in den Speicher). Auf einer T4 ist fp16 mit
# Autocast meist deutlich schneller als fp32 (laut Datenblatt haben die Tensor Cores 65 TFLOP/s in
# fp16 gegen 8,1 in fp32), und `torch.compile` holt bei einem kleinen Modell noch etwas heraus, weil
# es die vielen kleinen elementweisen Kernel fusioniert – nach einer Kompilierung, die Dutzende
# Sekunden dauert.
#
# ## 7. Ein Batch, der nicht passt: Gradientenakkumulation
#
# Der Verlust ist ein Mittelwert über den Batch, also gleicht der Gradient eines Batches aus
# B Beispielen dem Mittel der Gradienten von k Micro-Batches aus je B/k Beispielen: k-mal rückwärts
# mit `loss / k`, dann ein einziger Optimiererschritt. Die Zelle prüft die Gleichheit und misst dann
# den Speicher, den der Schritt für den Rückwärtsdurchlauf aufhebt (die Aktivierungen: die Bytes,
# die Autograd speichert, gezählt mit `saved_tensors_hooks`, auf jedem Gerät), und die Zeit.


# %%
def saved_sizes(model, fn):
    # en: the sizes in bytes of what autograd keeps for backward while fn() runs (weights not
    # en: counted: they stay anyway); their sum is the activation memory
    # de: die Größen in Bytes dessen, was Autograd für den Rückwärtsdurchlauf aufhebt, während fn()
    # de: läuft (ohne Gewichte, die bleiben ohnehin); ihre Summe ist der Speicher der Aktivierungen
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen, sizes = set(), []

    def pack(t):
        key = t.untyped_storage().data_ptr()
        if key not in seen and key not in weights:
            seen.add(key)
            sizes.append(t.untyped_storage().nbytes())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return sizes


def grads(model, x, y, k):
    model.zero_grad(set_to_none=True)
    for xs, ys in zip(x.chunk(k), y.chunk(k), strict=True):
        (model(xs, ys) / k).backward()
    return [p.grad.clone() for p in model.parameters()]


model_for_bytes = make_model()
model_for_bytes.eval()  # en: no dropout, so both ways see the same network | de: ohne Dropout, gleiches Netz
big = 4 * size["batch"]
dl, sampler = loader(big, workers=0)
xb, yb = (t.to(device) for t in next(iter(dl)))
g1, g4 = grads(model_for_bytes, xb, yb, 1), grads(model_for_bytes, xb, yb, 4)
diff = max((a - b).abs().max().item() for a, b in zip(g1, g4, strict=True))
say(
    "batch of {b} at once vs. 4 micro-batches of {m}: max gradient difference {d:.1e}",
    "Batch aus {b} auf einmal gegen 4 Micro-Batches aus {m}: größte Gradientendifferenz {d:.1e}",
    b=big,
    m=big // 4,
    d=diff,
)
assert diff < 1e-5, (
    diff
)  # en: the same gradient, up to rounding | de: derselbe Gradient, bis aufs Runden
model_for_bytes.train()
accum = {}
for k in (1, 2, 4):
    sizes = saved_sizes(
        model_for_bytes, lambda k=k: model_for_bytes(xb[: big // k], yb[: big // k]).backward()
    )
    m = run_steps(make_model(), N_MEASURE, big, accumulate=k)
    accum[k] = (sum(sizes), m.tokens_per_s, max(sizes), m.history)
    say(
        "k={k}: micro-batch {m:>3}, activations {mib:6.1f} MiB (largest tensor {big:5.2f} MiB), "
        "{t:>9,.0f} tokens/s",
        "k={k}: Micro-Batch {m:>3}, Aktivierungen {mib:6.1f} MiB (größter Tensor {big:5.2f} MiB), "
        "{t:>9,.0f} Tokens/s",
        k=k,
        m=big // k,
        mib=sum(sizes) / 2**20,
        big=max(sizes) / 2**20,
        t=m.tokens_per_s,
    )

# %% [markdown] lang="en"
# Accumulating over k micro-batches divides the activation memory by k and leaves the gradient as
# it was. Its price on a GPU is k smaller passes: each kernel gets less work and the launches
# weigh more, so tokens/s fall the smaller the micro-batch gets. On a CPU the opposite can happen,
# and the reason is its caches: a small, fast memory next to each core (L1, L2) and a larger one
# shared by the cores (L3). An operation whose inputs fit in a cache reads them from there instead
# of main memory, which is several times slower. The cell reads this CPU's cache sizes (Linux
# publishes them in `/sys/devices/system/cpu/cpu0/cache`; `lscpu` shows the same) and sets them
# against the sizes measured above.

# %% [markdown] lang="de"
# Akkumulieren über k Micro-Batches teilt den Speicher der Aktivierungen durch k und lässt den
# Gradienten unverändert. Auf einer GPU kostet es k kleinere Durchläufe: Jeder Kernel bekommt
# weniger Arbeit, und die Kernel-Starts fallen stärker ins Gewicht; die Tokens/s sinken also, je
# kleiner der Micro-Batch wird. Auf einer CPU kann das Gegenteil passieren, und der Grund sind ihre
# Caches: ein kleiner, schneller Speicher neben jedem Kern (L1, L2) und ein größerer, den sich die
# Kerne teilen (L3). Eine Operation, deren Eingaben in einen Cache passen, liest sie von dort statt
# aus dem Hauptspeicher, der um ein Mehrfaches langsamer ist. Die Zelle liest die Cache-Größen
# dieser CPU (Linux legt sie unter `/sys/devices/system/cpu/cpu0/cache` ab; `lscpu` zeigt dasselbe)
# und vergleicht sie mit den oben gemessenen Größen.


# %%
def home(nbytes):
    # en: the smallest cache that holds nbytes (utils.platform.hardware reads the sizes from sysfs)
    # de: der kleinste Cache, der nbytes fasst (utils.platform.hardware liest die Größen aus sysfs)
    if device.type != "cpu":
        return text("GPU memory", "GPU-Speicher")
    level = caches.level_for(nbytes)
    names = {"memory": text("main memory", "Hauptspeicher"), "unknown": "?"}
    return names.get(level, level)


def quartiles(history):
    return np.percentile(history, 25), np.percentile(history, 75)


caches = hardware.cpu_caches()
if device.type == "cpu" and caches.source != "unknown":
    say(
        "This CPU's data caches (L1d and L2 per core, L3 shared by several): {c}",
        "Die Daten-Caches dieser CPU (L1d und L2 je Kern, L3 von mehreren geteilt): {c}",
        c=", ".join(f"{n} {units.format_bytes(b)}" for n, b in caches.sizes().items() if b),
    )
for k, (total, tps, largest, _) in accum.items():
    say(
        "k={k}: {s:.2f}× the tokens/s of k = 1; activations {a} → {wa}, largest tensor {b} → {wb}",
        "k={k}: {s:.2f}-mal die Tokens/s von k = 1; Aktivierungen {a} → {wa}, "
        "größter Tensor {b} → {wb}",
        k=k,
        s=tps / accum[1][1],
        a=units.format_bytes(total),
        wa=home(total),
        b=units.format_bytes(largest),
        wb=home(largest),
    )
# en: faster or slower only where the middle halves of the per-step speeds do not overlap
# de: schneller oder langsamer nur, wo sich die mittleren Hälften der Schrittzeiten nicht überlappen
lo1, hi1 = quartiles(accum[1][3])
faster = [k for k in (2, 4) if quartiles(accum[k][3])[0] > hi1]
slower = [k for k in (2, 4) if quartiles(accum[k][3])[1] < lo1]
if faster:
    k = max(faster, key=lambda k: accum[k][1])
    moved = device.type == "cpu" and (
        home(accum[k][2]) != home(accum[1][2]) or home(accum[k][0]) != home(accum[1][0])
    )
    if moved:
        say(
            "Verdict: smaller micro-batches were faster here (k = {k}: {s:.2f}×). The cache "
            "explains it: at k = {k} the activations ({a}) and the largest tensor ({b}) land in "
            "{wa} and {wb}, at k = 1 in {wa1} and {wb1}; backward reads what forward wrote, and "
            "from a cache that is quicker.",
            "Ergebnis: Kleinere Micro-Batches waren hier schneller (k = {k}: {s:.2f}-mal so "
            "schnell). Der Cache erklärt es: Bei k = {k} landen die Aktivierungen ({a}) und der "
            "größte Tensor ({b}) in {wa} und {wb}, bei k = 1 in {wa1} und {wb1}; der "
            "Rückwärtsdurchlauf liest, was der Vorwärtsdurchlauf geschrieben hat, und aus einem "
            "Cache geht das schneller.",
            k=k,
            s=accum[k][1] / accum[1][1],
            a=units.format_bytes(accum[k][0]),
            b=units.format_bytes(accum[k][2]),
            wa=home(accum[k][0]),
            wb=home(accum[k][2]),
            wa1=home(accum[1][0]),
            wb1=home(accum[1][2]),
        )
    else:
        say(
            "Verdict: smaller micro-batches were faster here (k = {k}: {s:.2f}×), but the cache "
            "sizes read here do not separate them from k = 1: the cause is something this cell "
            "does not measure.",
            "Ergebnis: Kleinere Micro-Batches waren hier schneller (k = {k}: {s:.2f}-mal so "
            "schnell), aber nach den gelesenen Cache-Größen liegen ihre Tensoren nicht anders als "
            "bei k = 1: Die Ursache ist etwas, das diese Zelle nicht misst.",
            k=k,
            s=accum[k][1] / accum[1][1],
        )
elif slower:
    say(
        "Verdict: accumulation cost speed here (k = {k}: {s:.2f}× the tokens/s of k = 1): "
        "smaller passes use the cores less well, as on a GPU.",
        "Ergebnis: Akkumulieren kostete hier Geschwindigkeit (k = {k}: {s:.2f}-mal die Tokens/s "
        "von k = 1): Kleinere Durchläufe lasten die Kerne schlechter aus, wie auf einer GPU.",
        k=max(slower),
        s=accum[max(slower)][1] / accum[1][1],
    )
else:
    say(
        "Verdict: no difference beyond the step-to-step spread: accumulation cost no measurable "
        "speed here, and saved memory.",
        "Ergebnis: Kein Unterschied über die Streuung von Schritt zu Schritt hinaus: Akkumulieren "
        "kostete hier keine messbare Geschwindigkeit und sparte Speicher.",
    )

# %% [markdown] lang="en"
# On a T4 the activations of this lesson's GPU model are far larger than its 4 MiB L2 cache (NVIDIA
# Turing architecture whitepaper, 2018), so every micro-batch size reads them from its 16 GB of
# GDDR6 alike, and what remains is the cost of smaller kernels: k = 1 is the fastest there.
#
# ### Activation checkpointing
#
# The other lever: keep only each block's input and recompute the inside during backward
# (`torch.utils.checkpoint.checkpoint`, with `use_reentrant=False` as PyTorch recommends). It
# saves the activations inside the blocks and costs one more forward of them.

# %% [markdown] lang="de"
# Auf einer T4 sind die Aktivierungen des GPU-Modells dieser Lektion weit größer als ihr L2-Cache
# von 4 MiB (NVIDIA Turing Architecture Whitepaper, 2018); bei jeder Micro-Batchgröße kommen sie
# also gleichermaßen aus den 16 GB GDDR6, und übrig bleiben die Kosten kleinerer Kernel: Dort ist k
# = 1 am schnellsten.
#
# ### Activation Checkpointing
#
# Der andere Hebel: Nur die Eingabe jedes Blocks behalten und sein Inneres im Rückwärtsdurchlauf neu
# berechnen (`torch.utils.checkpoint.checkpoint`, mit `use_reentrant=False`, wie PyTorch es
# empfiehlt). Das spart die Aktivierungen in den Blöcken und kostet einen zusätzlichen
# Vorwärtsdurchlauf durch sie.

# %%
ckpt = {}
for on in (False, True):
    model_for_bytes = make_model(checkpointing=on)
    mb = sum(saved_sizes(model_for_bytes, lambda m=model_for_bytes: m(xb, yb).backward()))
    peak = None
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    m = run_steps(make_model(checkpointing=on), N_MEASURE, big)
    if device.type == "cuda":
        peak = torch.cuda.max_memory_allocated()
    ckpt[on] = (mb, m.tokens_per_s, peak)
    say(
        "checkpointing {on!s:>5}: activations {mib:6.1f} MiB, {t:>9,.0f} tokens/s",
        "{state:<18}: Aktivierungen {mib:6.1f} MiB, {t:>9,.0f} Tokens/s",
        on=on,
        state=text("with", "mit Checkpointing") if on else text("without", "ohne Checkpointing"),
        mib=mb / 2**20,
        t=m.tokens_per_s,
    )
    if peak is not None:
        say("  peak GPU memory {g:.2f} GiB", "  GPU-Speicher höchstens {g:.2f} GiB", g=peak / 2**30)
say(
    "Checkpointing keeps {r:.0f}% of the activations and runs at {s:.0f}% of the speed.",
    "Mit Checkpointing bleiben {r:.0f} % der Aktivierungen, bei {s:.0f} % der Geschwindigkeit.",
    r=100 * ckpt[True][0] / ckpt[False][0],
    s=100 * ckpt[True][1] / ckpt[False][1],
)

# %% [markdown] lang="en"
# ## 8. Checkpoint and resume after a disconnect
#
# Colab ends idle sessions and takes the GPU back after about an hour of heavy use; Kaggle stops a
# session after 9 hours (docs/facts.md §1). A run that survives saves checkpoints and, when one
# exists, picks up from it automatically. For the resumed run to be *the same run*, a checkpoint
# needs everything that decides the next step:
#
# | what | why |
# |---|---|
# | model | the weights |
# | optimizer | AdamW's two moments per weight and its step count |
# | scheduler | where the learning rate is on its curve |
# | GradScaler | the current loss scale (fp16) |
# | RNG states (Python, numpy, torch, CUDA) | dropout, sampling, augmentation |
# | data position and step | which batch comes next; not re-reading consumed ones |
#
# `utils/models/checkpoint.py` does it in one page: it writes to a temporary file in the same folder,
# flushes it to disk, and renames it over the final name, so a write cut off by a disconnect never
# leaves a half checkpoint under the real name. It keeps the last k. Where it writes depends on
# the platform:

# %% [markdown] lang="de"
# ## 8. Checkpoint und Fortsetzen nach einem Verbindungsabbruch
#
# Colab beendet untätige Sitzungen und nimmt die GPU nach etwa einer Stunde Volllast zurück; Kaggle
# beendet eine Sitzung nach 9 Stunden (docs/facts.md §1). Damit dabei kein Lauf verloren geht,
# speichert das Training Checkpoints und macht, wenn einer da ist, automatisch dort weiter. Damit
# der fortgesetzte Lauf *derselbe Lauf* ist, braucht ein Checkpoint alles, was den nächsten Schritt
# bestimmt:
#
# | was | warum |
# |---|---|
# | Modell | die Gewichte |
# | Optimierer | die zwei Momente von AdamW je Gewicht und sein Schrittzähler |
# | Scheduler | wo die Lernrate auf ihrer Kurve steht |
# | GradScaler | der aktuelle Faktor des Loss Scaling (fp16) |
# | Zufallszustände (Python, numpy, torch, CUDA) | Dropout, Sampling, Augmentierung |
# | Datenposition und Schritt | welcher Batch als Nächstes kommt; keiner der schon verbrauchten noch einmal |
#
# `utils/models/checkpoint.py` erledigt das auf einer Seite: Es schreibt in eine temporäre Datei im
# selben Ordner, sorgt dafür, dass sie wirklich auf der Platte steht, und benennt sie dann um,
# sodass ein Schreibvorgang, den ein Abbruch unterbricht, nie einen halben Checkpoint unter dem
# echten Namen hinterlässt. Es behält die letzten k. Wohin es schreibt, hängt von der Plattform ab:

# %%
for where in ("kaggle", "colab", "local"):
    print(f"{where:>7}: {checkpoint.default_dir(where)}")
print(f"{'colab':>7} + Drive: {checkpoint.default_dir('colab', drive=True)}")
say(
    "Here ({p}) the training of section 3 keeps its checkpoints in {d}.",
    "Hier ({p}) legt das Training aus Abschnitt 3 seine Checkpoints in {d} ab.",
    p=runtime.platform_name(platform),
    d=folder,
)

# %% [markdown] lang="en"
# On Kaggle `/kaggle/working` is kept as the notebook's output; on Colab `/content` is lost with
# the session, so a run that must outlive a disconnect needs Drive: once you have mounted it
# (`from google.colab import drive; drive.mount("/content/drive")`), section 3's training keeps
# its checkpoints there. (The demonstration below writes to a temporary folder.)
#
# Now the experiment, with this lesson's own loader, `make_training` and `train_step` (dropout,
# shuffled data, accumulation over 2 micro-batches, gradient clipping, a GradScaler; users hit the
# same bug in transformers#34053, the_well#77 and fairseq2#1346): one run of `TOTAL` steps without
# a break; the same run interrupted after `CUT` steps in the middle of an epoch, with everything
# thrown away except the checkpoint, then resumed automatically; the same with a DataLoader that
# has no generator of its own; and the same interruption with only model and optimizer saved, as
# nanoGPT and many tutorials do. The sampler's data position goes into the checkpoint through
# `objects={"data": sampler}` (it has `state_dict()`). It runs on the CPU with the tiny model on
# every profile: on a GPU some kernels add in a varying order (atomic adds), so bit-equality there
# also needs `torch.use_deterministic_algorithms(True)`. (`tests/e2e/test_resume.py` repeats it with
# each resume in a new Python process, interrupted at three points.)

# %% [markdown] lang="de"
# Auf Kaggle bleibt `/kaggle/working` als Ausgabe des Notebooks erhalten; auf Colab geht `/content`
# mit der Sitzung verloren. Damit ein Abbruch den Lauf nicht kostet, gehören die Checkpoints dort
# auf Drive: Sobald du es eingebunden hast (`from google.colab import drive; drive.mount("/content/drive")`),
# legt das Training aus Abschnitt 3 seine Checkpoints dort ab. (Die Vorführung unten schreibt in
# einen temporären Ordner.)
#
# Jetzt das Experiment, mit dem Loader, `make_training` und `train_step` dieser Lektion (Dropout,
# gemischte Daten, Akkumulation über 2 Micro-Batches, Gradient Clipping, ein GradScaler; denselben
# Fehler melden transformers#34053, the_well#77 und fairseq2#1346): ein Lauf über `TOTAL` Schritte
# ohne Pause; derselbe Lauf, nach `CUT` Schritten mitten in einer Epoche unterbrochen – alles außer
# dem Checkpoint wird verworfen – und dann automatisch fortgesetzt; dasselbe mit einem
# DataLoader ohne eigenen Generator; und dieselbe Unterbrechung, bei der nur Modell und Optimierer
# gespeichert werden, wie es nanoGPT und viele Tutorials tun. Die Datenposition des Samplers kommt
# über `objects={"data": sampler}` in den Checkpoint (er hat `state_dict()`). Das läuft auf jedem
# Profil auf der CPU mit dem winzigen Modell: Auf einer GPU addieren manche Kernel in wechselnder
# Reihenfolge (Atomic Adds); für Bit-Gleichheit braucht es dort zusätzlich
# `torch.use_deterministic_algorithms(True)`.
# (`tests/e2e/test_resume.py` wiederholt es an drei Unterbrechungsstellen, jedes Fortsetzen in einem
# neuen Python-Prozess.)

# %%
CPU = torch.device("cpu")
small = Windows(train_data[: 12 * 16 * 32 + 1], 32)  # en: 12 batches/epoch | de: 12 Batches/Epoche
TOTAL, CUT = 40, 17  # en: CUT is mid-epoch | de: CUT liegt mitten in einer Epoche
# en: fp32; the GradScaler runs as fp16 would need it
# de: fp32; der GradScaler läuft trotzdem mit, wie fp16 ihn bräuchte
AMP = None


def fresh(own_generator=True):
    # en: model, optimizer, scheduler, scaler and data as a new session would create them
    # de: Modell, Optimierer, Scheduler, Scaler und Daten, wie eine neue Sitzung sie anlegt
    torch.manual_seed(0)
    m = GPT(len(chars), block=32, d=32, layers=2, heads=2, dropout=0.2)
    o, s, sc = make_training(m, TOTAL, scaler_on=True)
    dl, smp = loader(16, seed=1, dataset=small, own_generator=own_generator)
    return m, o, s, sc, dl, smp


def run(folder, stop_at=None, full_state=True, own_generator=True):
    # en: train to TOTAL steps; resume from the folder's latest checkpoint; stop early at stop_at
    # de: bis TOTAL trainieren; beim neuesten Checkpoint fortsetzen; bei stop_at aufhören
    m, o, s, sc, dl, smp = fresh(own_generator)
    step, losses = 0, []
    found = checkpoint.latest(folder)
    if found is not None:
        if full_state:
            parts = dict(model=m, optimizer=o, scheduler=s, scaler=sc, objects={"data": smp})
            state = checkpoint.load(found, **parts)
        else:  # en: what many tutorials save | de: was viele Tutorials speichern
            state = checkpoint.load(found, model=m, optimizer=o, restore_rng=False)
        step, losses = state["step"], state["extra"]["losses"]
    for x, y in batches(dl, smp, to=CPU):
        losses.append(train_step(m, o, s, sc, x, y, AMP, accumulate=2).item())
        step += 1
        if step == stop_at:  # en: save, then the "disconnect" | de: speichern, dann der „Abbruch“
            parts = dict(model=m, optimizer=o, scheduler=s, scaler=sc, objects={"data": smp})
            checkpoint.save(folder, step, extra={"losses": losses}, **parts)
            return None
        if step == TOTAL:
            return m, losses


def max_diff(a, b):
    pairs = zip(a.parameters(), b.parameters(), strict=True)
    return max((p - q).abs().max().item() for p, q in pairs)


with tempfile.TemporaryDirectory() as root:
    root = Path(root)
    # en: the uninterrupted runs, with and without the loader's own generator
    # de: die ununterbrochenen Läufe, mit und ohne eigenen Generator des Loaders
    uninterrupted = {own: run(root / f"none{own}", own_generator=own) for own in (True, False)}
    straight, straight_losses = uninterrupted[True]
    outcome = {}
    for name, kw in {
        "full": {},
        "no_generator": {"own_generator": False},
        "partial": {"full_state": False},
    }.items():
        assert run(root / name, stop_at=CUT, **kw) is None
        # en: a new session | de: eine neue Sitzung
        random.seed(123), np.random.seed(123), torch.manual_seed(123)
        outcome[name] = run(root / name, **kw)
    per_epoch = len(small) // 16
    say(
        "{n} steps, interrupted after {c} (epoch {e}, batch {b} of {k}), then resumed:",
        "{n} Schritte, nach {c} unterbrochen (Epoche {e}, Batch {b} von {k}), dann fortgesetzt:",
        n=TOTAL,
        c=CUT,
        e=CUT // per_epoch,
        b=CUT % per_epoch,
        k=per_epoch,
    )
    labels = {
        "full": ("full checkpoint", "vollständiger Checkpoint"),
        "no_generator": ("full, loader without own RNG", "vollständig, Loader ohne eigenen RNG"),
        "partial": ("model + optimizer only", "nur Modell + Optimierer"),
    }
    for name, (m, ls) in outcome.items():
        base, base_losses = uninterrupted[name != "no_generator"]
        same = [a == b for a, b in zip(ls, base_losses, strict=True)]
        first = same.index(False) if False in same else None
        say(
            "  {what:<30} max weight difference {d:.1e}; losses equal: {eq}",
            "  {what:<38} größte Gewichtsdifferenz {d:.1e}; gleiche Verluste: {eq}",
            what=text(*labels[name]),
            d=max_diff(base, m),
            eq=text("all", "alle")
            if first is None
            else text("the first {s}", "die ersten {s}", s=first),
        )
    resumed, resumed_losses = outcome["full"]
    # en: the resumed run IS the uninterrupted one: every weight and every loss, bit for bit
    # de: der fortgesetzte Lauf IST der ununterbrochene: jedes Gewicht und jeder Verlust, Bit für
    # de: Bit
    pairs = zip(straight.parameters(), resumed.parameters(), strict=True)
    assert all(torch.equal(p, q) for p, q in pairs)
    assert resumed_losses == straight_losses
    # en: a loader that draws from the global RNG, or model + optimizer alone: a different run
    # de: ein Loader, der aus dem globalen RNG zieht, oder nur Modell + Optimierer: ein anderer Lauf
    for name in ("no_generator", "partial"):
        base, base_losses = uninterrupted[name != "no_generator"]
        assert max_diff(base, outcome[name][0]) > 0 and outcome[name][1] != base_losses

# %% [markdown] lang="en"
# Without the rest, three things go wrong at once: the scheduler starts its cosine again at the
# highest learning rate, the sampler starts the epoch from the top (consumed batches are read
# again), and dropout draws different masks. Each alone makes a different run.
#
# The loader without a generator of its own is the subtle one: everything was saved, and still
# the run differs from the first step after the resume. Each `iter(DataLoader)` draws a seed (for
# its workers) from the global torch generator, the one dropout draws from. The uninterrupted run
# draws it at the start of each epoch; the resumed run draws it right after the resume, in the
# middle of an epoch, and from then on every dropout mask is shifted by one draw. With
# `generator=torch.Generator()` the loader draws from its own, which `batches` seeds from (seed,
# epoch) at each epoch start, so it follows from the data position in the checkpoint.
#
# ### A write cut off, a damaged file
#
# What if the disconnect comes *during* a save? With the atomic write the real name only ever
# points at a complete file. A file damaged some other way (a copy cut short, a disk error, one
# flipped bit) is recognised when it is read: each file starts with the SHA-256 checksum of its
# content, `checkpoint.read` compares it, and `checkpoint.latest` reports a damaged file and takes
# the previous one. (PyTorch's own file format checks nothing of the kind: a flipped byte in the
# weights loads silently.) When it rotates, `save` counts only files that pass the check and never
# deletes the one it has just written.

# %% [markdown] lang="de"
# Ohne den Rest geht dreierlei auf einmal schief: Der Scheduler beginnt seinen Kosinus wieder bei
# der höchsten Lernrate, der Sampler fängt die Epoche von vorn an (schon verbrauchte Batches werden
# erneut gelesen), und Dropout zieht andere Masken. Jedes davon allein ergibt schon einen anderen
# Lauf.
#
# Der Loader ohne eigenen Generator ist der tückische Fall: Alles wurde gespeichert, und trotzdem
# weicht der Lauf ab dem ersten Schritt nach dem Fortsetzen ab. Jedes `iter(DataLoader)` zieht einen
# Seed (für seine Worker) aus dem globalen torch-Generator, demselben, aus dem Dropout zieht. Der
# ununterbrochene Lauf zieht ihn zu Beginn jeder Epoche, der fortgesetzte direkt nach dem
# Fortsetzen, mitten in der Epoche, und ab da ist jede Dropout-Maske um eine Ziehung verschoben. Mit
# `generator=torch.Generator()` zieht der Loader aus seinem eigenen, den `batches` zu Beginn jeder
# Epoche aus (Seed, Epoche) setzt; er folgt also aus der Datenposition im Checkpoint.
#
# ### Ein abgebrochener Schreibvorgang, eine beschädigte Datei
#
# Was, wenn der Abbruch *während* des Speicherns kommt? Mit dem atomaren Schreiben zeigt der echte
# Name immer nur auf eine vollständige Datei. Eine Datei, die anders beschädigt wurde (eine
# abgebrochene Kopie, ein Plattenfehler, ein gekipptes Bit), fällt beim Lesen auf: Jede Datei
# beginnt mit der SHA-256-Prüfsumme ihres Inhalts, `checkpoint.read` vergleicht sie, und
# `checkpoint.latest` meldet eine beschädigte Datei und nimmt die vorige. (PyTorchs eigenes
# Dateiformat prüft nichts dergleichen: Ein gekipptes Bit in den Gewichten wird stillschweigend
# mitgeladen.) Beim Aufräumen zählt `save` nur Dateien, die die Prüfung bestehen, und löscht nie
# die, die es gerade geschrieben hat.

# %%
with tempfile.TemporaryDirectory() as folder:
    m, o, s, sc, _, _ = fresh()
    for step in (10, 20, 30):
        checkpoint.save(folder, step, model=m, optimizer=o, scheduler=s, scaler=sc)
    first, second, newest = checkpoint.checkpoints(folder)
    raw = bytearray(newest.read_bytes())
    raw[len(raw) // 2] ^= 0x01  # en: one bit flipped | de: ein Bit gekippt
    newest.write_bytes(bytes(raw))
    # en: the second newest cut in half | de: die zweitneueste halbiert
    second.write_bytes(second.read_bytes()[: second.stat().st_size // 2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = checkpoint.latest(folder)
    for w in caught:
        print(w.message)
    say("resuming from {f}", "Fortgesetzt wird mit {f}.", f=found.name)
    assert found == first and len(caught) == 2

# %% [markdown] lang="en"
# ## What you should see
#
# | profile | model in this notebook | throughput and MFU | profiler | checkpoint |
# |---|---|---|---|---|
# | CPU (CI: 2 cores, one thread) | d = 64, 2 layers, context 64 | thousands to a few ten thousand tokens/s (a shared 2-core EPYC, 2026-12: 4,300–9,600); MFU 1–2 % of the estimated CPU peak; bf16 about as fast as fp32 or faster where the CPU has AVX512-BF16 (the matmuls are tiny), not measured without it; accumulation with k = 2 or 4 within the spread of k = 1 or faster (caches, section 7 says which for your run) | backward/forward between about 0.5 and 2: dropout's random numbers weigh on so small a model's forward (section 5 prints the ratio and why); optimizer visible | bit-equal resume; the loader without its own generator and the partial checkpoint differ |
# | Colab T4 | d = 384, 6 layers, context 256 (nanoGPT's shakespeare-char size) | fp16 with GradScaler clearly faster than fp32; no fast bf16 (emulated); MFU against the T4's 65 TFLOP/s fp16, which it sustains only partly under its 70 W cap | data small with 2 workers and pinned memory | the same (demo on the CPU) |
# | Kaggle T4 x2 | as Colab T4, on the first GPU (both at once: lesson 08) | as Colab T4 | as Colab T4 | in /kaggle/working |
# | Colab / Kaggle TPU | PyTorch runs on the TPU host's CPU here (no torch_xla in this lesson): the CPU row | | | |
# | NVIDIA A100/H100, local | the T4 size; bf16 fast | an A100 sits near the MFU nanoGPT reports; a larger model gets higher | | |
#
# On a TPU the training step belongs in JAX: lesson 04 trains with `jax.jit` and `grad`, and its
# step is what runs fast on a v5e. The figures are from November 2026: the T4's data sheet
# (utils/platform/chips.py); a published anchor: LLMs-from-scratch (ch05, appendix) reports 142,156
# tokens/s for GPT-2 124M on one A100. The CPU row's ranges are this notebook's measurements on a
# shared 2-core AMD EPYC (December 2026); your run prints its own above, with the verdicts that
# explain them. Run `benchmarks/bench_training.py` for the same figures with `torch.compile`.

# %% [markdown] lang="de"
# ## Was du sehen solltest
#
# | Profil | Modell in diesem Notebook | Durchsatz und MFU | Profiler | Checkpoint |
# |---|---|---|---|---|
# | CPU (CI: 2 Kerne, ein Thread) | d = 64, 2 Schichten, Kontext 64 | einige tausend bis einige zehntausend Tokens/s (ein geteilter EPYC mit 2 Kernen, Stand: Dezember 2026: 4.300–9.600); MFU 1–2 % der geschätzten CPU-Spitzenleistung; bf16 etwa so schnell wie fp32 oder schneller, wo die CPU AVX512-BF16 hat (die Matmuls sind winzig), ohne es nicht gemessen; Akkumulation mit k = 2 oder 4 in der Streuung von k = 1 oder schneller (Caches; Abschnitt 7 sagt, was für deinen Lauf gilt) | rückwärts/vorwärts zwischen etwa 0,5 und 2: Die Zufallszahlen für Dropout wiegen im Vorwärtsdurchlauf eines so kleinen Modells schwer (Abschnitt 5 gibt das Verhältnis und den Grund aus); der Optimierer fällt auf | Bit-gleiches Fortsetzen; der Loader ohne eigenen Generator und der unvollständige Checkpoint weichen ab |
# | Colab T4 | d = 384, 6 Schichten, Kontext 256 (die Größe von nanoGPTs shakespeare-char) | fp16 mit GradScaler deutlich schneller als fp32; kein schnelles bf16 (emuliert); MFU gemessen an den 65 TFLOP/s fp16 der T4, die sie unter ihrer 70-W-Grenze nur teilweise hält | Daten klein mit 2 Workern und gepinntem Speicher | genauso (Vorführung auf der CPU) |
# | Kaggle T4 x2 | wie Colab T4, auf der ersten GPU (beide zugleich: Lektion 08) | wie Colab T4 | wie Colab T4 | in /kaggle/working |
# | Colab / Kaggle TPU | PyTorch läuft hier auf der CPU des TPU-Hosts (kein torch_xla in dieser Lektion): die CPU-Zeile | | | |
# | NVIDIA A100/H100, lokal | die T4-Größe; bf16 schnell | eine A100 liegt nahe an der MFU, die nanoGPT meldet; ein größeres Modell kommt höher | | |
#
# Auf einer TPU gehört der Trainingsschritt in JAX: Lektion 04 trainiert mit `jax.jit` und `grad`,
# und dieser Schritt läuft auf einer v5e schnell. Stand der Angaben: November 2026, das Datenblatt
# der T4 (utils/platform/chips.py); ein veröffentlichter Vergleichswert: LLMs-from-scratch (Kapitel
# 5, Anhang) meldet 142.156 Tokens/s für GPT-2 124M auf einer A100. Die Bereiche der CPU-Zeile hat
# dieses Notebook auf einem geteilten AMD EPYC mit 2 Kernen gemessen (Dezember 2026); dein Lauf gibt
# oben seine eigenen aus, mit den Ergebnissen, die sie erklären. `benchmarks/bench_training.py`
# liefert dieselben Zahlen mit `torch.compile`.

# %% [markdown] lang="en"
# ## Check yourself
#
# <details><summary>1. Your run reaches 50,000 tokens/s on a T4 in fp16 with 6·N + attention = 1.2e8 FLOPs per token. What is its MFU?</summary>
#
# 5e4 × 1.2e8 = 6e12 FLOP/s; against the T4's 65 TFLOP/s fp16 that is about 9 %. Against an A100's
# 312 (what nanoGPT divides by) it would look like 2 %.
# </details>
#
# <details><summary>2. The profiler shows "data" as the largest phase. What do you change first?</summary>
#
# The loader: `num_workers` > 0 so batches are prepared while the GPU computes, `pin_memory=True`
# and `.to(device, non_blocking=True)` so the copy overlaps. A faster GPU would not help.
# </details>
#
# <details><summary>3. You want a batch of 256, but only 48 fit. Which accumulation do you choose?</summary>
#
# The smallest k that divides 256 with 256/k ≤ 48: k = 8, micro-batches of 32. (k = 6 would need
# micro-batches of 42.67.)
# </details>
#
# <details><summary>4. You saved model, optimizer and step, and the resumed run's loss jumps up. What is missing?</summary>
#
# Most likely the scheduler: it restarts at the peak learning rate (after warm-up). Then the scaler
# (fp16: the scale starts again at 65,536 and overflows), the RNG states and the data position. And
# if all of that is saved and the run still differs after the resume: a DataLoader without a
# generator of its own, drawing from the global RNG.
# </details>
#
# ## Summary
#
# - A training step is data → forward → backward → optimizer; measure each with the profiler, and
#   synchronise on a GPU before you read a clock.
# - Throughput in tokens/s; MFU = tokens/s × (6·N + 12·L·d·T) ÷ the peak of *your* device and dtype.
# - Mixed precision: autocast with bf16 where it is fast, fp16 with a GradScaler otherwise.
#   `torch.compile` pays off on a GPU after its compile time.
# - Gradient accumulation divides activation memory by k at the same gradient; activation
#   checkpointing trades a second forward for memory.
# - A checkpoint that resumes the same run holds model, optimizer, scheduler, scaler, all RNG
#   states, the data position and the step, written atomically with a checksum; keep the last few,
#   and resume automatically. Give the DataLoader a generator of its own, so that it does not draw
#   from the stream dropout uses.
# - Backward costs about twice the forward in FLOPs; the clock shows it only where matmuls
#   dominate. On a CPU a smaller micro-batch can be faster when its tensors fit in a cache.
#
# **Glossary:** tokens/s, MFU, autocast, GradScaler, gradient accumulation, activation checkpointing,
# checkpoint, atomic write, data position.
#
# **Next:** lab 05 (MFU from a measurement, the bottleneck from a profiler table, a checkpoint that
# resumes the same run, the accumulation steps for a target batch), then lesson 06, Quantization.

# %% [markdown] lang="de"
# ## Prüf dich selbst
#
# <details><summary>1. Dein Lauf schafft auf einer T4 in fp16 50.000 Tokens/s bei 6·N + Attention = 1,2 · 10⁸ FLOPs pro Token. Wie hoch ist seine MFU?</summary>
#
# 5 · 10⁴ × 1,2 · 10⁸ = 6 · 10¹² FLOP/s; gemessen an den 65 TFLOP/s der T4 in fp16 sind das etwa 9
# %. Gemessen an den 312 TFLOP/s einer A100 (durch die nanoGPT teilt) sähe es nach 2 % aus.
# </details>
#
# <details><summary>2. Der Profiler zeigt die Daten („data“) als größte Phase. Was änderst du zuerst?</summary>
#
# Den Loader: `num_workers` > 0, damit Batches vorbereitet werden, während die GPU rechnet,
# `pin_memory=True` und `.to(device, non_blocking=True)`, damit die Kopie überlappt. Eine schnellere
# GPU würde nicht helfen.
# </details>
#
# <details><summary>3. Du willst einen Batch aus 256, aber nur 48 passen. Welche Akkumulation wählst du?</summary>
#
# Das kleinste k, das 256 teilt und 256/k ≤ 48 erfüllt: k = 8, Micro-Batches aus 32. (k = 6 ergäbe
# Micro-Batches aus 42,67 Beispielen.)
# </details>
#
# <details><summary>4. Du hast Modell, Optimierer und Schritt gespeichert, und der Verlust des fortgesetzten Laufs springt nach oben. Was fehlt?</summary>
#
# Am wahrscheinlichsten der Scheduler: Er beginnt wieder bei der höchsten Lernrate (nach dem
# Aufwärmen). Dann der Scaler (fp16: die Skalierung beginnt wieder bei 65.536 und läuft über), die
# Zufallszustände und die Datenposition. Und wenn all das gespeichert ist und der Lauf nach dem
# Fortsetzen trotzdem abweicht: ein DataLoader ohne eigenen Generator, der aus dem globalen RNG
# zieht.
# </details>
#
# ## Zusammenfassung
#
# - Ein Trainingsschritt ist Daten → Vorwärtsdurchlauf → Rückwärtsdurchlauf → Optimierer; miss jede
#   Phase mit dem Profiler und synchronisiere auf einer GPU, bevor du eine Uhr abliest.
# - Durchsatz in Tokens/s; MFU = Tokens/s × (6·N + 12·L·d·T) ÷ die Spitzenleistung *deines* Geräts
#   und Zahlenformats.
# - Mixed Precision: Autocast mit bf16, wo es schnell ist, sonst fp16 mit GradScaler.
#   `torch.compile` lohnt sich auf einer GPU nach seiner Kompilierzeit.
# - Gradientenakkumulation teilt den Speicher der Aktivierungen durch k bei gleichem Gradienten;
#   Activation Checkpointing tauscht einen zweiten Vorwärtsdurchlauf gegen Speicher.
# - Ein Checkpoint, der denselben Lauf fortsetzt, enthält Modell, Optimierer, Scheduler, Scaler,
#   alle Zufallszustände, die Datenposition und den Schritt, atomar und mit Prüfsumme geschrieben;
#   behalte die letzten paar und setze automatisch fort. Gib dem DataLoader einen eigenen Generator,
#   damit er nicht aus dem Strom zieht, den Dropout nutzt.
# - Der Rückwärtsdurchlauf kostet nach FLOPs etwa doppelt so viel wie der Vorwärtsdurchlauf; die
#   Uhr zeigt das nur, wo die Matmuls überwiegen. Auf einer CPU kann ein kleinerer Micro-Batch
#   schneller sein, wenn seine Tensoren in einen Cache passen.
#
# **Glossar:** Tokens/s, MFU, Autocast, GradScaler, Gradientenakkumulation, Activation
# Checkpointing, Checkpoint, atomares Schreiben, Datenposition.
#
# **Weiter:** Lab 05 (MFU aus einer Messung, der Engpass aus einer Profiler-Tabelle, ein Checkpoint,
# der denselben Lauf fortsetzt, die Akkumulationsschritte für einen Ziel-Batch), dann Lektion 06,
# Quantisierung.

# %% [markdown] lang="en"
# **Class results (optional).** To add this run's figures to your group's comparison, set
# `SAVE_RESULTS = True` below and run the cell (or start Jupyter with `COURSE_RESULTS=folder`). It
# writes a small anonymous file to `results/` for your trainer to collect: the hardware, the
# library versions and tokens/s, MFU, the best variant's tokens/s and the final loss; no names, no
# paths. Nothing is sent anywhere.

# %% [markdown] lang="de"
# **Ergebnisse der Gruppe (freiwillig).** Um die Zahlen dieses Laufs zum Vergleich deiner Gruppe
# beizusteuern, setz unten `SAVE_RESULTS = True` und führe die Zelle aus (oder starte Jupyter mit
# `COURSE_RESULTS=Ordner`). Sie schreibt eine kleine anonyme Datei nach `results/`, die deine
# Trainerin oder dein Trainer einsammelt: Hardware, Bibliotheksversionen und Tokens/s, MFU, die
# Tokens/s der besten Variante und der Verlust am Ende; keine Namen, keine Pfade. Es wird nichts
# verschickt.

# %%
# en: True saves this run's figures to results/, anonymously (see above)
# de: True speichert die Zahlen dieses Laufs anonym nach results/ (siehe oben)
SAVE_RESULTS = False
from utils.workshop.results import record

figures = {
    "tokens_per_s": meter.tokens_per_s,
    "mfu_percent": 100 * meter.mfu if meter.mfu else None,
    "best_tokens_per_s": max(tokens for _, tokens, _ in results),
    "val_loss_end": end_loss,
}
record("05", figures, save=SAVE_RESULTS, hw=hw)

# %% tags=["guard"] jupyter={"source_hidden": true}
assert end_loss < start_loss - 0.5, (start_loss, end_loss)
assert len(history["losses"]) == size["steps"]  # en: the whole run | de: der ganze Lauf
assert set(phase_ms) == set(PHASES) and all(v > 0 for v in phase_ms.values())
assert meter.tokens_per_s > 0 and all(m.tokens_per_s > 0 for m in by_dtype.values())
assert accum[4][0] < accum[1][0] and ckpt[True][0] < ckpt[False][0]
