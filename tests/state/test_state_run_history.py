"""The apply history and each node run's stored output, on both backends."""

from __future__ import annotations

import pytest

from rigcli.errors import StateError
from rigcli.records import OutputChunk
from rigcli.run_ids import short_run_id
from rigcli.state import StateStore
from rigcli.state.run_output import PIECE_BYTES, OutputBatch
from tests.backends import rows


def _start(store: StateStore, path: str, apply_id: str | None = None, workflow: str = "web") -> str:
    return store.start_run(
        workflow=workflow,
        node_path=path,
        node_name=path,
        node_kind="task",
        node_key=f"key-{path}",
        provider_fingerprint="providers-1",
        upstream_run_ids=[],
        apply_id=apply_id,
    )


def _chunk(run_id: str, seq: int, text: str, stream: str = "stdout") -> OutputChunk:
    return OutputChunk(run_id, seq, [[stream, len(text)]], text)


def _text(store: StateStore, run_id: str, after: int = -1) -> str:
    return "".join(chunk.data for chunk in store.output_chunks(run_id, after=after))


def test_output_is_appended_in_batches_and_the_last_batch_comes_with_the_finish(store: StateStore) -> None:
    run_id = _start(store, "base")
    store.append_output(run_id, OutputBatch((_chunk(run_id, 0, "one\n"), _chunk(run_id, 1, "two\n", "stderr"))))
    assert _text(store, run_id) == "one\ntwo\n"  # readable while the run is still running
    assert _text(store, run_id, after=0) == "two\n"

    last = OutputBatch((_chunk(run_id, 2, "three\n"),))
    store.finish_run(run_id, status="succeeded", output=None, metadata={"version": "1.2"}, log=last)
    chunks = list(store.output_chunks(run_id))
    assert [(chunk.seq, chunk.streams, chunk.data) for chunk in chunks] == [
        (0, [["stdout", 4]], "one\n"),
        (1, [["stderr", 4]], "two\n"),
        (2, [["stdout", 6]], "three\n"),
    ]
    [run] = store.get_runs([run_id])
    assert (run.status, run.metadata) == ("succeeded", {"version": "1.2"})


def test_dropped_chunks_are_deleted_and_the_marker_rewritten_in_place(store: StateStore) -> None:
    run_id = _start(store, "base")
    store.append_output(
        run_id,
        OutputBatch((_chunk(run_id, 0, "head\n"), _chunk(run_id, 2, "old\n")), marker=OutputChunk(run_id, 1, [], "")),
    )
    store.append_output(
        run_id,
        OutputBatch(
            (_chunk(run_id, 3, "new\n"),),
            dropped=(2,),
            marker=_chunk(run_id, 1, "… 4 B dropped …\n", "rig"),
        ),
    )
    assert _text(store, run_id) == "head\n… 4 B dropped …\nnew\n"


def test_output_read_as_bytes_comes_in_bounded_pieces_of_the_stored_utf8(store: StateStore) -> None:
    """A chunk longer than a piece comes in several (a character may be cut between two: the bytes
    are copied out as they are); an empty chunk is one empty last piece; a deleted one is skipped."""
    run_id = _start(store, "base")
    long = "a" + ("é" * 7 + "\n") * (2 * PIECE_BYTES // 15 + 1000)  # more than two pieces, an é cut at the first end
    store.append_output(
        run_id,
        OutputBatch(
            (_chunk(run_id, 0, "one\n"), _chunk(run_id, 2, long), _chunk(run_id, 3, "ünï\n")),
            marker=OutputChunk(run_id, 1, [], ""),
        ),
    )
    pieces = list(store.output_pieces(run_id))
    assert [(piece.seq, len(piece.data), piece.ends_chunk) for piece in pieces] == [
        (0, 4, True),
        (1, 0, True),
        (2, PIECE_BYTES, False),
        (2, PIECE_BYTES, False),
        (2, len(long.encode()) - 2 * PIECE_BYTES, True),
        (3, len("ünï\n".encode()), True),
    ]
    assert b"".join(piece.data for piece in pieces) == ("one\n" + long + "ünï\n").encode()
    with pytest.raises(UnicodeDecodeError):
        pieces[2].data.decode("utf-8")  # ends with the first byte of an é: bytes, not text
    assert [piece.seq for piece in store.output_pieces(run_id, after=2)] == [3]
    store.append_output(run_id, OutputBatch(dropped=(2,)))
    assert b"".join(piece.data for piece in store.output_pieces(run_id)) == "one\nünï\n".encode()


def test_a_finish_whose_output_cannot_be_written_still_finishes_the_run(store: StateStore) -> None:
    run_id = _start(store, "base")
    store.append_output(run_id, OutputBatch((_chunk(run_id, 0, "kept\n"),)))
    clash = OutputBatch((_chunk(run_id, 0, "same seq again\n"),))  # a primary key violation
    store.finish_run(run_id, status="failed", error="boom", log=clash)
    [run] = store.get_runs([run_id])
    assert (run.status, run.error) == ("failed", "boom")
    assert _text(store, run_id) == "kept\n"
    with pytest.raises(StateError, match="already failed"):
        store.finish_run(run_id, status="succeeded", log=OutputBatch((_chunk(run_id, 5, "x\n"),)))


def test_applies_are_recorded_running_then_finished_and_found_by_short_id(store: StateStore) -> None:
    first = store.start_apply(workflow="web", command="apply", node_count=2)
    assert (first.status, first.owner is not None, first.nodes, first.finished_at) == ("running", True, [], None)
    run_id = _start(store, "base", apply_id=first.id)
    store.finish_run(run_id, status="succeeded")
    nodes = [{"path": "base", "run_id": run_id, "cached": False, "store": "local"}]
    store.finish_apply(first.id, status="succeeded", cached_node_count=1, ran=1, nodes=nodes)
    second = store.start_apply(workflow="other", command="fork", node_count=1)

    assert [item.id for item in store.list_applies()] == [second.id, first.id]
    [done] = store.list_applies(workflow="web")
    assert (done.status, done.ran, done.cached_node_count, done.nodes) == ("succeeded", 1, 1, nodes)
    assert done.finished_at is not None
    assert [item.id for item in store.list_applies(limit=1)] == [second.id]
    assert [item.id for item in store.find_applies(short_run_id(first.id))] == [first.id]
    assert [item.id for item in store.find_applies(first.id.upper())] == [first.id]
    assert store.find_applies("not-hex") == []
    assert store.get_apply(second.id) == second
    assert [run.id for run in store.list_runs(apply_id=first.id)] == [run_id]
    assert [run.id for run in store.find_runs(short_run_id(run_id))] == [run_id]
    with pytest.raises(StateError, match="finished apply"):
        store.finish_apply(first.id, status="failed", cached_node_count=0, ran=0, nodes=[])


def test_deleting_runs_deletes_their_output_and_their_applies(store: StateStore, state_location: str) -> None:
    applies = {name: store.start_apply(workflow=name, command="apply", node_count=1) for name in ("web", "api")}
    runs = {name: _start(store, "base", apply_id=applies[name].id, workflow=name) for name in ("web", "api")}
    for run_id in runs.values():
        store.finish_run(run_id, status="succeeded", log=OutputBatch((_chunk(run_id, 0, "out\n"),)))

    assert store.delete_runs("web") == 1
    assert rows(state_location, "SELECT run_id FROM node_run_output") == [(runs["api"],)]
    assert [item.workflow for item in store.list_applies()] == ["api"]
    assert store.delete_runs() == 1
    assert rows(state_location, "SELECT run_id FROM node_run_output") == []
    assert store.list_applies() == []


def test_workspace_entries_sit_beside_the_applies_with_their_output_and_outlive_cache_clear(store: StateStore) -> None:
    applied = store.start_apply(workflow="web", command="fork", node_count=1, workspace="demo")
    store.finish_apply(applied.id, status="succeeded", cached_node_count=1, ran=0, nodes=[])
    entry = store.start_apply(workflow="web", command="op show", node_count=0, workspace="demo")
    assert entry.workspace == "demo" and entry.status == "running"
    last = OutputBatch((_chunk(entry.id, 0, "hello\n"),))
    store.finish_apply(entry.id, status="failed", cached_node_count=0, ran=0, nodes=[], error="boom", log=last)
    other = store.start_apply(workflow="web", command="rm", node_count=0, workspace="other")

    assert [item.id for item in store.list_applies()] == [applied.id]  # applies only, as timelines want
    listed = store.list_applies(entries=True)
    assert [(item.command, item.workspace) for item in listed] == [
        ("rm", "other"),
        ("op show", "demo"),
        ("fork", "demo"),
    ]
    demo = store.list_applies(workspace="demo", entries=True)
    assert [item.id for item in demo] == [entry.id, applied.id]
    assert (demo[0].status, demo[0].error) == ("failed", "boom")
    assert _text(store, entry.id) == "hello\n"

    store.delete_runs()  # cache clear: the applies go, the workspaces' history stays
    assert [item.id for item in store.list_applies(entries=True)] == [other.id, entry.id]
    assert _text(store, entry.id) == "hello\n"
