"""Scale-out on Ray (extra `ray`): evaluations fanned out to actors, passages encoded with Ray
Data. The results file and the index are the same as a local run's."""
