"""What Haystack's and LlamaIndex's default converters extract from the same files (run in a
scratch virtualenv that holds haystack-ai, llama-index-core and llama-index-readers-file; called
by bench/office_docs.py --compare). Prints, per file and tool: documents, characters, and
whether a table row's cells stay on one line."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def haystack(path: Path) -> list[str]:
    from haystack.components import converters

    kind = {
        ".pdf": "PyPDFToDocument",
        ".docx": "DOCXToDocument",
        ".pptx": "PPTXToDocument",
        ".html": "HTMLToDocument",
    }[path.suffix]
    docs = getattr(converters, kind)().run(sources=[path])["documents"]
    return [d.content or "" for d in docs]


def llamaindex(path: Path) -> list[str]:
    from llama_index.core import SimpleDirectoryReader

    docs = SimpleDirectoryReader(input_files=[str(path)]).load_data()
    return [d.text for d in docs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the office documents' folder")
    parser.add_argument("pdf", type=Path)
    parser.add_argument("html", type=Path)
    args = parser.parse_args()
    folder, pdf, html = args.folder, args.pdf, args.html
    files = [pdf, html, folder / "docx" / "ch02.en.docx", folder / "pptx" / "excerpt.pptx"]
    for path in files:
        for name, tool in (("haystack", haystack), ("llamaindex", llamaindex)):
            started = time.perf_counter()
            try:
                texts = tool(path)
            except Exception as exc:  # report what the tool does, whatever it raises
                print(json.dumps({"file": path.name, "tool": name, "error": repr(exc)[:300]}))
                continue
            joined = "\n".join(texts)
            print(
                json.dumps(
                    {
                        "file": path.name,
                        "tool": name,
                        "seconds": round(time.perf_counter() - started, 2),
                        "documents": len(texts),
                        "chars": len(joined),
                        "sample_row": next(
                            (
                                line[:120]
                                for line in joined.splitlines()
                                if "aptitude" in line and ("|" in line or "," in line)
                            ),
                            "",
                        ),
                    }
                )
            )


if __name__ == "__main__":
    main()
