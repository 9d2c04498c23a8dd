"""The command line: a subcommand per command, each setting an option and an environment variable of one name, and
the guide's tables (guides/building.md, "Commands and settings") naming exactly what it has."""

import re
import subprocess
from pathlib import Path

import pytest

from conftest import ENGINE, FIXTURES, SITE_COMMAND
from tutorials_site.commands import cli

GUIDE = (ENGINE / "guides" / "building.md").read_text(encoding="utf-8").split("## Commands and settings", 1)[1]


def _first_column(table_head: str) -> list[str]:
    table = GUIDE.split(table_head, 1)[1].split("\n\n", 1)[0]
    return [row.split("|")[1].strip() for row in table.splitlines()[2:]]


def test_the_guide_names_every_command_and_setting_and_nothing_else():
    commands = {word for cell in _first_column("| command |") for word in re.findall(r"`tutorials-site ([a-z0-9-]+)", cell)}
    assert commands == set(cli.COMMANDS)
    assert {cell.strip("`") for cell in _first_column("| setting |")} == set(cli.VARIABLES)


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_each_command_has_its_help_naming_each_of_its_settings(name, capsys):
    with pytest.raises(SystemExit) as exited:
        cli.parser().parse_args([name, "--help"])
    shown = capsys.readouterr().out
    assert exited.value.code == 0 and cli.COMMANDS[name].help.split(":")[0] in " ".join(shown.split())
    for setting in cli.COMMANDS[name].variables:
        assert cli.VARIABLES[setting].option in shown and f"[{setting}]" in shown, setting


def test_an_option_wins_over_its_environment_variable_and_a_flag_is_one():
    args = cli.parser().parse_args(["html", "--languages", "ko", "--strict"])
    env = cli._environment(args, {"LANGUAGES": "en ja", "VERSION": "9.9"})
    assert (env["LANGUAGES"], env["STRICT"], env["VERSION"]) == ("ko", "1", "9.9")


def test_under_github_actions_every_command_asks_for_its_file_line_annotations(monkeypatch, capsys):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    with pytest.raises(SystemExit):
        cli.main(["--project", str(FIXTURES), "check", "--builddir", str(FIXTURES / "never-built")])
    [line] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::add-matcher::")]
    matchers = line.removeprefix("::add-matcher::")
    assert matchers.endswith("problem-matchers.json") and "tutorials-file-line" in Path(matchers).read_text()


def test_a_folder_without_conf_py_is_no_site(tmp_path):
    result = subprocess.run([str(SITE_COMMAND), "--project", str(tmp_path), "html"], capture_output=True, text=True)
    assert result.returncode == 1 and result.stderr.strip() == f"error: {tmp_path}/conf.py: no such file; a site is " \
                                                                "configured by its conf.py"
