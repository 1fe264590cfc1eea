"""Flags generated from a settings dataclass (`ragteam.settings.flag`,
`ragteam.commands.flags.with_settings`): their defaults, bounds and text forms, and the
class's own check shown as a message."""

from __future__ import annotations

from dataclasses import dataclass

import typer
from typer.testing import CliRunner

from ragteam.cli import app
from ragteam.commands.flags import with_settings
from ragteam.errors import InputError
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


def test_train_fit_reads_its_stage_and_roles_through_fit_settings(tmp_path):
    args = ["train", "fit", "--data", str(tmp_path), "--out", str(tmp_path / "o")]
    stage = runner.invoke(app, [*args, "--stage", "middle"])
    assert stage.exit_code == 2 and "--stage must be short, long or both" in stage.output
    roles = runner.invoke(app, [*args, "--short-roles", "foo,locator"])  # the bad one is named
    assert roles.exit_code == 2 and "--short-roles foo: not a SMART role" in roles.output
