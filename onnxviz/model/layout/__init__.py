"""The drawing of a graph as plain data: layers, positions, groups, labels, the scene."""
