"""SQuAD-format files for the reader's training (`ragteam train reader --squad FILE`), made from
the parts of SQuAD that public repositories hold as plain files.

    python bench/squad_parts.py --train TRAIN_PART --xquad XQUAD_EN --out DIR [--xquad-first N]

SQuAD 1.1 (Rajpurkar et al. 2016, CC BY-SA 4.0) is kept in most repositories as a large object
that their snapshots do not carry. Two plain copies of parts of it:
- TRAIN_PART: `train-v1.1.json` of github.com/ermeba/jupiter_bert (commit b893930d0742), the
  first 1,280,000 bytes of SQuAD 1.1 train, cut mid-article; the complete articles are kept
  (11 articles, 3,807 questions, every answer offset checked against its paragraph);
- XQUAD_EN: `xquad.en.json` of the same repository, XQuAD's English file (Artetxe et al. 2020,
  CC BY-SA 4.0): 240 paragraphs of SQuAD 1.1 dev with their 1,190 questions.
Neither is a benchmark question here (the benchmarks are HotpotQA, PopQA, ARC, PubHealth and
the document set). Each input's SHA-256 is checked; a changed file is said, never used."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

EXPECTED = {
    "train": "65d8563d3238e8c94b0a255fedbf9e4bda3202054348880ff9817c1952db6fa4",
    "xquad": "e4c57d1c9143aaa1c5d265ba5987a65f4e69528d2a98f29d6e75019b10344f29",
}


def checked(path: Path, kind: str) -> str:
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != EXPECTED[kind]:
        raise SystemExit(f"{path}: sha256 {digest}, not the expected {EXPECTED[kind]}")
    return data.decode("utf-8")


def whole_articles(text: str) -> list[dict]:
    """The articles of a SQuAD file cut short: each complete one, in order."""
    decoder = json.JSONDecoder()
    at = text.index("[", text.index('"data"')) + 1
    articles = []
    while True:
        while at < len(text) and text[at] in " ,\n\r\t":
            at += 1
        try:
            article, at = decoder.raw_decode(text, at)
        except ValueError:
            return articles
        articles.append(article)


def well_formed(articles: list[dict]) -> int:
    """The number of questions; raises when an answer's offset does not give its text."""
    count = 0
    for article in articles:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                count += 1
                for answer in qa["answers"]:
                    start = answer["answer_start"]
                    found = paragraph["context"][start : start + len(answer["text"])]
                    if found != answer["text"]:
                        raise SystemExit(f"{qa['id']}: its answer offset is wrong")
    return count


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, required=True)
    parser.add_argument("--xquad", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--xquad-first", type=int, default=0, help="also write xquad-en-firstN.json (N articles)"
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    parts = {
        "squad-train-part.json": whole_articles(checked(args.train, "train")),
        "xquad-en.json": json.loads(checked(args.xquad, "xquad"))["data"],
    }
    if args.xquad_first:
        parts[f"xquad-en-first{args.xquad_first}.json"] = parts["xquad-en.json"][: args.xquad_first]
    for name, articles in parts.items():
        count = well_formed(articles)
        payload = {"version": "1.1", "data": articles}
        (args.out / name).write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
        print(f"{args.out / name}: {len(articles)} articles, {count} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
