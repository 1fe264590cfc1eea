"""The command line's sub-commands (`ragteam index|eval|report|router|train|serve|mcp`), over
the library: nothing in ragteam imports this package except the entry points (`ragteam.cli`,
`ragteam.launch`)."""
