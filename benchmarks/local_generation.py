"""Figure ``local_generation``: how fast the local model reads and writes with 2 llama.cpp threads
against 1 thread, on this machine, now (the measurement ``DEFAULT_THREADS`` is chosen from).

Two ``xllamacpp`` servers of the same model (the 0.5B of ``mcpgym[local-model]``, or the row
``$MCPGYM_BENCH_MODEL`` names) are loaded in this process, one with 1 thread and one with 2, and
get the same chat request alternately, repetition by repetition: a prompt of about
:data:`PROMPT_WORDS` words (a different first line each repetition, and ``cache_prompt`` off, so
the whole prompt is evaluated) and :data:`GENERATED` generated tokens at temperature 0
(``ignore_eos`` so that every request generates them all). llama.cpp's own ``timings`` give
prompt tokens per second and generated tokens per second of each request. The figure is the
median over repetitions of 2-thread generated tokens/s / 1-thread generated tokens/s (above 1:
two threads are faster); the prompt rates and their ratio are in the details. Reported, no
target: it decides a default, it does not gate. Unavailable (said loudly) without the model.
"""

from __future__ import annotations

import os
import time
from typing import Any

from mcpgym.benchmarks.harness import Figure, Settings, median

NAME = "local_generation"

PROMPT_WORDS = 400
"""Words of the measured prompt (about 500 tokens: the size of a baseline episode's first prompt)."""

GENERATED = 32
"""Tokens generated per request."""

MODEL_ENV = "MCPGYM_BENCH_MODEL"
"""Environment variable naming the registry row to measure (default: the 0.5B)."""

_TEXT = (
    "The user keeps a wallet, a savings account, a shopping cart, a list of saved weather locations, "
    "a news feed with sections, a calendar and a mailbox; each tool reads or changes one of them. "
)


def _request(rep: int, words: int, generated: int) -> dict[str, Any]:
    body = " ".join((_TEXT * (words // len(_TEXT.split()) + 1)).split()[:words])
    return {
        "messages": [
            {"role": "system", "content": "You are a careful assistant."},
            {"role": "user", "content": f"Request {rep}: summarise this in one line.\n{body}"},
        ],
        "temperature": 0,
        "max_tokens": generated,
        "cache_prompt": False,
        "ignore_eos": True,
    }


def _rates(server: Any, body: dict[str, Any]) -> tuple[float, float, int, int]:
    """(prompt tokens/s, generated tokens/s, prompt tokens, generated tokens) of one request."""
    answer = server.handle_chat_completions(body)
    timings = answer.get("timings") if isinstance(answer, dict) else None
    if not isinstance(timings, dict):
        raise RuntimeError(f"llama.cpp answered without timings: {str(answer)[:300]}")
    return (
        float(timings["prompt_per_second"]),
        float(timings["predicted_per_second"]),
        int(timings["prompt_n"]),
        int(timings["predicted_n"]),
    )


def local_generation(settings: Settings) -> Figure:
    """Figure: generated tokens/s with 2 threads / with 1 thread (module docstring)."""
    from mcpgym.evaluation.llm.local_model import ModelUnavailable, load_server, model_file
    from mcpgym.evaluation.llm.local_models import DEFAULT_MODEL, find_row

    title = "local model: generated tokens/s with 2 llama.cpp threads vs 1 (prompt tokens/s in the details)"
    row = find_row(os.environ[MODEL_ENV]) if os.environ.get(MODEL_ENV) else DEFAULT_MODEL
    try:
        path = model_file(row)
        servers = {threads: load_server(path, threads=threads, context=2048) for threads in (1, 2)}
    except ModelUnavailable as exc:
        return Figure(
            name=NAME,
            title=title,
            value=None,
            unit="x 1 thread",
            target=None,
            available=False,
            baseline="1 thread",
            note=f"not available: the local model is not installed ({exc})",
        )
    tiny = settings.mode == "tiny"
    quick = settings.mode == "quick"
    reps = 1 if tiny else (2 if quick else 5)
    words, generated = (40, 4) if tiny else (PROMPT_WORDS, GENERATED // 2 if quick else GENERATED)
    started = time.perf_counter()
    per: dict[int, list[tuple[float, float, int, int]]] = {1: [], 2: []}
    for rep in range(reps):
        order = (1, 2) if rep % 2 == 0 else (2, 1)  # interleaved, each first in turn
        for threads in order:
            per[threads].append(_rates(servers[threads], _request(rep, words, generated)))
    gen = {t: median(r[1] for r in per[t]) for t in per}
    prompt = {t: median(r[0] for r in per[t]) for t in per}
    ratios = [two[1] / one[1] for one, two in zip(per[1], per[2], strict=True)]
    value = round(median(ratios), 2)
    return Figure(
        name=NAME,
        title=title,
        value=value,
        unit="x 1 thread",
        target=None,
        op=">=",
        baseline="the same requests to the same model loaded with 1 thread, alternating",
        ratio=value,
        details={
            "model": row.name,
            "reps": reps,
            "prompt_tokens": per[1][0][2],
            "generated_tokens": per[1][0][3],
            "prompt_tokens_per_s": {"1": round(prompt[1], 2), "2": round(prompt[2], 2)},
            "generated_tokens_per_s": {"1": round(gen[1], 2), "2": round(gen[2], 2)},
            "prompt_ratio": round(prompt[2] / prompt[1], 2),
            "ratio_per_rep": [round(r, 3) for r in ratios],
            "faster": "2 threads" if value > 1 else "1 thread",
            "load_average": round(os.getloadavg()[0], 2),
            "seconds": round(time.perf_counter() - started, 2),
        },
        note="reported: decides DEFAULT_THREADS (mcpgym.evaluation.llm.local_model), not a gate",
    )


__all__ = ["GENERATED", "MODEL_ENV", "NAME", "PROMPT_WORDS", "local_generation"]
