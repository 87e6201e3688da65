"""Graph JSON parsing: the schema read into dataclasses, each inconsistency named."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from pytvm.runtime.graph_executor import Graph, GraphNode, NodeEntry, parse_graph_json

Doc = Callable[[], dict[str, Any]]


def test_graph_reads_into_dataclasses_and_writes_back(graph_doc_factory: Doc) -> None:
    g = parse_graph_json(json.dumps(graph_doc_factory()))
    assert g.input_names == ("x", "y", "w")
    assert g.nodes[5] == GraphNode(
        "tvm_op", "split0", (NodeEntry(4, 0, 0),), "k_split2", 1, 2, False
    )
    assert g.num_entries == 9 and g.entry_id(5, 1) == 6 and g.node_of_entry(6) == 5
    assert g.heads == (NodeEntry(7, 0), NodeEntry(5, 1))
    assert g.entry_nbytes(8) == 4 * 6 * 4 and g.device_index is None
    assert parse_graph_json(g.to_json()) == g


def test_tvm_spellings_are_accepted(graph_doc_factory: Doc) -> None:
    doc = graph_doc_factory()
    doc["nodes"][3]["attr"] = doc["nodes"][3].pop("attrs")  # TVM's older key
    doc["nodes"][3]["attr"]["num_inputs"] = 2  # a number rather than text
    doc["nodes"][4]["inputs"] = [[3, 0]]  # no version
    doc["nodes"][4]["attrs"]["hash"] = "abc"
    doc["attrs"]["device_index"] = ["list_int", [1] * 9]
    doc["attrs"]["storage_num"] = ["size_t", 7]
    doc["metadata"] = {"anything": 1}
    g = parse_graph_json(json.dumps(doc))
    assert g.nodes[3].num_inputs == 2 and g.nodes[4].extra_attrs == (("hash", "abc"),)
    assert g.device_index == (1,) * 9


def _error(doc: dict[str, Any]) -> str:
    with pytest.raises(ValueError) as info:
        parse_graph_json(json.dumps(doc))
    return str(info.value)


def test_bad_references_name_the_node(graph_doc_factory: Doc) -> None:
    doc = graph_doc_factory()
    doc["nodes"][4]["inputs"] = [[30, 0, 0]]
    assert "graph node 'relu0' (#4) input 0: node id 30 is not in 0..7" in _error(doc)
    doc = graph_doc_factory()
    doc["nodes"][6]["inputs"][1] = [5, 2, 0]
    assert "graph node 'add1' (#6) input 1: output 2 of node 'split0', which has 2" in _error(doc)
    doc = graph_doc_factory()
    doc["nodes"][3]["inputs"][0] = [4, 0, 0]
    assert "'add0' (#3) input 0: reads node #4, which does not run before it" in _error(doc)
    doc = graph_doc_factory()
    doc["heads"] = [[7, 1, 0]]
    assert "heads[0]: output 1 of node 'dense0', which has 1" in _error(doc)
    doc = graph_doc_factory()
    doc["arg_nodes"] = [0, 1, 3]
    assert "graph node 'add0' (#3) is in arg_nodes but is an op" in _error(doc)
    doc = graph_doc_factory()
    doc["arg_nodes"] = [0, 1]
    assert "graph node 'w' (#2) is an input (op 'null') missing from arg_nodes" in _error(doc)
    doc = graph_doc_factory()
    doc["nodes"][1]["name"] = "x"
    assert "two argument nodes are named 'x'" in _error(doc)


def test_bad_node_attrs_name_the_node(graph_doc_factory: Doc) -> None:
    doc = graph_doc_factory()
    del doc["nodes"][4]["attrs"]["num_outputs"]
    assert "graph node 'relu0' (#4): a tvm_op needs attrs num_outputs" in _error(doc)
    doc = graph_doc_factory()
    doc["nodes"][3]["attrs"]["num_inputs"] = "3"
    assert "graph node 'add0': num_inputs is 3 but it lists 2 inputs" in _error(doc)
    doc = graph_doc_factory()
    doc["nodes"][3]["attrs"]["flatten_data"] = "yes"
    assert "'add0' (#3): attrs.flatten_data must be an integer (as text), got 'yes'" in _error(doc)
    doc = graph_doc_factory()
    doc["nodes"][3]["op"] = "relay_op"
    assert "graph node 'add0': op 'relay_op' is neither 'null' nor 'tvm_op'" in _error(doc)
    doc = graph_doc_factory()
    doc["nodes"][3]["color"] = "red"
    assert "graph node 'add0' (#3): unknown key(s) ['color']" in _error(doc)
    doc = graph_doc_factory()
    del doc["nodes"][3]["name"]
    assert "graph node None (#3): missing key 'name'" in _error(doc)


def test_bad_entry_lists_name_the_entry(graph_doc_factory: Doc) -> None:
    doc = graph_doc_factory()
    doc["attrs"]["dltype"][1][8] = "float33"
    assert "graph node 'dense0': entry 8 has unknown dtype 'float33'" in _error(doc)
    doc = graph_doc_factory()
    doc["attrs"]["shape"][1].pop()
    assert "attrs.shape has 8 items, the graph has 9 entries" in _error(doc)
    doc = graph_doc_factory()
    doc["attrs"]["storage_id"][1][4] = -1
    assert "graph node 'relu0' entry 4: storage_id -1 is negative" in _error(doc)
    doc = graph_doc_factory()
    doc["attrs"]["shape"][1][0] = [4, -8]
    assert "graph node 'x' entry 0: shape (4, -8) has a negative dimension" in _error(doc)
    doc = graph_doc_factory()
    doc["attrs"]["device_index"] = ["list_int", [1, 1, 1, 1, 12, 1, 1, 1, 1]]
    assert (
        "graph node 'dense0' entry 8: storage 4 is on device type 1 here but on device type 12 "
        "for entry 4" in _error(doc)
    )
    doc = graph_doc_factory()
    doc["node_row_ptr"] = [0, 1, 2, 3, 4, 5, 6, 8, 9]
    assert "graph node 'split0' (#5): node_row_ptr gives it 1 entries but it has 2" in _error(doc)
    doc = graph_doc_factory()
    doc["attrs"]["shape"] = ["list_int", doc["attrs"]["shape"][1]]
    assert "attrs.shape must be ['list_shape', [...]]" in _error(doc)
    doc = graph_doc_factory()
    del doc["attrs"]["dltype"]
    assert "attrs has no 'dltype'" in _error(doc)
    doc = graph_doc_factory()
    doc["attrs"]["colors"] = ["list_str", ["red"]]
    assert "unknown graph attribute 'colors'" in _error(doc)


def test_bad_documents_are_refused(graph_doc_factory: Doc) -> None:
    with pytest.raises(ValueError, match="graph JSON does not parse: Expecting"):
        parse_graph_json('{"nodes": [')
    with pytest.raises(ValueError, match="graph JSON must be an object, got list"):
        parse_graph_json("[]")
    doc = graph_doc_factory()
    del doc["heads"]
    assert "graph JSON: missing key(s) heads" in _error(doc)
    doc = graph_doc_factory()
    doc["extra"] = 1
    assert "graph JSON: unknown key(s) extra" in _error(doc)
    doc = graph_doc_factory()
    doc["arg_nodes"] = [0, 1, "2"]
    assert "graph JSON: arg_nodes[2]: expected an integer, got '2'" in _error(doc)


def test_graph_dataclasses_check_themselves() -> None:
    with pytest.raises(ValueError, match="an input node \\(op 'null'\\) has no inputs"):
        GraphNode("null", "x", (NodeEntry(0, 0),))
    with pytest.raises(ValueError, match="node_row_ptr must start at 0"):
        Graph((GraphNode("null", "x"),), (0,), (), (0,), (0,), ((1,),), ("float32",))
