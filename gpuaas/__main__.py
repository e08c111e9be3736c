"""`python -m gpuaas` runs the command line."""

from gpuaas.cli import main

main()
