"""The `reader` support layer: a sentence is supported by a passage when the span reader, given
the question and that passage alone, finds words the sentence says (QA-based checking, as
QAFactEval). A name, number or date the sentence gives that no reading of the passage gives
finds no agreement, whatever the word overlap. The lexical share of the rest of the sentence's
words scales the score.

An answer that is itself the reader's span (`read`) is not read again, from its passage or
another: its check is the reader's confidence over all the passages it read together (span and
answerability, which already sums what every passage gives for those words), on the reader's
calibrated scale. (Reading the other passages one by one let a passage that shares one word
with the span, "Northern Sound" for "northern cape of Quillan", support an answer the
reader itself was unsure of.)

An answer a model wrote (`oner`, `smart`, ...) is checked a second way too, for its label: would
the reader itself give it, with confidence? The reader reads the question over every passage
read at once, as `read` does; the answer is `sure` when one of the spans it finds says only
words the answer says (and not only the question's) and the reader's confidence in that span
reaches the threshold its own answers are labelled supported at. Sentence support (and so the
citations) stays the per-passage check above: a passage that says the answer's words is still
where it came from, but an answer the reader is unsure of is not labelled supported (on
HotpotQA dev100 `oner`'s answers labelled supported went from 53, 9 right, to 5, 3 right:
docs/benchmarks.md §57).

Scores are scaled so that each kind's threshold, fitted on held training questions
(`ragteam train reader`, its `.calibration.json`), falls at `THRESHOLD`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragteam.errors import RagteamError
from ragteam.reader.agreement import content, pair_score
from ragteam.support.layers import Pairs, Scored, closest, lexical

if TYPE_CHECKING:
    from ragteam.reader import Reader
    from ragteam.types import Passage

THRESHOLD = 0.5
READ_SPANS = 12  # spans of the reading over all passages that a written answer is held to


def reader(pairs: Pairs) -> Scored:
    from ragteam.reader.answer import Readers

    try:  # the reader that read the answer, on its own calibration
        model = (pairs.readers or Readers()).answer()
    except (RagteamError, ImportError, OSError) as exc:
        return lexical(pairs, f"the span reader is unavailable ({exc}): the lexical layer alone")
    scores = [[0.0] * len(pairs.passages) for _ in pairs.sentences]
    own = _own_span(pairs)
    for i, j in closest(pairs.lexical):
        if own is not None and own[0] == i:
            continue  # the span's sentence: the reader's confidence over all passages decides
        found = pair_score(
            model, pairs.question, pairs.sentences[i], pairs.passages[j], pairs.lexical[i][j]
        )
        scores[i][j] = _scaled(found, model.calibration.support)
    sure = None
    if own is not None:
        i, j, confidence = own
        polar = bool(pairs.evidence) and pairs.evidence[0].span.kind in ("yes", "no")
        scores[i][j] = _scaled(confidence, model.answer_threshold(polar))
    else:
        sure = reader_would_say(model, pairs.question, pairs.sentences, list(pairs.passages))
    return Scored("reader", THRESHOLD, scores, extra={"reader": model.identity}, sure=sure)


def reader_would_say(
    model: Reader, question: str, sentences: Sequence[str], passages: list[Passage]
) -> bool:
    """Whether the reader, reading `question` over all `passages` at once, finds with the
    confidence its own answers are labelled supported at a span whose content words are all
    the answer's (`sentences`) and not all the question's; never when it judges the passages
    to hold no answer."""
    if not passages:
        return False
    reading = model.read(question, passages, top=READ_SPANS, key_lines=True)
    if reading.no_answer >= model.calibration.abstain:
        return False
    asked = set(content(question))
    said = set(content(" ".join(sentences)))
    for span in reading.spans:
        words = set(content(span.text))
        if span.kind != "span" or not words or words <= asked or not words <= said:
            continue
        if model.confidence(reading, span, passages) >= model.calibration.span:
            return True
    return False


def _own_span(pairs: Pairs) -> tuple[int, int, float] | None:
    """(sentence, passage, confidence) of the reader's own span when the answer is one."""
    if not pairs.evidence:
        return None
    best = pairs.evidence[0]
    column = {p.id: j for j, p in enumerate(pairs.passages)}
    if best.passage_id not in column:
        return None
    for i, sentence in enumerate(pairs.sentences):
        if best.text and best.text in sentence:
            return i, column[best.passage_id], best.score
    return None


def _scaled(score: float, threshold: float) -> float:
    """`score` on a scale where `threshold` becomes THRESHOLD (monotone, 0 -> 0, 1 -> 1)."""
    if score <= threshold:
        return THRESHOLD * score / max(threshold, 1e-9)
    return THRESHOLD + (1 - THRESHOLD) * (score - threshold) / max(1 - threshold, 1e-9)
