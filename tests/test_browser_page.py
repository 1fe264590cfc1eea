"""The page's smaller manners in a real headless Chromium against a real server (issue 87's
low items): a busy server is asked again after its Retry-After; the index picker's passage
count follows an upload; the source dialog opens at its top; the run's last line counts files,
not a PDF's pages."""

from __future__ import annotations

import pytest
from test_browser import (
    QUESTION,
    Serving,
    _ask,
    _page,
    _served_docs,
    _very_slow_reply,
    asked_with_a_clipboard,
    browser,  # noqa: F401 - the fixture
    second_tab_asking,
    shots,  # noqa: F401 - the fixture
)

from ragteam.llm import FakeModel
from ragteam.server import ServerConfig, create_app


def test_a_busy_server_is_asked_again_after_its_retry_after(browser, bm25_index_dir, shots):  # noqa: F811
    """No room in the queue: the second tab's answer gets 503 with Retry-After; the page says
    it asks again in that many seconds, and does, and the answer comes."""
    config = ServerConfig(indexes={"demo": bm25_index_dir}, concurrency=1, queue_size=0)
    errors: list[str] = []
    with Serving(create_app(config, FakeModel(_very_slow_reply))) as url:
        second = second_tab_asking(browser, url, errors)
        second.wait_for_function(
            "document.querySelector('.column .elapsed').textContent.includes('asking again in 5 s')"
        )
        second.screenshot(path=str(shots / "busy-asking-again-1280.png"))
        second.set_viewport_size({"width": 390, "height": 844})
        second.screenshot(path=str(shots / "busy-asking-again-390.png"))
        second.wait_for_selector(".column[data-strategy=oner] [data-testid=answer]", timeout=60_000)
        assert "answered" in second.locator(".column[data-strategy=oner] .elapsed").inner_text()
    assert errors and all("503" in e for e in errors)  # Chromium logs the refused request


@pytest.mark.parametrize("size", [(1280, 900), (390, 844)])
def test_picker_count_dialog_top_and_files_counted(browser, tmp_path, shots, size):  # noqa: F811
    """After an upload the picker shows the index's new passage count; a cited passage's
    dialog opens at its top (not scrolled to its Close button); `read` answering from passages
    of one PDF's pages says one document."""
    config = _served_docs(tmp_path)
    new = tmp_path / "upload" / "ferry.md"
    new.parent.mkdir()
    new.write_text("# Ferry\n\nThe ferry captain is Oda Rusk.\n")
    errors: list[str] = []
    with Serving(create_app(config, FakeModel(lambda m, p: "unused"))) as url:
        page = _page(browser, errors)
        page.set_viewport_size({"width": size[0], "height": size[1]})
        page.goto(url + "/")
        page.locator("#documents summary").wait_for()
        before = int(page.inner_text("#index option:checked").split("(")[1].split()[0])
        page.locator("#documents summary").click()
        page.set_input_files("#doc-upload", [str(new)])
        page.wait_for_function(
            "document.querySelector('#doc-status').textContent.startsWith('ferry.md: read')"
        )
        page.wait_for_function(
            f"!document.querySelector('#index option:checked').textContent.includes('({before} ')"
        )
        assert f"({before + 1} passages)" in page.inner_text("#index option:checked")
        _ask(page, "Who is the harbour master, appointed in 1902?", "read")
        page.wait_for_selector(".column[data-strategy=read] [data-testid=answer]", timeout=90_000)
        # a passage taller than the screen (a long page's text): Close stands below the fold
        page.eval_on_selector("#passage-text", "p => (p.style.minHeight = '3000px')")
        page.locator(".column[data-strategy=read] [data-testid=citations] .cite").first.click()
        dialog = page.locator("#passage-dialog")
        dialog.wait_for(state="visible")
        page.wait_for_timeout(300)
        assert dialog.evaluate("d => d.scrollTop") == 0
        assert page.evaluate("document.activeElement.id") == "passage-close"
        page.screenshot(path=str(shots / f"dialog-opens-at-top-{size[0]}.png"))
        status = page.inner_text("#ask-status")
        assert "of 1 document" in status, status  # four passages of the report's pages
    assert errors == []


def test_a_shared_link_shows_the_answers_in_another_browser(browser, bm25_index_dir, shots):  # noqa: F811
    """'copy link' in the history gives a link that carries the answers itself: a browser with
    an empty history opens it and sees them (the steps stay with the one that asked); a link
    cut short says so."""
    config = ServerConfig(indexes={"demo": bm25_index_dir})
    errors: list[str] = []
    with Serving(create_app(config, FakeModel(_very_slow_reply))) as url:
        context, page = asked_with_a_clipboard(browser, url, errors)
        page.click("#history summary")
        page.click("#history-list [data-testid=share]")
        page.wait_for_function(
            "document.querySelector('[data-testid=share]').textContent === 'link copied'"
        )
        page.screenshot(path=str(shots / "shared-link-copied-1280.png"), full_page=True)
        link = page.evaluate("navigator.clipboard.readText()")
        assert link.startswith(url + "/#a=")
        shown = page.locator("[data-testid=answer] .text").inner_text()
        other = browser.new_context(viewport={"width": 390, "height": 844})  # nothing stored
        fresh = other.new_page()
        fresh.on("pageerror", lambda e: errors.append(str(e)))
        fresh.goto(link)
        fresh.wait_for_selector(".column[data-strategy=oner] [data-testid=answer]")
        assert fresh.locator("[data-testid=answer] .text").inner_text() == shown
        assert "from a link" in fresh.inner_text("#ask-status")
        assert fresh.locator("button.download").count() == 0  # no steps came with the link
        assert fresh.input_value("#question") == QUESTION
        fresh.screenshot(path=str(shots / "shared-link-390.png"), full_page=True)
        fresh.goto(link[: len(link) - 40])  # cut short
        fresh.wait_for_function(
            "document.querySelector('#ask-status').textContent.includes('cannot be read')"
        )
        fresh.goto(url + "/#a=" + _deflated(b" " * (64 << 20)))  # 64 MiB in a few KB
        fresh.wait_for_function(
            "document.querySelector('#ask-status').textContent.includes('more than a link')"
        )
        other.close()
        context.close()
    assert errors == []


def _deflated(data: bytes) -> str:
    """`data` as a shared link carries it: raw deflate, base64url without padding."""
    import base64
    import zlib

    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = packer.compress(data) + packer.flush()
    return base64.urlsafe_b64encode(packed).decode().rstrip("=")
