"""The prompt-cache hit ratio of a long conversation under ``sliding_window(20)``, with and
without block windows (issue "Cost control", item 5).

A 50-turn chat (each turn a user message and the model's answer) runs through the real
memory; each model call's prompt is the system prompt plus the memory's view. A provider's
cache serves the part of a prompt identical to the start of the previous prompt (the cached
prefix: Anthropic's breakpoints mark the end of each call's conversation, OpenAI caches
prefixes itself), so the hit ratio is the tokens of those common prefixes over all prompt
tokens. Tokens are the library's heuristic estimate; the providers' minimum cacheable prefix
(1024 tokens for most models) is left out, and so is the cache's lifetime (5 minutes).

    .venv/bin/python bench/bench_cache_prefix.py
"""

from __future__ import annotations

from bloge.agent.memory.pruning import SlidingWindowMemory
from bloge.llm import LlmMessage
from bloge.llm.tokens import DEFAULT_TOKEN_ESTIMATOR

TURNS = 50
WINDOW = 20
SYSTEM = LlmMessage.system("You are a careful support agent. " * 60)


def _text(turn: int, words: int, who: str) -> str:
    return f"{who} {turn}: " + " ".join(f"word{turn}-{n}" for n in range(words))


def prompts(block: int) -> list[list[LlmMessage]]:
    """Each model call's prompt over the conversation, with windows moving ``block`` at a
    time."""
    memory = SlidingWindowMemory([], WINDOW, block)
    sent = []
    for turn in range(TURNS):
        memory.append(LlmMessage.user(_text(turn, 40, "question")))
        sent.append([SYSTEM, *memory.messages()])
        memory.append(LlmMessage("assistant", _text(turn, 150, "answer")))
    return sent


def hit_ratio(sent: list[list[LlmMessage]]) -> tuple[float, float]:
    """(hit ratio with the system prompt, hit ratio of the conversation alone)."""
    tokens = DEFAULT_TOKEN_ESTIMATOR.estimate
    total = cached = system = 0
    previous: list[LlmMessage] = []
    for prompt in sent:
        total += sum(map(tokens, prompt))
        common = 0
        for ours, theirs in zip(prompt, previous, strict=False):
            if ours is not theirs:
                break
            common += tokens(ours)
        cached += common
        system += tokens(SYSTEM) if previous else 0
        previous = prompt
    all_system = tokens(SYSTEM) * len(sent)
    return cached / total, (cached - system) / (total - all_system)


def main() -> None:
    print(f"{TURNS}-turn conversation, sliding_window({WINDOW}), system prompt "
          f"{DEFAULT_TOKEN_ESTIMATOR.estimate(SYSTEM)} tokens")
    print(f"{'block':>6} {'hit ratio':>10} {'conversation only':>18} {'messages in view':>17}")
    for block in (1, 2, 5, 10, 20):
        sent = prompts(block)
        whole, conversation = hit_ratio(sent)
        # The context the model keeps (system prompt left out), once the window is full.
        full = [len(prompt) - 1 for prompt in sent[WINDOW // 2:]]
        print(f"{block:>6} {whole:>10.1%} {conversation:>18.1%} "
              f"{sum(full) / len(full):>17.1f}")


if __name__ == "__main__":
    main()
