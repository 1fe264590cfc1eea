"""The action space: every distinct answering strategy a graph of agents can express.

A graph has the agents and a final vote node. Under the paper's constraints (a DAG; the final
node has in-edges and no out-edges; every agent with an edge has a path to the final node), what
a graph answers with is the set of agents that reach the vote. So the distinct strategies are the
non-empty subsets of the agents: `actions` generates them directly, `actions_by_brute_force`
checks that claim by walking every edge set.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

Action = tuple[str, ...]  # agents feeding the vote, in the order of the agent list

FINAL = "__final__"


def actions(agents: Sequence[str]) -> list[Action]:
    """Non-empty subsets of `agents`, smallest first, each in agent order: 2^n - 1 actions."""
    if len(set(agents)) != len(agents) or FINAL in agents:
        raise ValueError(f"agent names must be unique and not {FINAL!r}: {list(agents)}")
    return [
        combo
        for size in range(1, len(agents) + 1)
        for combo in itertools.combinations(agents, size)
    ]


def _is_dag(nodes: Sequence[str], edges: set[tuple[str, str]]) -> bool:
    indegree = {n: 0 for n in nodes}
    for _, dst in edges:
        indegree[dst] += 1
    ready = [n for n in nodes if indegree[n] == 0]
    seen = 0
    while ready:
        node = ready.pop()
        seen += 1
        for src, dst in edges:
            if src == node:
                indegree[dst] -= 1
                if indegree[dst] == 0:
                    ready.append(dst)
    return seen == len(nodes)


def _reaches_final(agent: str, edges: set[tuple[str, str]]) -> bool:
    frontier, seen = [agent], {agent}
    while frontier:
        node = frontier.pop()
        for src, dst in edges:
            if src == node and dst not in seen:
                if dst == FINAL:
                    return True
                seen.add(dst)
                frontier.append(dst)
    return False


def strategy_of(agents: Sequence[str], edges: set[tuple[str, str]]) -> Action | None:
    """The agents feeding the vote in a valid graph, or None when the graph breaks a rule."""
    nodes = [*agents, FINAL]
    if any(src == FINAL for src, _ in edges) or not any(dst == FINAL for _, dst in edges):
        return None
    if not _is_dag(nodes, edges):
        return None
    connected = {n for edge in edges for n in edge} - {FINAL}
    if not all(_reaches_final(a, edges) for a in connected):
        return None
    return tuple(a for a in agents if a in connected)


def actions_by_brute_force(agents: Sequence[str]) -> tuple[int, set[Action]]:
    """Walk every edge set (agent -> agent, agent -> final); return the number of valid graphs
    and the distinct strategies they express. Exponential: for small agent sets only."""
    possible = [(a, b) for a in agents for b in agents if a != b] + [(a, FINAL) for a in agents]
    valid, found = 0, set()
    for mask in range(1 << len(possible)):
        edges = {e for i, e in enumerate(possible) if mask >> i & 1}
        strategy = strategy_of(agents, edges)
        if strategy is not None:
            valid += 1
            found.add(strategy)
    return valid, found
