"""A trace step said in words a person reads ("searched the documents", "wrote the answer"):
the one place they are made. Every step the server sends carries them as `words` (the answer
stream's step events, a run's trace), and the page and MCP's progress show those."""

from __future__ import annotations

from typing import Any

ROLE_WORDS = {
    "reconstructor": "worked out what to look up",
    "locator": "picked the sentences that matter",
    "generator": "wrote the answer",
    "answerer": "wrote the answer",
    "reasoner": "took one reasoning step",
    "planner": "planned the steps",
    "step_definer": "defined the next step",
    "extractor": "took notes from a passage",
    "qa": "answered the step",
    "summary": "wrote the answer from the steps",
    "executor": "chose a tool",
    "answer_agent": "read the tool's result",
    "verifier": "checked the step",
    "final": "wrote the answer",
}
NOTE_WORDS = {
    "mode": "chose how to answer",
    "label_calibration": "loaded the agent's answer-label weights",
    "facts": "kept the facts found",
    "abstained": "withheld an answer nothing supports",
    "model_loading": "loading the model (its first use here)",
    "model_loaded": "loaded the model",
}
KIND_WORDS = {
    "retrieve": "searched the documents",
    "rerank": "put the passages in order",
    "support": "checked each sentence against the passages read",
}


def step_words(step: dict[str, Any]) -> str:
    """What a step (as the answer stream sends it) did, in words."""
    kind, role = step.get("kind", ""), str(step.get("role", "")).split("/")[-1]
    if kind in KIND_WORDS:
        return KIND_WORDS[kind]
    if kind == "read":
        if role == "verdict":
            return "weighed the claim against the passages"
        return "read the passages for the answer's words"
    if kind == "tool":
        return f"used the tool {role}"
    if kind == "llm":
        return ROLE_WORDS.get(role, f"{role} wrote")
    if kind == "note":
        event = (step.get("meta") or {}).get("event", "")
        if event == "model_loaded":  # how long a person waited for it
            return f"{NOTE_WORDS[event]} in {float(step.get('seconds') or 0):.1f} s"
        return NOTE_WORDS.get(event) or "noted: " + str(step.get("output", ""))[:120]
    return kind


def with_words(step: dict[str, Any]) -> dict[str, Any]:
    """`step` with its `words` added."""
    return {**step, "words": step_words(step)}
