"""`governor bench models`: every LLM path of governor at a stated small budget on one model.

:mod:`.sweep` is the command (model choice, the metered run of each path, the JSON); :mod:`.paths`
runs each path through its own world's benchmark; :mod:`.values` trains and measures the two LLM
safety values; :mod:`.table` prints the tables. Imports the worlds' benchmarks, the backends and
the runtime's safety values; never the CLI.
"""
