"""A server as `ragteam serve` runs it (`run_server`), over a model that takes 1 s a call:
for the shutdown test. Usage: python serve_slow.py INDEX_DIR PORT"""

import sys
import time
from pathlib import Path

from ragteam.commands.serve import run_server
from ragteam.llm import FakeModel
from ragteam.server import ServerConfig, create_app


def slow(messages, params):
    time.sleep(2.0)
    return "Let me look further. So the answer is: unknown"


if __name__ == "__main__":
    config = ServerConfig(indexes={"demo": Path(sys.argv[1])})
    app = create_app(config, FakeModel(slow))
    run_server(app, "127.0.0.1", int(sys.argv[2]), app.state.service.gate.close)
