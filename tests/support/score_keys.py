"""Score fields every scored episode carries (``scores`` of a trajectory line, of
``mcpgym score --json`` and of ``scores.json``): the tests that read those outputs check them."""

EPISODE_KEYS = frozenset(
    {
        "writes",
        "verified_writes",
        "verification_skips",
        "precheck_skips",
        "blind_retries",
        "recoverable_errors",
        "recovery_attempts",
        "recoveries",
        "defeatism",
        "success",
        "recall",
        "total",
        "misbehave",
    }
)
