"""The order of the slots within each layer of a level (the second step of a layered drawing): barycentre sweeps
down and up, then swaps of neighbours that remove crossings."""

from __future__ import annotations

from collections.abc import Callable

CHECK_EVERY = 512     # layers between two cancellation checks
TRANSPOSE_BELOW = 20000  # slots: bigger drawings skip the swaps of neighbours


def order_layers(layers: list[list[int]], preds: list[list[int]], succs: list[list[int]], iterations: int,
                 check: Callable[[], None]) -> None:
    """Order each layer's slots (``layers``, changed in place; ``preds``/``succs``: each slot's neighbours in the
    layers above/below). ``check`` raises when the user cancels; called every :data:`CHECK_EVERY` layers."""
    size = sum(map(len, layers))
    pos = [0.0] * size
    for layer in layers:
        for k, v in enumerate(layer):
            pos[v] = float(k)
    for _ in range(iterations):
        for lay in range(1, len(layers)):
            _sort_layer(layers, lay, preds, pos, check)
        for lay in range(len(layers) - 2, -1, -1):
            _sort_layer(layers, lay, succs, pos, check)
    for lay in range(1, len(layers)):
        _sort_layer(layers, lay, preds, pos, check)
    if size < TRANSPOSE_BELOW:
        _transpose(layers, preds, succs, pos)


def _transpose(layers: list[list[int]], preds: list[list[int]], succs: list[list[int]], pos: list[float],
               passes: int = 3) -> None:
    """Swap neighbours within a layer while that removes crossings (both sides counted)."""
    for _ in range(passes):
        improved = False
        for layer in layers:
            for k in range(len(layer) - 1):
                u, v = layer[k], layer[k + 1]
                if _crossings(v, u, preds, succs, pos) < _crossings(u, v, preds, succs, pos):
                    layer[k], layer[k + 1] = v, u
                    pos[u], pos[v] = pos[v], pos[u]
                    improved = True
        if not improved:
            return


def _crossings(left: int, right: int, preds: list[list[int]], succs: list[list[int]], pos: list[float]) -> int:
    """Crossings between the edges of ``left`` and ``right`` if ``left`` is drawn first."""
    count = 0
    for adj in (preds, succs):
        for a in adj[left]:
            pa = pos[a]
            for b in adj[right]:
                if pos[b] < pa:
                    count += 1
    return count


def _sort_layer(layers: list[list[int]], lay: int, adj: list[list[int]], pos: list[float],
                check: Callable[[], None]) -> None:
    if lay % CHECK_EVERY == 0:
        check()
    layer = layers[lay]
    if len(layer) < 2:
        return
    keys = []
    for v in layer:
        nb = adj[v]
        keys.append((sum(pos[u] for u in nb) / len(nb) if nb else pos[v], pos[v]))
    order = sorted(range(len(layer)), key=keys.__getitem__)
    new = [layer[k] for k in order]
    layers[lay] = new
    for k, v in enumerate(new):
        pos[v] = float(k)
