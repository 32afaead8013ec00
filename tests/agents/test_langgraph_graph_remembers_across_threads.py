"""R67: a LangGraph graph with `MorphzStore` as its store remembers across threads, and its
memories are frames Morphz search finds."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore

from memory.search.indexer import drain


class ScriptedModel(BaseChatModel):
    """The LLM stand-in: answers from what its prompt holds, nothing else."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kw: Any,
    ) -> ChatResult:
        memory = str(messages[0].content) if isinstance(messages[0], SystemMessage) else ""
        last = str(messages[-1].content)
        if last.startswith("remember: "):
            text = "noted"
        elif "name is Ada" in memory:
            text = "Hello Ada"
        else:
            text = "Hello stranger"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def build_graph(store: BaseStore) -> Any:
    model = ScriptedModel()

    def respond(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> Any:
        user = config["configurable"]["user_id"]
        namespace = ("memories", user)
        last = str(state["messages"][-1].content)
        if last.startswith("remember: "):
            store.put(namespace, f"m{len(store.search(namespace))}", {"fact": last[10:]})
        facts = [item.value["fact"] for item in store.search(namespace)]
        prompt = [SystemMessage("Memories: " + "; ".join(facts)), *state["messages"]]
        return {"messages": [model.invoke(prompt)]}

    graph = StateGraph(MessagesState)
    graph.add_node("respond", respond)
    graph.add_edge(START, "respond")
    return graph.compile(checkpointer=InMemorySaver(), store=store)


def answer(graph: Any, thread: str, user: str, text: str) -> str:
    config = {"configurable": {"thread_id": thread, "user_id": user}}
    out = graph.invoke({"messages": [("user", text)]}, config)
    return str(out["messages"][-1].content)


def test_a_graph_remembers_across_threads(make_client: Any) -> None:
    from morphz_client.langgraph import MorphzStore, frame_id_of

    mz = make_client("lg-graph")
    graph = build_graph(MorphzStore(mz))
    assert answer(graph, "t1", "u1", "remember: my name is Ada") == "noted"
    # A new thread (no checkpointed messages) on a new graph: the memory is in Morphz.
    fresh = build_graph(MorphzStore(mz))
    assert answer(fresh, "t2", "u1", "who am I?") == "Hello Ada"
    assert answer(fresh, "t3", "u2", "who am I?") == "Hello stranger"
    # The memory is a frame, in the explorer's list and found by Morphz search.
    frame = mz.frame(frame_id_of(("memories", "u1"), "m0"))
    assert frame["body"]["value"] == {"fact": "my name is Ada"}
    drain()
    found = MorphzStore(mz).search(("memories",), query="Ada")
    assert [(i.namespace, i.key) for i in found] == [(("memories", "u1"), "m0")]
    assert found[0].score is not None and found[0].score > 0
    assert MorphzStore(mz).search(("memories", "u2"), query="Ada") == []
