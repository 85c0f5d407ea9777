"""``local:MODEL`` agents: a local model of :mod:`mcpgym.evaluation.llm.local_models` (or the
``--model-path`` GGUF file), served for the run by the run itself.

``mcpgym run --agent local:qwen2.5-coder-0.5b-instruct-q4_k_m --model-context 8192 --model-threads 2``
starts the model's server on loopback before the first episode (one per model the run's
``local:`` agents name, ended after the last), with the context window ``--model-context``
gives (:data:`~mcpgym.evaluation.llm.local_model.DEFAULT_CONTEXT` tokens when not given) and
``--model-threads`` CPU threads (:data:`~mcpgym.evaluation.llm.local_model.DEFAULT_THREADS`),
and every ``local:`` agent of that model speaks to it as an OpenAI-compatible agent.
``--model-path FILE.gguf`` serves any GGUF file under the name its metadata gives
(``general.name``, :func:`~mcpgym.evaluation.llm.local_models.served_name`): ``local:THAT-NAME``.
The settings are recorded in the manifest twice: in the run's ``settings`` (``model_context``,
``model_threads``, ``model_path``) and in the agent's ``describe()`` (``server``: the served
model's name, its sha256 or file, context and threads). A prompt longer than the window is
refused by llama.cpp (HTTP 400): the episode ends ``errored`` with that error.
"""

from __future__ import annotations

from typing import Any

from mcpgym.evaluation.llm.local_models import LocalModelRow, PathModel
from mcpgym.evaluation.llm.openai_chat import OpenAIAgent

UNSTARTED_URL = "http://127.0.0.1:9/v1"
"""The base URL of a local agent whose server was not started (:meth:`LocalModelAgent.attach`
was not called): port 9 (discard) on loopback, so a request fails at once and is never sent on."""


class LocalModelAgent(OpenAIAgent):
    """An OpenAI-compatible agent of a local model, whose server the run starts.

    Args:
        model: a local model's name (a row of :mod:`~mcpgym.evaluation.llm.local_models`, or
            the ``--model-path`` file's name; the run checks it before it makes the agent,
            :func:`mcpgym.evaluation.run.launch.check_local_models`).
        **options: as :class:`~mcpgym.evaluation.llm.openai_chat.OpenAIAgent` (no ``base_url``
            or ``api_key``: the server is the run's own).

    Raises:
        ValueError: an empty model name, or a ``base_url`` / ``api_key`` given.
    """

    def __init__(self, model: str, **options: Any) -> None:
        for given in ("base_url", "api_key"):
            if options.get(given) is not None:
                raise ValueError(f"local:{str(model)[:80]} takes no {given}: mcpgym run serves the model itself")
            options.pop(given, None)
        super().__init__(model, base_url=UNSTARTED_URL, api_key="local", **options)
        self.server: dict[str, Any] | None = None

    def attach(self, url: str, *, context: int, threads: int, model: LocalModelRow | PathModel | None = None) -> None:
        """Point the agent at the server the run started: its base URL, and its settings for
        :meth:`describe` (``context``: tokens; ``threads``: llama.cpp CPU threads; ``model``:
        the served model, whose name and sha256 (a row) or file and size (``--model-path``)
        are recorded)."""
        self.base_url = url.rstrip("/")
        self.server = {"module": "mcpgym.evaluation.llm.local_model", "context": context, "threads": threads}
        if isinstance(model, LocalModelRow):
            self.server |= {"model": model.name, "sha256": model.sha256, "size": model.size, "extra": model.extra}
        elif isinstance(model, PathModel):
            self.server |= {"model": model.name, "path": str(model.path), "size": model.size, "title": model.title}

    provider = "local"

    def describe(self) -> dict[str, Any]:
        """The OpenAI-compatible description (``provider`` ``local``) and the server's settings
        (``server``: None when no server was attached)."""
        out = super().describe()
        out["server"] = self.server
        return out


def local_agents(agents: list[Any]) -> list[LocalModelAgent]:
    """The :class:`LocalModelAgent` objects among ``agents`` (objects with an ``agent``
    attribute, such as the runner's ``AgentEntry``, or agents)."""
    found = [getattr(a, "agent", a) for a in agents]
    return [a for a in found if isinstance(a, LocalModelAgent)]


__all__ = ["UNSTARTED_URL", "LocalModelAgent", "local_agents"]
