from ragteam.llm import CachedModel, FakeModel, Request, TextRequest

ASK = [{"role": "user", "content": "q"}]


def test_deterministic_calls_are_served_from_sqlite(tmp_path):
    inner = FakeModel(["first", "second"])
    model = CachedModel(inner, tmp_path / "c.sqlite")
    a = model.complete(Request(ASK, max_tokens=8))
    b = model.complete(Request(ASK, max_tokens=8))
    assert (a.text, a.cached) == ("first", False)
    assert (b.text, b.cached) == ("first", True)
    assert len(inner.calls) == 1
    # a new process (new wrapper, same file) still hits
    again = CachedModel(FakeModel([]), tmp_path / "c.sqlite").complete(Request(ASK, max_tokens=8))
    assert again.cached and again.text == "first"


def test_key_covers_parameters_messages_and_model(tmp_path):
    inner = FakeModel(["a", "b", "c", "d"])
    model = CachedModel(inner, tmp_path / "c.sqlite")
    model.complete(Request(ASK, max_tokens=8))
    model.complete(Request(ASK, max_tokens=9))
    model.complete(Request([{"role": "user", "content": "other"}], max_tokens=8))
    other = CachedModel(FakeModel(["z"], identity="other-model"), tmp_path / "c.sqlite")
    assert other.complete(Request(ASK, max_tokens=8)).text == "z"
    assert len(inner.calls) == 3


def test_sampled_calls_are_never_cached(tmp_path):
    inner = FakeModel(["a", "b"])
    model = CachedModel(inner, tmp_path / "c.sqlite")
    assert model.complete(Request(ASK, temperature=0.7)).text == "a"
    assert model.complete(Request(ASK, temperature=0.7)).text == "b"


def test_two_ggufs_of_one_name_and_size_are_different_models(tmp_path):
    from ragteam.llm.llamacpp import gguf_fingerprint

    a, b = tmp_path / "a" / "model.gguf", tmp_path / "b" / "model.gguf"
    for path, byte in ((a, 1), (b, 2)):
        path.parent.mkdir()
        data = bytearray(3_000_000)
        data[2_000_000] = byte  # fine-tunes differ inside the file, not in its size
        path.write_bytes(bytes(data))
    assert gguf_fingerprint(a) != gguf_fingerprint(b)
    assert gguf_fingerprint(a) == gguf_fingerprint(a)


def test_a_logit_bias_is_part_of_a_raw_text_key(tmp_path):
    inner = FakeModel(["plain", "biased", "other"])
    model = CachedModel(inner, tmp_path / "c.sqlite")
    assert model.complete_text(TextRequest("go", max_tokens=4)).text == "plain"
    assert (
        model.complete_text(TextRequest("go", max_tokens=4, logit_bias={7: 2.0})).text == "biased"
    )
    assert model.complete_text(TextRequest("go", max_tokens=4, logit_bias={7: 1.0})).text == "other"
    assert (
        model.complete_text(TextRequest("go", max_tokens=4, logit_bias={7: 2.0})).text == "biased"
    )
    assert (
        model.complete_text(TextRequest("go", max_tokens=4)).text == "plain"
        and len(inner.calls) == 3
    )


def test_a_grammar_is_part_of_a_raw_text_key(tmp_path):
    inner = FakeModel(["plain", "constrained", "other"])
    model = CachedModel(inner, tmp_path / "c.sqlite")
    assert model.complete_text(TextRequest("go", max_tokens=4)).text == "plain"
    assert (
        model.complete_text(TextRequest("go", max_tokens=4, grammar='root ::= "a"')).text
        == "constrained"
    )
    assert (
        model.complete_text(TextRequest("go", max_tokens=4, grammar='root ::= "b"')).text == "other"
    )
    assert (
        model.complete_text(TextRequest("go", max_tokens=4, grammar='root ::= "a"')).text
        == "constrained"
    )
    assert inner.calls[1]["grammar"] == 'root ::= "a"' and len(inner.calls) == 3
