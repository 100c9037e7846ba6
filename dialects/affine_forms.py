"""Forms of affine expressions the dialects' verifiers need (no irc op here)."""

from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap


def linear_coefficients(m: AffineMap) -> list[tuple[list[int], int]] | None:
    """Per result: (coefficient of each dim, constant), when the map is linear with non-negative coefficients."""
    out = []
    for e in m.results:
        flat = _flatten(e, m.num_dims)
        if flat is None or any(c < 0 for c in flat[0]) or flat[1] < 0:
            return None
        out.append(flat)
    return out


def _flatten(e: AffineExpr, n: int) -> tuple[list[int], int] | None:
    if isinstance(e, AffineConstantExpr):
        return [0] * n, e.value
    if isinstance(e, AffineDimExpr):
        c = [0] * n
        c[e.position] = 1
        return c, 0
    if isinstance(e, AffineBinaryOpExpr) and e.kind == AffineBinaryOpKind.Add:
        a, b = _flatten(e.lhs, n), _flatten(e.rhs, n)
        if a is None or b is None:
            return None
        return [x + y for x, y in zip(a[0], b[0])], a[1] + b[1]
    if isinstance(e, AffineBinaryOpExpr) and e.kind == AffineBinaryOpKind.Mul:
        for x, k in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if isinstance(k, AffineConstantExpr) and (f := _flatten(x, n)) is not None:
                return [c * k.value for c in f[0]], f[1] * k.value
    return None
