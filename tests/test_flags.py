"""Flags generated from a settings dataclass (`ragteam.settings.flag`,
`ragteam.commands.flags.with_settings`): their defaults, bounds and text forms, and the
class's own check shown as a message."""

from __future__ import annotations

from dataclasses import dataclass

import typer
from typer.testing import CliRunner

from ragteam.cli import app
from ragteam.commands.flags import with_settings
from ragteam.commands.index_settings import sync_field
from ragteam.errors import InputError
from ragteam.retrieval.encoders import EncoderSpec
from ragteam.retrieval.kinds import IndexSettings
from ragteam.retrieval.sync import SyncSettings
from ragteam.settings import flag

runner = CliRunner()


@dataclass(frozen=True)
class Knobs:
    depth: int = flag(3, "how deep", min=1, max=9)
    roles: tuple[str, ...] = flag(("a", "b"), "comma-separated")
    hidden: float = 0.5  # not a flag
    loud: bool = flag(False, "shout")

    def __post_init__(self) -> None:
        if "x" in self.roles:
            raise InputError("--roles x: not a role")


def _app(settings: object) -> typer.Typer:
    made = typer.Typer()

    @made.command()
    @with_settings("knobs", settings)
    def show(name: str, knobs: Knobs) -> None:
        typer.echo(f"{name} {knobs}")

    return made


def test_flags_come_from_the_fields_with_their_defaults_bounds_and_text_forms():
    result = runner.invoke(_app(Knobs), ["n", "--depth", "5", "--roles", "c, d", "--loud"])
    assert result.exit_code == 0, result.output
    assert "n Knobs(depth=5, roles=('c', 'd'), hidden=0.5, loud=True)" in result.output
    assert "Knobs(depth=3, roles=('a', 'b')" in runner.invoke(_app(Knobs), ["n"]).output
    assert runner.invoke(_app(Knobs), ["n", "--depth", "10"]).exit_code == 2  # above max
    assert runner.invoke(_app(Knobs), ["n", "--hidden", "1"]).exit_code == 2  # not a flag


def test_an_instance_gives_other_defaults_and_a_bad_value_is_a_message():
    other = runner.invoke(_app(Knobs(depth=7, roles=("z",))), ["n"])
    assert "Knobs(depth=7, roles=('z',)" in other.output
    bad = runner.invoke(_app(Knobs), ["n", "--roles", "x"])
    assert bad.exit_code == 2 and "--roles x: not a role" in bad.output


def test_settings_held_as_groups_give_their_flags_and_are_built_inside_out(tmp_path):
    """`index build` and `index sync` take `IndexSettings` and `SyncSettings` whole: their
    groups' flags (the dense settings, the encoder, the converter's) build the nested values,
    the encoder from its three flags; a sync takes only the settings it may change."""
    made = typer.Typer()
    seen: list[tuple[IndexSettings, SyncSettings]] = []

    @made.command()
    @with_settings("sync", SyncSettings)
    @with_settings("settings", IndexSettings)
    def build(settings: IndexSettings, sync: SyncSettings) -> None:
        seen.append((settings, sync))

    args = ["--retriever", "bm25", "--index-type", "hnsw", "--shards", "2", "--tables", "records"]
    served = [
        "--encoder",
        "openai:e5",
        "--embed-url",
        "http://127.0.0.1:9/v1/",
        "--embed-batch",
        "8",
    ]
    result = runner.invoke(made, [*args, *served, "--passage-tokens", "64"])
    assert result.exit_code == 0, result.output
    settings, sync = seen[-1]
    assert settings.retriever == "bm25" and settings.dense.kind == "hnsw"
    assert settings.dense.shards == 2 and settings.dense.nprobe == 16  # a default kept
    assert settings.dense.encoder == EncoderSpec("server", "e5", "http://127.0.0.1:9/v1", 8)
    assert sync.passage_tokens == 64 and sync.convert.tables == "records"
    assert runner.invoke(made, []).exit_code == 0 and seen[-1] == (IndexSettings(), SyncSettings())
    bad = runner.invoke(made, ["--encoder", "openai:e5"])
    assert bad.exit_code == 2 and "needs --embed-url" in bad.output
    assert runner.invoke(made, ["--html", "all"]).exit_code == 2  # the converter's own check

    @made.command("sync")
    @with_settings("settings", IndexSettings, only=sync_field)
    def sync_(settings: IndexSettings) -> None:
        seen.append((settings, SyncSettings()))

    assert runner.invoke(made, ["sync", "--shards", "2"]).exit_code == 2  # not a sync's flag
    assert runner.invoke(made, ["sync", "--index-type", "flat"]).exit_code == 0
    assert seen[-1][0].dense.kind == "flat"


def test_train_fit_reads_its_stage_and_roles_through_fit_settings(tmp_path):
    args = ["train", "fit", "--data", str(tmp_path), "--out", str(tmp_path / "o")]
    stage = runner.invoke(app, [*args, "--stage", "middle"])
    assert stage.exit_code == 2 and "--stage must be short, long or both" in stage.output
    roles = runner.invoke(app, [*args, "--short-roles", "foo,locator"])  # the bad one is named
    assert roles.exit_code == 2 and "--short-roles foo: not a SMART role" in roles.output
