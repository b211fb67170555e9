"""Trace validation: is a run of impl/ (its event logs) a behaviour the model allows?

``step_match.py`` is the validator and its entry points (``validate_events``, ``validate_logdir``): each event is
mapped to the model step(s) it stands for and the model's successors are matched against the implementation's
logged state.  ``integrity.py`` first checks that the logs are what one run wrote (damage is exit 24, never a
violation); ``scan.py`` reads what the validator needs from the whole run before its first step (bounds, variants,
messages never received), and ``report.py`` is the result (:class:`ValidationReport`) and how it is shown.
"""
