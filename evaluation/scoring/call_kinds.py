"""Tool kinds without a catalog, from all the evidence a transcript carries: one classifier,
used by the scorer (:func:`mcpgym.evaluation.scoring.calls.resolve_calls`) and by the proxy
(:mod:`mcpgym.evaluation.proxy.classify`).

Evidence, in order (the first that says something wins; docs/design.md §7, "Terms"):

1. A catalog row (mcpgym's apps, ``--catalog``): the tool's declared kind. Nothing below
   overrides it.
2. The tool's MCP annotations, where the transcript or the proxy has the tool list
   (:func:`kind_from_annotations`): ``readOnlyHint: true`` is a ``read``; ``readOnlyHint:
   false`` or ``destructiveHint: true`` a ``write``.
3. The call's arguments (:func:`classify_call`), for tools whose name says little:

   * an inner action (a meta tool that runs another: Klavis Strata's ``execute_action``
     with ``action_name: post_page``, LiveMCPBench's ``execute-tool`` with ``tool_name``):
     the inner name, classified by the name rules, decides (:data:`INNER_NAME_ARGS`);
   * an SQL statement (an argument :data:`SQL_ARGS` or any string starting with an SQL
     keyword): ``SELECT`` / ``WITH ... SELECT`` / ``EXPLAIN`` / ``SHOW`` / ``DESCRIBE`` are
     reads, ``INSERT`` / ``UPDATE`` / ``DELETE`` / ``MERGE`` / ``CREATE`` / ``ALTER`` /
     ``DROP`` / ``TRUNCATE`` / ``GRANT`` / ``REVOKE`` / ``COMMENT`` / ``COPY`` writes (any
     write statement makes the call a write; a transaction that ends in ``ROLLBACK`` took no
     effect: a read); the tables it names are its resource families
     (``<app>.table:<name>``), so a later ``SELECT`` of a written table verifies the write;
   * a program (the ``code`` argument of a tool whose name says it runs code,
     :data:`CODE_TOOL_RE`): a write when it writes files (:data:`CODE_WRITE_RE`) or saves a
     screenshot (:data:`SCREENSHOT_SAVE_RE`), else a read;
   * a shell command (an argument :data:`COMMAND_ARGS` of a tool whose name says it runs
     commands): a write when the command changes files or state (:data:`SHELL_WRITE_RE`:
     ``mkdir``, ``rm``, ``mv``, ``cp``, a ``>`` redirection, ``git commit`` / ``push``,
     ``kubectl apply`` / ``delete`` / ``scale``...; a command-line client's write subcommand,
     :data:`CLI_WRITE_RE`: ``gws gmail users drafts create``; an inline program that writes
     files, :data:`CODE_WRITE_RE`: ``python -c "...to_excel(..."``; a saved screenshot,
     :data:`SCREENSHOT_SAVE_RE`), else a read; a quoted ``>`` is no redirection;
   * a screenshot that saves a file (:data:`SCREENSHOT_RE` with a :data:`FILE_ARGS`
     argument): a write.
   A successful call's result can say more (:func:`classify_result`): a runner's output
   reporting a write (``Created slide11.xml``, ``Unpacked a.pptx (65 XML files)``), a
   screenshot linking the file it saved.
4. The name rules (:func:`mcpgym.evaluation.scoring.tool_catalog.classify_tool`: a namespace
   prefix, REST-wrapper names read as verb + resource + action, verbs).

``unknown`` stays unknown (neither read nor write) and is counted in the scorability
summary.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from mcpgym.evaluation.scoring.tool_catalog import CatalogEntry, classify_tool
from mcpgym.kernel.spec import ToolKind

INNER_NAME_ARGS: tuple[str, ...] = ("action_name", "tool_name", "tool", "action", "function_name", "method")
"""Arguments naming the inner action a meta tool runs."""
SQL_ARGS: tuple[str, ...] = ("sql", "query", "statement", "sql_query", "command", "stmt", "queries")
"""Arguments holding an SQL statement."""
COMMAND_ARGS: tuple[str, ...] = ("command", "cmd", "script", "commands")
"""Arguments holding a shell command."""
SHELL_TOOL_RE = re.compile(
    r"(?:^|[_\W])(?:run_command|execute_command|shell|bash|zsh|sh|powershell|terminal|exec|run_shell|cmd)(?:$|[_\W])",
    re.I,
)
"""Tool names of a shell-command runner."""
SQL_READ = ("select", "with", "explain", "show", "describe", "desc", "values", "table", "pragma")
SQL_WRITE = (
    "insert",
    "update",
    "delete",
    "merge",
    "upsert",
    "replace",
    "create",
    "alter",
    "drop",
    "truncate",
    "grant",
    "revoke",
    "comment",
    "copy",
    "rename",
    "vacuum",
    "reindex",
    "refresh",
    "call",
    "do",
    "set",
)
_SQL_WRITE_RE = re.compile(
    r"\b("
    + "|".join(
        w
        for w in SQL_WRITE
        if w not in ("set", "call", "do", "table", "comment", "copy", "replace", "refresh", "rename")
    )
    + r")\b",
    re.I,
)
_SQL_TABLES_RE = re.compile(
    r"\b(?:from|join|into|update|table(?:\s+if\s+(?:not\s+)?exists)?|view|index\s+\S+\s+on)\s+"
    r"((?:\"[^\"]+\"|`[^`]+`|[A-Za-z_][\w$]*)(?:\.(?:\"[^\"]+\"|`[^`]+`|[A-Za-z_][\w$]*)){0,2})",
    re.I,
)
COMMAND_START = (
    r"(?:(?:^|[;&|(`]|\$\()\s*(?:(?:sudo|xargs|nohup|time|env|command)\s+(?:-\S+\s+)*)?"
    r"|\s-exec\s+|\b(?:do|then|else)\s+)"
)
"""Where a shell command word stands: a line's or a pipeline's start, after ``;``, ``&&``, ``|``,
``(``, a backquote or ``$(``, after ``sudo`` / ``xargs`` (and their flags), ``-exec``, ``do``,
``then``, ``else``. ``for ln in 1 2`` names no ``ln`` command."""
SHELL_WRITE_RE = re.compile(
    COMMAND_START + r"(?:mkdir|rm|rmdir|mv|cp|touch|tee|ln|chmod|chown|dd|truncate|install|unzip|tar\s+-?x)\b"
    r"|(?:^|[;&|(]\s*|\s)(?:git\s+(?:commit|push|add|checkout|merge|rebase|reset|tag|branch\s+-[dD])|kubectl\s+(?:apply|create|delete|scale"
    r"|patch|edit|rollout|set|label|annotate|expose|replace)|helm\s+(?:install|upgrade|uninstall|rollback)"
    r"|docker\s+(?:run|rm|build|push)|pip\s+install|npm\s+install|apt(?:-get)?\s+install|sed\s+-i|curl\s+.*-X\s*(?:POST|PUT|PATCH|DELETE))\b"
    r"|\s>{1,2}\s*[\w./~$\"'-]",
    re.I | re.M,
)
"""A shell command that changes files or state: a file command at a command's start
(:data:`COMMAND_START`), a client's write (``git commit``, ``kubectl apply``, ``pip install``)
anywhere, or a redirection into a file."""
CLI_WRITE_RE = re.compile(
    r"(?:^|[;&|(]\s*)(?!(?:grep|rg|ag|echo|printf|cat|less|head|tail|ls|find|man|which|awk|sed|jq|help)\b)"
    r"[\w.-]+(?:\s+[a-z][\w.-]*){0,3}\s+(?:create|delete|insert|update|upload|send|trash|patch"
    r"|remove|publish|deploy|merge|close|archive)(?=\s|$)",
    re.I,
)
"""A command-line client's write subcommand (``gws gmail users drafts create``, ``gh pr merge``,
``aws s3api delete-object`` is not one: the verb must be a word of its own, among the first
five words of a command; a text tool's argument, ``grep create notes.txt``, is none)."""
QUOTED_RE = re.compile(r"\"(?:\\.|[^\"\\])*\"|'[^']*'")
"""A quoted string of a shell command (its ``>`` is text, no redirection)."""
SCREENSHOT_SAVE_RE = re.compile(
    r"\.screenshot\s*\(\s*\{[^}]*\bpath\s*:|\b(?:screenshot|ss)\s+(?:-o\s+)?[\w./\\~-]+\.(?:png|jpe?g|webp|pdf)\b",
    re.I,
)
"""A program or command that saves a screenshot to a file (``page.screenshot({path: ...})``,
``agent-browser screenshot shot.png``, ``pinchtab ss -o shot.png``)."""
SCREENSHOT_RE = re.compile(r"screenshot", re.I)
"""Tool names that take a screenshot: a read of the page, a write when it saves a file
(:data:`FILE_ARGS`: the Playwright MCP server's ``browser_take_screenshot`` with ``filename``)."""
FILE_ARGS: tuple[str, ...] = ("filename", "path", "file_path", "filePath", "output_path", "save_path")
"""Arguments naming the file a call saves."""
CODE_TOOL_RE = re.compile(r"(?:^|[_\W])(?:python|code_interpreter|run_code|execute_code|exec_code)(?:$|[_\W])", re.I)
"""Tool names of a code runner (its ``code`` argument is a program)."""
CODE_WRITE_RE = re.compile(
    r"\.to_(?:parquet|csv|json|excel|feather|pickle|sql)\s*\(|\bopen\s*\([^)]*,\s*['\"][wax]b?\+?['\"]"
    r"|\bjson\.dump\s*\(|\bshutil\.(?:copy\w*|move|rmtree|make_archive)\s*\(|\bos\.(?:makedirs|mkdir|remove|rename"
    r"|unlink)\s*\(|\.write_(?:text|bytes)\s*\(|\.savefig\s*\(|\.save\s*\(",
)
"""A program that writes files (pandas ``to_*``, ``open(..., 'w')``, ``json.dump``, ``shutil``,
``os.makedirs``, ``Path.write_text``, ``.save(``)."""


def kind_from_annotations(annotations: Any) -> tuple[ToolKind | None, bool]:
    """``(kind, destructive)`` from MCP tool annotations (a dict with ``readOnlyHint`` /
    ``destructiveHint``, camelCase or snake_case, or an object with ``read_only_hint`` /
    ``destructive_hint``): ``read`` for ``readOnlyHint: true``; ``write`` for ``readOnlyHint:
    false`` or ``destructiveHint: true``; ``(None, False)`` when they say nothing."""

    def hint(*names: str) -> Any:
        for n in names:
            v = annotations.get(n) if isinstance(annotations, dict) else getattr(annotations, n, None)
            if isinstance(v, bool):
                return v
        return None

    read_only = hint("readOnlyHint", "read_only_hint")
    destructive = hint("destructiveHint", "destructive_hint")
    if read_only is True:
        return ToolKind.READ, False
    if read_only is False or destructive is True:
        return ToolKind.WRITE, destructive is True
    return None, False


SQL_SHAPE_RE = re.compile(
    r"^\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*(?:begin\b|start\s+transaction\b|select\b.*?\bfrom\b|select\s+[\w(*'\"]"
    r"|with\s+(?:recursive\s+)?\w+\s*(?:\([^)]*\)\s*)?as\s*\(|explain\b|show\s+\w+|describe\s+\w+|insert\s+into\b"
    r"|update\s+\S+\s+set\b|delete\s+from\b|merge\s+into\b|truncate\b|copy\s+\S+\s+(?:from|to)\b"
    r"|(?:create|alter|drop)\s+(?:or\s+replace\s+)?(?:unique\s+)?(?:temp(?:orary)?\s+)?(?:materialized\s+)?"
    r"(?:table|index|view|function|procedure|(?:constraint\s+|event\s+)?trigger|schema|policy|role|user|extension"
    r"|type|sequence|database|rule|domain|aggregate)\b"
    r"|(?:grant|revoke)\s+\w+|comment\s+on\b|vacuum\b|reindex\b|refresh\s+materialized\b|do\s+\$)",
    re.I | re.S,
)
"""The shape of an SQL statement (not a search phrase that starts with "select" or "show")."""


def sql_statement(arguments: Any) -> str | None:
    """The SQL statement a call's arguments carry (an :data:`SQL_ARGS` argument first, then any
    string argument) when it has the shape of one (:data:`SQL_SHAPE_RE`), else None."""
    if not isinstance(arguments, dict):
        return None
    values = [arguments.get(k) for k in SQL_ARGS] + list(arguments.values())
    for v in values:
        if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            v = ";\n".join(v)
        if isinstance(v, str) and len(v) <= 200_000 and SQL_SHAPE_RE.match(v):
            return v
    return None


def sql_kind(sql: str) -> ToolKind:
    """``write`` when any statement of ``sql`` changes data or schema (:data:`SQL_WRITE` at a
    statement's start, or a data-changing keyword anywhere in a ``WITH`` query), unless the
    transaction ends in ``ROLLBACK``; else ``read``."""
    text = re.sub(r"--[^\n]*|/\*.*?\*/", " ", sql, flags=re.S)
    text = re.sub(r"'(?:[^']|'')*'", "''", text)  # string literals say nothing
    statements = [s.strip() for s in text.split(";") if s.strip()]
    if statements and statements[-1].lower().startswith("rollback"):
        return ToolKind.READ
    for s in statements:
        first = s.split(None, 1)[0].lower() if s.split() else ""
        if first in SQL_WRITE and first not in ("set",):
            return ToolKind.WRITE
        if first == "with" and _SQL_WRITE_RE.search(s):
            return ToolKind.WRITE
    return ToolKind.READ


def sql_tables(sql: str) -> list[str]:
    """The table names a statement names (after ``FROM``, ``JOIN``, ``INTO``, ``UPDATE``,
    ``TABLE``), lowercased, schema prefix and quotes dropped, in order."""
    out: list[str] = []
    for m in _SQL_TABLES_RE.finditer(sql):
        name = m.group(1).strip("`").split(".")[-1].strip('"`').lower()
        if name not in out and name not in ("select", "lateral", "only", "unnest"):
            out.append(name)
    return out


def _inner_name(arguments: dict[str, Any]) -> str | None:
    for k in INNER_NAME_ARGS:
        v = arguments.get(k)
        if isinstance(v, str) and 0 < len(v) <= 128 and re.fullmatch(r"[\w.\-/: ]+", v):
            return v
    return None


WRITE_REPORT_RE = re.compile(
    r"^[ \t]*(?:successfully\s+)?(?:created|wrote|written|saved|unpacked|exported)[ \t]+\S"
    r"|^[\w .-]{0,40}\b(?:written|created|saved|exported) (?:to|in|at)\b",
    re.IGNORECASE | re.MULTILINE,
)
"""A runner's output that reports what it wrote, at the start of a line of its own (``Created
slide11.xml from ...``, ``Unpacked a.pptx (65 XML files)``, ``Files written to C:/tmp/``; a
commit message's "Generated with ..." footer is none)."""
SAVED_FILE_RE = re.compile(r"\]\([^)\n]+\.(?:png|jpe?g|webp|pdf)\)", re.IGNORECASE)
"""A result that links the file it saved (the Playwright MCP server's ``[Screenshot of
viewport](C:\\...\\page.png)``)."""


def is_runner(tool: str) -> bool:
    """``tool``'s name says it runs shell commands or code (:data:`SHELL_TOOL_RE`,
    :data:`CODE_TOOL_RE`): its output is the command's, failures included."""
    return bool(SHELL_TOOL_RE.search(tool) or CODE_TOOL_RE.search(tool))


def classify_result(entry: CatalogEntry, result: Any) -> CatalogEntry:
    """The entry of one successful call of a tool known only by the name rules, refined by its
    result: a shell or code runner's read whose output reports a write (:data:`WRITE_REPORT_RE`),
    or a screenshot whose result links the file it saved (:data:`SAVED_FILE_RE`), is a write;
    else ``entry`` itself."""
    if entry.source != "heuristic" or not isinstance(result, str):
        return entry
    text = result[:2000]
    if entry.kind == ToolKind.READ and is_runner(entry.name) and WRITE_REPORT_RE.search(text):
        return entry.model_copy(update={"kind": ToolKind.WRITE})
    if entry.kind == ToolKind.UNKNOWN and SCREENSHOT_RE.search(entry.name) and SAVED_FILE_RE.search(text):
        return entry.model_copy(update={"kind": ToolKind.WRITE})
    return entry


def classify_call(entry: CatalogEntry, arguments: Any) -> CatalogEntry:
    """The entry of one call of a tool known only by the name rules, refined by its arguments
    (module docstring, rule 3); the tool's own entry when the arguments say nothing.

    Args:
        entry: the tool's entry (only a ``heuristic`` one is refined).
        arguments: the call's arguments.

    Returns:
        A :class:`CatalogEntry` (``source="heuristic"``) whose kind and resources are the
        call's; for a meta tool, its ``name`` is ``<tool>:<inner action>`` (the scorer's
        "same tool" is the same inner action).
    """
    if entry.source != "heuristic" or not isinstance(arguments, dict):
        return entry
    inner = _inner_name(arguments) if entry.kind == ToolKind.UNKNOWN else None  # get_action_details reads
    if inner is not None and inner != entry.name:
        sub = classify_tool(inner, default_app=entry.app)
        if sub.kind != ToolKind.UNKNOWN:
            inner_args = next(
                (
                    v
                    for k in ("params", "arguments", "args", "body", "input", "parameters")
                    if isinstance(v := arguments.get(k), dict)
                ),
                None,
            )
            refined = classify_call(sub, inner_args) if inner_args else sub
            # the call is one of the inner action's: "the same tool" means the same action
            return entry.model_copy(
                update={"name": f"{entry.name}:{inner}", "kind": refined.kind, "resources": refined.resources}
            )
    sql = sql_statement(arguments)
    if sql is not None and entry.kind in (ToolKind.UNKNOWN, ToolKind.READ, ToolKind.WRITE):
        tables = sql_tables(sql)
        families = [f"{entry.app}.table:{t}" for t in tables] or list(entry.resources)
        return entry.model_copy(update={"kind": sql_kind(sql), "resources": families})
    if CODE_TOOL_RE.search(entry.name) and isinstance(code := arguments.get("code"), str):
        writes = CODE_WRITE_RE.search(code[:200_000]) or SCREENSHOT_SAVE_RE.search(code[:200_000])
        kind = ToolKind.WRITE if writes else ToolKind.READ
        return entry.model_copy(update={"kind": kind, "resources": [f"{entry.app}.files"]})
    if SHELL_TOOL_RE.search(entry.name):
        cmd = command_of(arguments)
        if cmd is not None:
            bare = QUOTED_RE.sub('""', cmd[:200_000])  # a quoted ">" is a CSS selector or text, no redirection
            writes = (
                SHELL_WRITE_RE.search(bare)
                or CLI_WRITE_RE.search(bare)
                or CODE_WRITE_RE.search(cmd[:200_000])
                or SCREENSHOT_SAVE_RE.search(cmd[:200_000])
            )
            kind = ToolKind.WRITE if writes else ToolKind.READ
            return entry.model_copy(update={"kind": kind, "resources": [f"{entry.app}.files"]})
    if entry.kind == ToolKind.UNKNOWN and SCREENSHOT_RE.search(entry.name):
        saved = any(isinstance(arguments.get(k), str) and arguments[k].strip() for k in FILE_ARGS)
        if saved:
            return entry.model_copy(update={"kind": ToolKind.WRITE})
    return entry


MKDIR_ONLY_RE = re.compile(r"\A\s*mkdir\s+(?:-p|--parents)\s+([^;&|<>`$()\n]+?)\s*\Z")
"""A shell command that is only ``mkdir -p DIR...`` (the directories, split on spaces)."""


def command_of(arguments: Any) -> str | None:
    """The shell command a runner call's arguments hold (under a :data:`COMMAND_ARGS` key), or None."""
    if not isinstance(arguments, dict):
        return None
    return next((arguments[k] for k in COMMAND_ARGS if isinstance(arguments.get(k), str)), None)


def mkdir_of_existing(arguments: Any, earlier: Iterable[str], cwd: Any = None) -> bool:
    """True when a shell call's command is only ``mkdir -p`` of directories that exist already:
    each is the harness's working directory or one of its parents, or an earlier successful call
    named it as a path or a path's parent (``ls /workspace``, ``Read /workspace/a.go``).
    ``mkdir -p`` of a directory that exists changes nothing, so the call is no write. The four
    labellers of the seventh first-contact source read ``mkdir -p /workspace`` in Claude Code
    runs whose working directory was ``/workspace`` so (docs/labelling.md).

    Args:
        arguments: the call's arguments (its command under a :data:`COMMAND_ARGS` key).
        earlier: the canonical JSON of each earlier successful call's arguments (read only when
            the command is a ``mkdir -p``).
        cwd: the working directory the transcript records (Claude Code's ``cwd``), if any.
    """
    cmd = command_of(arguments)
    m = MKDIR_ONLY_RE.match(cmd[:2000]) if cmd is not None else None
    if m is None:
        return False
    dirs = [d.strip("'\"").rstrip("/") for d in m.group(1).split()]
    if not dirs or any(not d or d.startswith("-") for d in dirs):
        return False
    home = cwd.rstrip("/") + "/" if isinstance(cwd, str) and cwd.startswith("/") else None
    texts = list(earlier)
    return all(
        (home is not None and home.startswith(d + "/"))
        or any(re.search(re.escape(d) + r"(?:/|[\"\s]|\Z)", t) for t in texts)
        for d in dirs
    )


__all__ = [
    "MKDIR_ONLY_RE",
    "command_of",
    "mkdir_of_existing",
    "CLI_WRITE_RE",
    "COMMAND_START",
    "FILE_ARGS",
    "QUOTED_RE",
    "SCREENSHOT_RE",
    "SCREENSHOT_SAVE_RE",
    "CODE_TOOL_RE",
    "CODE_WRITE_RE",
    "COMMAND_ARGS",
    "INNER_NAME_ARGS",
    "SHELL_TOOL_RE",
    "SHELL_WRITE_RE",
    "SQL_ARGS",
    "SQL_SHAPE_RE",
    "SQL_READ",
    "SQL_WRITE",
    "WRITE_REPORT_RE",
    "SAVED_FILE_RE",
    "classify_call",
    "classify_result",
    "is_runner",
    "kind_from_annotations",
    "sql_kind",
    "sql_statement",
    "sql_tables",
]
