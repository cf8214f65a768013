"""`governor bench serve`: the latency and throughput the guard service adds in front of a model.

:mod:`.latency` is the command (the rows, the tables, the plot); :mod:`.workload` what it
measures with (check sets, their policies, request bodies, cell bounds); :mod:`.stub` the upstream
stub; :mod:`.client` the lean HTTP/1.1 load generator; :mod:`.driver` the process that drives it
and the cells measured from it; :mod:`.streaming` the time-to-first-token rows. Imports the guard,
the service (:mod:`governor.serve`) and the runtime helpers; never a world, the papers or the CLI.
"""
