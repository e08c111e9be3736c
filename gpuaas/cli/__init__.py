"""The `gpuaas` command line: solve, check, generate, ... (one-line errors, exit code 2).

`gpuaas.cli.base` holds the command group and what the commands share (`main`, the console
script's entry point); the commands: `commands` (solve, check, simulate, bound, compare,
campaign), `inputs` (generate, catalogs, import), `plotting` (plot ...); `options` generates the
run settings' options from `gpuaas.run_config.RunConfig`.
"""

from __future__ import annotations

from gpuaas.cli import commands, inputs, plotting  # noqa: F401  (register the commands)
from gpuaas.cli.base import COMPILE_NOTICE, Group, UserError, cli, compile_notice, main, one_line

__all__ = ["COMPILE_NOTICE", "Group", "UserError", "cli", "compile_notice", "main", "one_line"]
