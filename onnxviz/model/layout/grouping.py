"""The groups a scope's boxes are gathered in: its nodes' name scopes (:func:`~onnxviz.model.layout.groups.build_groups`),
or, for a big graph whose names form none, runs of nodes in file order."""

from __future__ import annotations

import numpy as np

from onnxviz.model.layout.groups import GroupTree, build_groups, group_path_of
from onnxviz.model.layout.scope import ScopeGraph

AUTO_GROUP_NODES = 5000  # above this, a graph without name scopes is shown in runs of nodes
AUTO_GROUP_SIZE = 500


class Grouping:
    """The group tree of one scope's items, and whether a renamed item stays in its group."""

    def __init__(self, graph: ScopeGraph) -> None:
        self.graph = graph
        self.plain_tree: GroupTree | None = None   # the tree of the names alone, when runs replaced it
        self._run_of = np.zeros(0, np.int64)       # then: per item, its run of nodes (-1: none)
        self._run_labels: list[str] = []
        self.tree: GroupTree = self._group_tree()

    def _group_tree(self) -> GroupTree:
        """Name-scope groups; a big graph whose names form none is split into runs of nodes instead."""
        names = self.graph.item_names()
        tree = build_groups(names)
        node_items = self.graph.node_item[self.graph.node_item >= 0]   # ascending, as the items are
        grouped = int(np.count_nonzero(tree.item_group[node_items] >= 0))
        if len(node_items) <= AUTO_GROUP_NODES or grouped >= len(node_items) / 2:
            return tree
        nodes = node_items.tolist()
        self.plain_tree = tree
        self._run_of = np.full(len(names), -1, np.int64)
        positions = self.graph.item_node
        for start in range(0, len(nodes), AUTO_GROUP_SIZE):
            run = nodes[start:start + AUTO_GROUP_SIZE]
            self._run_of[run] = len(self._run_labels)
            self._run_labels.append(f"nodes {positions[run[0]]}-{positions[run[-1]]}")  # positions, as in the file
            for i in run:
                names[i] = self._grouping_name(i, names[i])
        return build_groups(names)

    def _grouping_name(self, item: int, name: str) -> str:
        """The name the group tree is built from: in a graph split into runs of nodes, inside its run."""
        run = int(self._run_of[item]) if len(self._run_of) else -1
        return f"{self._run_labels[run]}/{name or 'node'}" if run >= 0 else name

    def in_its_group(self, item: int) -> bool:
        """Whether the item's name places it in the innermost group the tree has it in (in each tree)."""
        name = self.graph.graph.nodes[self.graph.item_node[item]].name
        trees = [(self.tree, self._grouping_name(item, name))]
        if self.plain_tree is not None:  # the runs were chosen from the plain names' tree
            trees.append((self.plain_tree, name))
        for tree, grouping_name in trees:
            g = int(tree.item_group[item])
            if group_path_of(grouping_name) != (tree.paths[g] if g >= 0 else ""):
                return False
        return True

    def group_id_of(self, node: int) -> int:
        """The innermost group holding node position ``node`` (a constant drawn in its readers' boxes: the
        group its name places it in), -1 for none."""
        if not 0 <= node < len(self.graph.node_item):
            return -1
        item = int(self.graph.node_item[node])
        if item >= 0:
            return int(self.tree.item_group[item])
        path = group_path_of(self.graph.graph.nodes[node].name)
        while path and path not in self.tree.id_of:
            path = path.rpartition("/")[0]
        return self.tree.id_of.get(path, -1)
