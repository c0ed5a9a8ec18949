from .cli import main

try:
    main()
finally:
    # `python -m albumen` interrupted (Ctrl-C, SIGTERM) exits 130 like the `albumen` script, not by
    # SIGINT (-2): CPython records a KeyboardInterrupt that escapes an exec() of a string (one lands
    # there when it strikes while a dataclass is being made, by a module imported during the build) as
    # unhandled, though the build caught it, and a process run with -m then kills itself with SIGINT
    # as it exits. An exec() of a string clears that record; one that escapes main() sets it again.
    exec("")
