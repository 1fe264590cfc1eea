"""A served index and the span reader load when the server starts, not at the first question
(issue 89): /healthz answers at once and says when the server is warm; a large index loading
holds up neither /healthz nor the answers of the generation already loaded; an index that
cannot load is said, and the server still starts."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from ragteam.llm import FakeModel  # noqa: E402
from ragteam.server import ServerConfig, create_app  # noqa: E402
from ragteam.server.warm import warm  # noqa: E402


def test_warming_loads_the_indexes_and_the_reader_and_healthz_says_so(
    bm25_index_dir, tmp_path, monkeypatch
):
    import ragteam.reader.read as reading

    loads: list[object] = []
    real = reading.load_reader
    monkeypatch.setattr(reading, "load_reader", lambda *a, **k: loads.append(real(*a, **k)))
    config = ServerConfig(indexes={"demo": bm25_index_dir, "gone": tmp_path / "none"})
    with TestClient(create_app(config, FakeModel(lambda m, p: "Hevik"))) as api:
        service = api.app.state.service
        assert api.get("/healthz").json()["warm"] == {"state": "not started"}
        warm(service)
        said = api.get("/healthz").json()
        assert said["warm"]["state"] == "ready, but not everything loaded"
        assert said["warm"]["detail"][0].startswith("gone: ")
        assert said["indexes"]["demo"]["loaded_at"]  # loaded before any question
        assert len(loads) == 1 and loads[0].digest  # the shipped span reader, loaded
    keyed = ServerConfig(indexes=config.indexes, api_key="k" * 32)
    with TestClient(create_app(keyed, FakeModel(lambda m, p: "Hevik"))) as api:
        warm(api.app.state.service)
        shown = api.get("/healthz").json()["warm"]  # no key: the failure's detail withheld
        assert shown["detail"].startswith("withheld") and "none" not in str(shown)
        keyed_view = api.get("/healthz", headers={"Authorization": "Bearer " + "k" * 32}).json()
        assert keyed_view["warm"]["detail"][0].startswith("gone: ")


def test_a_slow_load_holds_up_neither_healthz_nor_the_loaded_generation(
    bm25_index_dir, monkeypatch
):
    import ragteam.server.service as service_module

    config = ServerConfig(indexes={"demo": bm25_index_dir})
    with TestClient(create_app(config, FakeModel(lambda m, p: "Hevik"))) as api:
        service = api.app.state.service
        first = service.index("demo")
        real = service_module.load_index
        started = threading.Event()

        def slow(directory):  # noqa: ANN001, ANN202
            started.set()
            time.sleep(3)
            return real(directory)

        monkeypatch.setattr(service_module, "load_index", slow)
        monkeypatch.setattr(service_module, "manifest_stamp", lambda d: (1, 2))  # a new generation
        loading = threading.Thread(target=service.index, args=("demo",))
        loading.start()
        assert started.wait(10)
        began = time.perf_counter()
        assert api.get("/healthz").status_code == 200
        assert service.index("demo") is first  # the generation loaded goes on answering
        assert time.perf_counter() - began < 1.5
        loading.join(20)
        assert service.index("demo") is not first  # then the new one answers
