"""Where and how training runs execute, fail, and are journaled.

* :mod:`erahbo.runtime.executors` — inline, process pool or Ray (:func:`make_executor`);
* :mod:`erahbo.runtime.failures` — failed runs: the policies (penalize, retry, exclude), the
  penalty value, run and trial outcomes;
* :mod:`erahbo.runtime.evaluate` — the scheduler that runs a trial's seeds under a policy;
* :mod:`erahbo.runtime.journal` — the crash-safe SQLite journal of a study
  (:mod:`erahbo.runtime.journal_format`: its schema, records and errors);
* :mod:`erahbo.runtime.replay` — exact resume by replay, and the journaled study, which talks
  to an optimizer through one small recorder (:class:`erahbo.runtime.replay.Recorder`).
"""
