"""Real agent harnesses driven over mcpgym episodes (server truth, issue 35): a scripted model
behind an OpenAI-compatible endpoint (:mod:`.scripted_model`), one standalone driver script per
harness (:mod:`.drivers`) and the orchestration that plays an episode through one
(:mod:`.episodes`)."""
