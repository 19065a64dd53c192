"""Where and how training runs execute, fail, and are journaled.

* :mod:`erahbo.runtime.executors` — inline, process pool or Ray (:func:`make_executor`);
* :mod:`erahbo.runtime.failures` — what the scheduler tells the journal as runs start and end
  (the failure rule itself, policies, penalty, outcomes, is the optimizer's:
  :mod:`erahbo.optimizer.failure`, :mod:`erahbo.optimizer.outcomes`; re-exported there);
* :mod:`erahbo.runtime.evaluate` — the scheduler that runs a trial's seeds under a policy;
* :mod:`erahbo.runtime.journal` — the crash-safe SQLite journal of a study
  (:mod:`erahbo.runtime.journal_format`: its schema, records and errors);
* :mod:`erahbo.runtime.replay` — exact resume by replay, and the journaled study, which talks
  to an optimizer through one small recorder (:class:`erahbo.runtime.replay.Recorder`).
"""
