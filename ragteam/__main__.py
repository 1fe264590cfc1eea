"""`python -m ragteam ...`: the same as the `ragteam` command."""

from ragteam.launch import main

main()
