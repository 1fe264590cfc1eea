"""The lexical layer of the support check, always on: how much of what an answer sentence adds
to its question is found, word for word, in a passage (`ragteam.common.overlap`). Cheap,
explainable, and blind to paraphrase and to negation — the trained checker reads the pair
instead when it is there."""

from __future__ import annotations

from ragteam.common.overlap import LEXICAL_THRESHOLD as LEXICAL_THRESHOLD
from ragteam.common.overlap import lexical_score as lexical_score
from ragteam.common.overlap import new_words as new_words
from ragteam.common.text import STOPWORDS as STOPWORDS
from ragteam.common.text import sentences as sentences  # the layer splits answers this way
from ragteam.common.text import words as words
