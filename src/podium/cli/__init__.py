"""podium's command line: a thin Typer layer over the library API.

Each module here parses options and calls one library function. Modules import only
typer at the top; library code is imported inside the command so ``podium --help`` stays fast.
"""
