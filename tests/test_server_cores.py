"""Answers running at once share the cores: alone, all of them; N at once, an even split,
each answer's torch threads set in its own worker thread."""

from __future__ import annotations

import threading

import pytest

from ragteam.server.cores import CoreShare

torch = pytest.importorskip("torch")


def test_a_lone_answer_gets_every_core_and_answers_at_once_split_them():
    share = CoreShare(cores=4)
    seen: dict[str, tuple[int, int]] = {}
    both_in = threading.Barrier(2, timeout=10)
    first_in, second_done = threading.Event(), threading.Event()

    def first() -> None:
        with share.running() as threads:
            seen["first"] = (threads, torch.get_num_threads())
            first_in.set()
            both_in.wait()
            second_done.wait(10)

    def second() -> None:
        first_in.wait(10)
        with share.running() as threads:
            seen["second"] = (threads, torch.get_num_threads())
            both_in.wait()
        second_done.set()

    runs = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in runs:
        t.start()
    for t in runs:
        t.join(10)
    assert seen == {"first": (4, 4), "second": (2, 2)}  # the second came while one ran
    assert share.now == 0

    alone: list[int] = []

    def later() -> None:
        with share.running():
            alone.append(torch.get_num_threads())

    t = threading.Thread(target=later)
    t.start()
    t.join(10)
    assert alone == [4]  # both done: the next answer has every core again


def test_the_count_goes_down_when_an_answer_fails():
    share = CoreShare(cores=2)
    with pytest.raises(ValueError), share.running():
        raise ValueError("the answer failed")
    assert share.now == 0 and share.threads(3) == 1 and share.threads(0) == 2
