"""Write data/instructions.jsonl: the instruction pairs lesson 07 fine-tunes on.

    .venv/bin/python -m tools.make_instructions          # rewrites data/instructions.jsonl

Every pair is about the course's own topics, in English and in German, generated from templates
over the course's facts: the chip table (utils/platform/chips.py), the bytes of each number format, and
short statements the lessons make.  One JSON object per line: {"lang", "topic", "prompt",
"answer"}.  The answers follow one fixed, short style ("T4: 16 GB, 320 GB/s."), so a few dozen
LoRA steps visibly teach it to a model that answered in its own words before.  The output is
deterministic (no randomness), so rerunning it changes nothing.
"""

from __future__ import annotations

import json

from utils.course import ROOT
from utils.platform.chips import CHIPS

TARGET = ROOT / "data" / "instructions.jsonl"

BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1, "int4": 0.5}
MODELS = {"135M": 135e6, "360M": 362e6, "1.7B": 1.71e9, "7B": 7e9, "13B": 13e9}

# Facts the lessons state, as (English prompt, answer, German prompt, answer).
STATEMENTS = [
    (
        "Why warm up before timing a matmul?",
        "Course answer: the first call includes start-up costs; time later calls.",
        "Warum vor dem Messen einer Matmul aufwärmen?",
        "Kursantwort: Der erste Aufruf enthält Startkosten; miss spätere Aufrufe.",
    ),
    (
        "Why synchronize before stopping the timer on a GPU?",
        "Course answer: GPU work is asynchronous; without a sync you time the queueing.",
        "Warum vor dem Stoppen des Timers auf der GPU synchronisieren?",
        "Kursantwort: GPU-Arbeit läuft asynchron; ohne Sync misst du nur das Einreihen.",
    ),
    (
        "How many FLOPs does an m×k by k×n matmul take?",
        "Course answer: 2·m·k·n, one multiply and one add per term.",
        "Wie viele FLOPs braucht eine Matmul m×k mal k×n?",
        "Kursantwort: 2·m·k·n, je Term eine Multiplikation und eine Addition.",
    ),
    (
        "What does LoRA train?",
        "Course answer: two small matrices B·A per layer; the base stays frozen.",
        "Was trainiert LoRA?",
        "Kursantwort: zwei kleine Matrizen B·A pro Schicht; die Basis bleibt eingefroren.",
    ),
    (
        "Why does LoRA start with B = 0?",
        "Course answer: then B·A = 0 and training starts exactly at the base model.",
        "Warum beginnt LoRA mit B = 0?",
        "Kursantwort: Dann ist B·A = 0, und das Training beginnt genau beim Basismodell.",
    ),
    (
        "What is the LoRA scale?",
        "Course answer: alpha / r, multiplied into B·A x.",
        "Was ist die LoRA-Skala?",
        "Kursantwort: alpha / r, mit B·A x multipliziert.",
    ),
    (
        "How do I merge a LoRA adapter?",
        "Course answer: W' = W + (alpha / r)·B·A, then drop A and B.",
        "Wie rechne ich einen LoRA-Adapter ein?",
        "Kursantwort: W' = W + (alpha / r)·B·A, danach A und B weglassen.",
    ),
    (
        "Where do I merge a QLoRA adapter?",
        "Course answer: into dequant(W4) in 16 or 32 bits, never into the 4-bit layers.",
        "Wohin rechne ich einen QLoRA-Adapter ein?",
        "Kursantwort: in dequant(W4) mit 16 oder 32 Bit, nie in die 4-Bit-Schichten.",
    ),
    (
        "Which compute dtype does QLoRA use on a T4?",
        "Course answer: float16; the T4 has no bfloat16 in hardware.",
        "Welchen Rechen-Datentyp nutzt QLoRA auf einer T4?",
        "Kursantwort: float16; die T4 hat kein bfloat16 in Hardware.",
    ),
    (
        "What does a checkpoint need for an exact resume?",
        "Course answer: model, optimizer, scheduler, scaler, random generators and data position.",
        "Was braucht ein Checkpoint für eine exakte Fortsetzung?",
        "Kursantwort: Modell, Optimierer, Scheduler, Scaler, Zufallsgeneratoren und Datenposition.",
    ),
    (
        "What is perplexity?",
        "Course answer: exp of the mean next-token loss; lower is better.",
        "Was ist Perplexität?",
        "Kursantwort: exp des mittleren Next-Token-Verlusts; kleiner ist besser.",
    ),
    (
        "Why is NF4 better than int4 for weights?",
        "Course answer: its 16 levels sit at normal quantiles, dense near 0.",
        "Warum ist NF4 für Gewichte besser als int4?",
        "Kursantwort: Seine 16 Stufen liegen an Normalquantilen, dicht bei 0.",
    ),
    (
        "What does double quantization save?",
        "Course answer: about 0.37 bit per parameter.",
        "Was spart doppelte Quantisierung?",
        "Kursantwort: etwa 0,37 Bit pro Parameter.",
    ),
    (
        "What is MFU?",
        "Course answer: model FLOP/s at the measured speed divided by the device's peak.",
        "Was ist MFU?",
        "Kursantwort: Modell-FLOP/s bei der gemessenen Geschwindigkeit geteilt durch die Spitze.",
    ),
]


def _num(value: float, lang: str) -> str:
    """A number as the course writes it in that language (1,234.5 / 1.234,5)."""
    s = f"{value:,.1f}" if value % 1 else f"{value:,.0f}"
    return s.translate(str.maketrans(",.", ".,")) if lang == "de" else s


def _gb(n_bytes: float, lang: str) -> str:
    return _num(round(n_bytes / 1e9, 1), lang) + " GB"


def pairs() -> list[dict]:
    out = []

    def add(topic: str, lang: str, prompt: str, answer: str) -> None:
        out.append({"lang": lang, "topic": topic, "prompt": prompt, "answer": answer})

    for chip in CHIPS.values():
        name = chip.name
        mem, bw = chip.memory_gb, chip.bandwidth_gbs
        if mem and bw:
            add(
                "chip",
                "en",
                f"How much memory does the {name} have?",
                f"{name}: {_num(mem, 'en')} GB, {_num(bw, 'en')} GB/s.",
            )
            add(
                "chip",
                "de",
                f"Wie viel Speicher hat die {name}?",
                f"{name}: {_num(mem, 'de')} GB, {_num(bw, 'de')} GB/s.",
            )
            add(
                "chip",
                "en",
                f"What is the memory bandwidth of the {name}?",
                f"{name}: {_num(bw, 'en')} GB/s.",
            )
            add(
                "chip",
                "de",
                f"Welche Speicherbandbreite hat die {name}?",
                f"{name}: {_num(bw, 'de')} GB/s.",
            )
        for dtype, tflops in chip.tflops.items():
            unit = "TOPS" if dtype == "int8" else "TFLOP/s"
            add(
                "peak",
                "en",
                f"What is the {dtype} peak of the {name}?",
                f"{name}, {dtype}: {_num(tflops, 'en')} {unit} (data sheet).",
            )
            add(
                "peak",
                "de",
                f"Wie hoch ist die {dtype}-Spitzenleistung der {name}?",
                f"{name}, {dtype}: {_num(tflops, 'de')} {unit} (Datenblatt).",
            )
        if "float32" in chip.tflops and bw:
            ridge = chip.tflops["float32"] * 1e12 / (bw * 1e9)
            add(
                "ridge",
                "en",
                f"Where is the float32 ridge point of the {name}?",
                f"{name}: {_num(round(ridge, 1), 'en')} FLOP per byte.",
            )
            add(
                "ridge",
                "de",
                f"Wo liegt der float32-Knickpunkt der {name}?",
                f"{name}: {_num(round(ridge, 1), 'de')} FLOP pro Byte.",
            )
    for model, n in MODELS.items():
        for dtype, b in BYTES.items():
            add(
                "weights",
                "en",
                f"How much memory do the weights of a {model} model take in {dtype}?",
                f"{model} in {dtype}: {_gb(n * b, 'en')}.",
            )
            add(
                "weights",
                "de",
                f"Wie viel Speicher brauchen die Gewichte eines {model}-Modells in {dtype}?",
                f"{model} in {dtype}: {_gb(n * b, 'de')}.",
            )
        add(
            "full",
            "en",
            f"How much memory does full fine-tuning of a {model} model with AdamW need?",
            f"{model}, AdamW fp32: {_gb(16 * n, 'en')} plus activations.",
        )
        add(
            "full",
            "de",
            f"Wie viel Speicher braucht volles Feintuning eines {model}-Modells mit AdamW?",
            f"{model}, AdamW fp32: {_gb(16 * n, 'de')} plus Aktivierungen.",
        )
    for d in (576, 960, 2048, 4096):
        for r in (4, 8, 16, 64):
            n = r * 2 * d
            add(
                "lora",
                "en",
                f"How many parameters does LoRA with r={r} add to a {d}×{d} layer?",
                f"r·(in + out) = {_num(n, 'en')} parameters.",
            )
            add(
                "lora",
                "de",
                f"Wie viele Parameter fügt LoRA mit r={r} einer {d}×{d}-Schicht hinzu?",
                f"r·(in + out) = {_num(n, 'de')} Parameter.",
            )
    for en, a_en, de, a_de in STATEMENTS:
        add("concept", "en", en, a_en)
        add("concept", "de", de, a_de)
        add("concept", "en", "In one line: " + en[0].lower() + en[1:], a_en)
        add("concept", "de", "In einer Zeile: " + de, a_de)
    return out


def main() -> None:
    rows = pairs()
    TARGET.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    print(f"{len(rows)} pairs -> {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
