"""``bloge.eval``: regression tests for agents, from datasets and from recorded runs.

```python
from bloge.eval import load_dataset, run_dataset

dataset = load_dataset("evals/support.yaml")
results = run_dataset(dataset, agent, repeat=3)      # agent: an Agent or an agent operator
results.pass_rate, results.score, results.missed()
```

A dataset's cases give an input, tool fixtures, a reference answer and checks (on the
answer, the tool calls, turns, tokens, cost and time, by an LLM judge, or by an evaluator of
the project's); each case runs as a recorded run, tagged as an eval, with its tools replayed
from its fixtures or real. ``bloge eval record|run|compare`` are the commands.
"""

from bloge.eval.compare import CaseChange, compare
from bloge.eval.dataset import Case, Dataset, Fixture, Thresholds, load_dataset
from bloge.eval.environment import Evaluator
from bloge.eval.judge import Judge
from bloge.eval.junit import junit_xml
from bloge.eval.observed import Observation, ObservedCall, Verdict
from bloge.eval.record import dump_dataset, record_runs, select_runs
from bloge.eval.replay import ReplayEffects
from bloge.eval.results import CaseResult, CaseRun, EvalResults, Spread
from bloge.eval.runner import arun_dataset, run_dataset
from bloge.eval.source import DatasetError

__all__ = [
    "Case",
    "CaseChange",
    "CaseResult",
    "CaseRun",
    "Dataset",
    "DatasetError",
    "EvalResults",
    "Evaluator",
    "Fixture",
    "Judge",
    "Observation",
    "ObservedCall",
    "ReplayEffects",
    "Spread",
    "Thresholds",
    "Verdict",
    "arun_dataset",
    "compare",
    "dump_dataset",
    "junit_xml",
    "load_dataset",
    "record_runs",
    "run_dataset",
    "select_runs",
]
