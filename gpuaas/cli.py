"""The `gpuaas` command line: solve, check, generate, ... (one-line errors, exit code 2)."""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import click

import gpuaas
from gpuaas.errors import GpuaasError, InputError
from gpuaas.instance import load_instance
from gpuaas.methods import DEFAULT_METHOD, METHODS, solve as solve_instance


class UserError(click.ClickException):
    """Bad input or an impossible request: one line on stderr, exit code 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"gpuaas: error: {self.format_message()}", err=True)


class Group(click.Group):
    """Turns every GpuaasError raised by a command into a UserError."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GpuaasError as exc:
            raise UserError(str(exc)) from None


def write_atomic(path: str | Path, text: str) -> None:
    """Write `text` to `path` through a temporary file, so a failure leaves no partial file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def output_path(path: str | None) -> str | None:
    """Check that an output file can be written before any work is done."""
    if path is not None:
        parent = Path(path).parent
        if not parent.is_dir():
            raise InputError(path, None, f"output directory {str(parent)!r} does not exist")
    return path


def emit(data: Any, as_json: bool, human: str, out: str | None) -> None:
    """Write JSON to `out` (atomically) or stdout; print the human text otherwise."""
    text = json.dumps(data, indent=2) + "\n"
    if out is not None:
        write_atomic(out, text)
    if as_json and out is None:
        click.echo(text, nl=False)
    elif not as_json:
        click.echo(human)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(gpuaas.__version__, prog_name="gpuaas")
@click.option("-v", "--verbose", count=True, help="Log progress to stderr (-vv for debug).")
def cli(verbose: int) -> None:
    """Schedule deep-learning training jobs on rented cloud GPU VMs.

    Decides which VMs to rent, how to split their GPUs among jobs and which jobs run now or
    wait, minimising VM rental plus due-date tardiness cost (Filippini et al., IEEE TSC 2023).
    """
    if verbose:
        logging.basicConfig(level=logging.DEBUG if verbose > 1 else logging.INFO,
                            format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)  # fmt: skip


@cli.command()
@click.argument("instance_file", type=click.Path(dir_okay=False))
@click.option("-m", "--method", type=click.Choice(list(METHODS)), default=DEFAULT_METHOD,
              show_default=True, help="Solution method.")  # fmt: skip
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed (same seed, same solution).")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop the solver after this many seconds.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the solution as JSON (DESIGN.md §11).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the JSON solution to this file.")
def solve(instance_file: str, method: str, seed: int, time_limit: float | None, as_json: bool,
          output: str | None) -> None:  # fmt: skip
    """Solve the scheduling problem of INSTANCE_FILE at its `time` (jobs with release <= time)."""
    output_path(output)
    instance = load_instance(instance_file).released()
    solution = solve_instance(instance, method, seed=seed, time_limit=time_limit)
    data = solution.to_dict()
    emit(data, as_json, _human_solution(data), output)


def _human_solution(data: dict[str, Any]) -> str:
    jobs = data["jobs"]
    run = [j for j in jobs if j["node"] is not None]
    lines = [
        f"method     {data['method']}",
        f"objective  {data['objective']:.6g}  (f_OBJ, P1a)",
        f"nodes      {len(data['nodes'])} open",
        f"jobs       {len(run)} running, {len(jobs) - len(run)} postponed",
        f"seconds    {data['stats'].get('seconds', float('nan')):.3f}",
    ]
    for k in ("status", "bound", "gap"):
        if k in data["stats"]:
            lines.append(f"{k:<10} {data['stats'][k]}")
    for nd in data["nodes"]:
        on = [f"{j['id']}({j['gpus']})" for j in run if j["node"] == nd["node"]]
        lines.append(f"  node {nd['node']:>3} {nd['vm']:<6} {' '.join(on)}")
    return "\n".join(lines)


@cli.command()
@click.argument("instance_file", type=click.Path(dir_okay=False))
@click.argument("solution_file", type=click.Path(dir_okay=False))
@click.option("--p1n", is_flag=True, help="Also require exactly min(N, J) open nodes (P1n).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def check(instance_file: str, solution_file: str, p1n: bool, as_json: bool) -> None:
    """Validate SOLUTION_FILE against INSTANCE_FILE and recompute its objective.

    Exits 0 when the solution is feasible, 1 when it is not, 2 on unreadable input.
    """
    from gpuaas.solution import Solution
    from gpuaas.validator import validate

    instance = load_instance(instance_file).released()
    try:
        with open(solution_file) as fh:
            data = json.load(fh)
    except OSError as exc:
        raise InputError(solution_file, None, f"cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise InputError(solution_file, None, f"not valid JSON: {exc.msg} at line {exc.lineno}") from None
    report = validate(Solution.from_dict(instance, data, solution_file), p1n=p1n)
    claimed = data.get("objective")
    if as_json:
        click.echo(json.dumps({"valid": report.ok, "errors": report.errors,
                               "objective": report.objective, "claimed_objective": claimed}))  # fmt: skip
    else:
        click.echo(f"{'valid' if report.ok else 'INVALID'}  objective {report.objective:.6g}"
                   + (f"  (file says {claimed:.6g})" if isinstance(claimed, (int, float)) else ""))  # fmt: skip
        for e in report.errors:
            click.echo(f"  {e}")
    sys.exit(0 if report.ok else 1)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="gpuaas")
